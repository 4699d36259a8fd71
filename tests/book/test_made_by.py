"""A recording says the command that made it, or that none was kept: never a guessed one.

``tools/record_class.py`` keeps its own command line in the record (``conditions.command``);
the pages print it with the record's other conditions (`attnref_book.claims.made_by`).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from attnref_book.claims import MADE_BY, made_by

ROOT = Path(__file__).resolve().parents[2]


def recorder():
    spec = importlib.util.spec_from_file_location("record_class", ROOT / "tools/record_class.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_record_says_its_command_or_that_it_kept_none():
    cmd = "python tools/record_class.py --students 300 docs/results/class-submit-300.json"
    assert made_by({"command": cmd}) == f"made by `{cmd}`"
    assert made_by({"command": cmd}, "pt") == f"feito por `{cmd}`"
    # a record made before commands were kept: said, not guessed
    assert made_by({}) == "the command that made it was not recorded with it"
    assert made_by({"command": ""}, "pt") == "o comando que o fez não foi registrado com ele"


def test_the_recorder_keeps_the_command_line_it_was_given():
    rc = recorder()
    script = str(ROOT / "tools" / "record_class.py")
    assert rc.command_line([script, "--students", "300", "out dir/x.json"]) == (
        "python tools/record_class.py --students 300 'out dir/x.json'"
    )
    # outside the repository, the script's own path
    assert rc.command_line(["/elsewhere/rec.py", "x.json"]) == "python /elsewhere/rec.py x.json"


#: the class records, each made since the recorder keeps its command (a record made before
#: would say it kept none: `test_a_record_says_its_command_or_that_it_kept_none`)
WITH_COMMAND = {
    "class-homework.json": "",
    "class-submit-300.json": "--students 300 ",
    "class-submit-1000.json": "--students 1000 ",
}


@pytest.mark.parametrize(
    "name", ["class-homework.json", "class-submit-300.json", "class-submit-1000.json"]
)
def test_each_class_record_names_its_own_command_or_none(name):
    conditions = json.loads((ROOT / "docs" / "results" / name).read_text())["conditions"]
    if name in WITH_COMMAND:
        assert conditions["command"] == (
            f"python tools/record_class.py {WITH_COMMAND[name]}docs/results/{name}"
        )
    else:
        assert "command" not in conditions
        assert made_by(conditions) == MADE_BY["en"][1]


def test_the_load_record_says_its_date_commit_and_server_shape_against_todays_default():
    """The teaching page's load figures were recorded with one application server, before the
    edge and today's two: the page says so (it gave neither date nor commit before)."""
    from attention_ref.classroom.hosting.server import DEFAULT_WORKERS
    from attnref_book.claims import recorded_on

    kept = json.loads((ROOT / "docs/results/class-load.json").read_text(encoding="utf-8"))
    said = recorded_on(kept)
    if "commit" not in kept:  # the record on main: made before the recorder kept them
        assert said.startswith("The record names neither its date nor its commit")
    if kept["server_workers"] != DEFAULT_WORKERS:
        assert f"now starts {DEFAULT_WORKERS} behind the edge" in said
    named = {"server_workers": DEFAULT_WORKERS, "recorded_utc": "2026-12-07 10:00 UTC"}
    named["commit"] = "abc1234"
    assert recorded_on(named) == (
        "Recorded 2026-12-07 10:00 UTC at commit abc1234, with 2 application server(s), as "
        "`attnref server start` does by default."
    )
    assert recorded_on(named | {"server_workers": 1}, "pt").endswith(
        "os números não são os do padrão de hoje."
    )
    assert recorded_on({"server_workers": 1, "recorded_utc": "x"}).startswith("The record names")


def test_every_access_and_role_of_the_gate_has_its_portuguese_words():
    """The Portuguese teaching page names the gate's accesses and roles from one table
    (`claims.ACCESS_PT`, `ROLE_PT`); a new access or role without its words fails here."""
    from attention_ref.classroom.gate.access import Access, Role
    from attnref_book.claims import ACCESS_PT, ROLE_PT

    assert {a.value for a in Access} <= set(ACCESS_PT)
    assert {r.value for r in Role} <= set(ROLE_PT)
