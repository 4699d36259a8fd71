"""One registry of worked examples: every name explains, an unknown one lists the names."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from attention_ref.worked.registry import (
    DEFAULT_EXAMPLE,
    EXAMPLE_NAMES,
    EXAMPLES,
    check_example,
    explain_example,
)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_explains(name):
    expl = explain_example(name)
    assert expl.sections and expl.data
    assert all(sec.title for sec in expl.sections)


def test_unknown_example_lists_valid_names():
    with pytest.raises(ValueError, match="life-is-awesome, hello-shiny-sun"):
        explain_example("nope")


def test_the_error_lists_every_registered_name_in_order():
    with pytest.raises(ValueError) as err:
        check_example("life-is-boring")
    assert str(err.value) == (
        "unknown example 'life-is-boring'; choose one of: "
        "life-is-awesome, hello-shiny-sun, your-journey-starts, i-want-pizza, gqa, rope, "
        "window, alibi, kv-cache, online-softmax"
    )
    assert check_example("i-want-pizza") == "i-want-pizza"


def test_names_are_the_registry_keys_and_each_module_explains():
    assert tuple(EXAMPLES) == EXAMPLE_NAMES
    assert DEFAULT_EXAMPLE in EXAMPLES
    for path in EXAMPLES.values():
        assert callable(importlib.import_module(path).explain), path


def test_registry_explains_with_the_module_of_its_name():
    from attention_ref.worked import i_want_pizza

    assert explain_example("i-want-pizza") == i_want_pizza.explain()


def test_importing_the_registry_and_inputs_leaves_torch_out():
    code = (
        "import sys, attention_ref.worked, attention_ref.worked.registry, "
        "attention_ref.inputs.attention_input; "
        "bad = [m for m in ('torch', 'mlflow', 'attention_ref.reference') if m in sys.modules]; "
        "print(','.join(bad) or 'clean')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "clean"


def test_explaining_an_example_does_import_torch():
    # the check above can fail: the same probe sees torch once an example is explained
    code = (
        "import sys; from attention_ref.worked.registry import explain_example; "
        "explain_example('life-is-awesome'); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_one_name_for_the_window_the_old_one_refused_with_the_new():
    """Issue 59, one vocabulary: the example is ``window`` as in ``exercise --variant window``
    and ``train --window``; ``sliding-window`` is refused in one line that names it, in the
    student's language. The control: an unknown name still lists every name."""
    assert check_example("window") == "window"
    for lang, words in (("en", "is called 'window' now"), ("pt", "agora se chama 'window'")):
        with pytest.raises(ValueError) as err:
            check_example("sliding-window", lang)
        assert words in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="choose one of"):
        check_example("sliding")
