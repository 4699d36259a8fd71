"""Issue 59: a feature is one object. No code outside a feature's own module decides by it.

Each feature (grouped K/V heads, a window, RoPE) is one module, ``feature_<name>.py``, whose
object (`attention_ref.exercises.features.Feature`) owns its options, steps, chain stages,
mistakes and words; `attention_ref.exercises.feature_table.TABLE` is the one table, and the
code around iterates over a problem's features. The count reads the source's syntax tree of
``exercises/``, ``classroom/`` and the CLI, the features' own modules left out: a read of a
feature's flag (``f.grouped``, ``d.rope``), a feature's number tested for ``None``
(``tr.window is None``, ``opt.kv_heads is not None``), a feature named by keyword
(``Features(rotary=True)``, ``with_(windowed=True)``). Before this issue there were 87.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attention_ref.exercises.feature_table import TABLE, active, words_of
from attention_ref.exercises.features import FEATURES, PROBLEMS, Feature, Features
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.exercises.words import SLOTS, TEXT
from attention_ref.render import LANGS

ROOT = Path(__file__).resolve().parents[2]
#: a feature's flag, as `Features` and the chain's data had them
FLAGS = frozenset({"grouped", "windowed", "rotary", "rope"})
#: a feature's own number, on a problem's trace or options
NUMBERS = frozenset({"window", "rope_base", "kv_heads"})


def decisions(source: str) -> list[tuple[int, str]]:
    """Each place the source decides by a feature: (line, what)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in FLAGS
            and isinstance(node.ctx, ast.Load)
        ):
            found.append((node.lineno, f"reads .{node.attr}"))
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, ast.Is | ast.IsNot) for op in node.ops
        ):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Attribute) and side.attr in NUMBERS:
                    found.append((node.lineno, f"tests .{side.attr} for None"))
        elif isinstance(node, ast.keyword) and node.arg in FLAGS:
            found.append((node.value.lineno, f"names {node.arg}="))
    return found


def own_module(path: Path) -> bool:
    """A feature's own module, or the features' names and presets."""
    return path.name == "features.py" or path.name.startswith("feature_")


def test_the_count_finds_each_kind_of_decision():
    """The control: what the code had before this issue, each found; data and a feature's
    object, not."""
    refused = {
        "if f.grouped:\n    pass": "reads .grouped",
        "q = 'Q_rot' if d.rope else 'Q'": "reads .rope",
        "if tr.window is not None:\n    pass": "tests .window for None",
        "x = self.rope_base is None": "tests .rope_base for None",
        "f = f.with_(windowed=self.window is not None)": "names windowed=",
        "Features(rotary=True)": "names rotary=",
    }
    for source, what in refused.items():
        assert what in [w for _, w in decisions(source)], source
    kept = (
        "for feat in active(f):\n    w |= feat.said(lang, opt)",
        'p["window"] = 2',
        "if feat.separate_kv:\n    pass",
        "x = tr.M is None",
    )
    for source in kept:
        assert decisions(source) == [], source


@pytest.mark.parametrize("folder", ["attention_ref/exercises", "attention_ref/classroom", "cli"])
def test_no_code_outside_a_features_module_decides_by_a_feature(folder):
    found = {
        str(path.relative_to(ROOT)): hits
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not own_module(path) and (hits := decisions(path.read_text(encoding="utf-8")))
    }
    assert found == {}, found


def test_every_feature_is_one_object_in_the_one_table():
    assert tuple(TABLE) == FEATURES
    for name, feat in TABLE.items():
        assert isinstance(feat, Feature) and feat.name == name
        assert (ROOT / "attention_ref" / "exercises" / f"feature_{name}.py").is_file()
        assert type(feat).__module__ == f"attention_ref.exercises.feature_{name}"
        # its words in every language, the same keys in each; its mistakes its own
        keys = [set(feat.words[lang]) for lang in LANGS]
        assert all(k == keys[0] for k in keys), name
        assert feat.kinds and set(feat.kinds_words) == set(LANGS), name
    names = [k.name for feat in TABLE.values() for k in feat.kinds]
    assert len(names) == len(set(names))


def test_a_features_words_fill_the_homeworks_slots_and_the_first_feature_wins():
    """`words_of`: the homework's words where no feature writes over them; ``gqa+rope`` is
    titled by gqa (the first), and reads RoPE's ``Q_rot`` in gqa's grouped sentence."""
    plain = ExerciseOptions()
    assert words_of(Features(), "en", plain) == TEXT["en"]
    opt = ExerciseOptions(variant="gqa+rope", heads=4, d_model=8)
    w = words_of(opt.features, "en", opt)
    assert w["title"] == TABLE["gqa"].words["en"]["title"] != TABLE["rope"].words["en"]["title"]
    assert (w["q"], w["kv"]) == ("Q_rot", "⁽ʲ⁾")
    for lang in LANGS:
        assert set(SLOTS) <= set(TEXT[lang])  # every slot has the homework's words


@pytest.mark.parametrize("name", PROBLEMS)
def test_each_problem_iterates_its_features_in_their_order(name):
    f = Features.parse(name)
    assert tuple(feat.name for feat in active(f)) == f.on()
