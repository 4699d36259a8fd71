"""The class's landing page leads to the gradebooks, and the welcome says how the class stops.

The description of the class experiment (the page the UI's root sends everyone to) links each
assignment's gradebook, newest first, in the gradebook's view, with a line saying what it is:
`attention_ref.classroom.exchange.landing`, written by ``assign`` and by the welcome of
``server start``; what a teacher wrote there before it is kept; names are code, never markup.
The welcome points a teacher there; started with ``--detach``, it says ``attnref server stop
DIR`` stops the class (no terminal: Ctrl-C stops nothing), a foreground start says Ctrl-C.
The browser's side (the link followed) is `tests/classroom/test_ui.py`'s.
"""

from __future__ import annotations

import secrets
import shutil

import pytest
from markdown_it import MarkdownIt

from attention_ref.classroom.connection.class_client import ClassClient, tag_map
from attention_ref.classroom.connection.client import class_experiment_id, healthy
from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.gradebook import VIEW
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange.landing import (
    END,
    HEADING,
    Gradebook,
    gradebooks,
    kept_text,
    landing_experiment,
    landing_note,
    update_landing,
)
from attention_ref.cli.server_start import DETACHED_ENV, print_welcome
from attention_ref.experiments.names import Tag
from tests.classroom.conftest import EXPERIMENT, class_dir, free_port

pytestmark = pytest.mark.slow


def book(name: str, exp_id: str, created: int = 0) -> Gradebook:
    return Gradebook(Assignment(name=name), exp_id, created)


def test_the_landing_note_links_each_gradebook_in_its_view_names_as_code():
    books = [book("hw_2", "12", 2), book("hw_1", "7", 1)]
    note = landing_note(books)
    first = note.splitlines()[0]
    assert first.startswith(HEADING) and first.index("hw_2") < first.index("hw_1")
    html = MarkdownIt().render(note)
    query = f"workflowType=machine_learning&amp;viewStateShareKey={VIEW}"
    assert html.count(f'href="#/experiments/12/runs?{query}"') == 2  # first line, own item
    assert html.count("<code>hw_2</code>") == 3 and "<em>" not in html  # names: as written
    assert "the gradebook of the assignment <code>hw_1</code>" in html
    assert "<code>attnref server grades hw_1</code> prints it" in html


def test_the_gradebooks_come_first_and_what_a_teacher_wrote_is_kept_after_them():
    theirs = "Welcome to the **attention** class.\n\nOffice hours: Tuesdays."
    once = landing_note([book("a", "3")], theirs)
    assert once.startswith(HEADING) and once.endswith(END + theirs)
    assert kept_text(once) == theirs
    twice = landing_note([book("b", "4"), book("a", "3")], kept_text(once))
    assert twice.endswith(END + theirs) and twice.count(HEADING) == 1
    assert "(#/experiments/4/" in twice.splitlines()[0]
    assert kept_text(landing_note([book("a", "3")])) == ""
    assert landing_note([], kept_text(twice)) == theirs  # no gradebook left: no part
    # a teacher's words written above the part in the UI are kept too, after it
    above = "Read me first.\n\n" + twice
    assert kept_text(above) == "Read me first.\n\n" + theirs
    assert kept_text(theirs) == theirs  # the control: a note without the part is all kept


def class_note(client: ClassClient, exp_id: str) -> str:
    found = client.call(
        "/api/2.0/mlflow/experiments/get",
        method="GET",
        query={"experiment_id": exp_id},
        what="read",
    )
    return tag_map(found["experiment"]).get(str(Tag.NOTE), "")


def test_assign_links_its_gradebook_on_the_class_experiments_page(server, students):
    admin = ClassClient(server.url, server.admin)
    class_id = class_experiment_id(server.url, server.admin, EXPERIMENT)
    assert landing_experiment(admin) == class_id  # where the UI's root sends the browser
    theirs = "Welcome to the class."
    admin.call(
        "/api/2.0/mlflow/experiments/set-experiment-tag",
        {"experiment_id": class_id, "key": str(Tag.NOTE), "value": theirs},
        what="describe",
    )
    first = assigning.assign(admin, Assignment(name="land-1"))
    second = assigning.assign(admin, Assignment(name="land-2", exercises=2))
    note = class_note(admin, class_id)
    assert note.startswith(HEADING) and note.endswith(END + theirs)  # the links on top
    newest = note.splitlines()[0]
    at_1 = newest.index(f"(#/experiments/{first.gradebook_id}/runs?")
    assert newest.index(f"(#/experiments/{second.gradebook_id}/runs?") < at_1
    assert "`land-2` (experiment `homework/land-2`), 2 exercises each, no due time" in note
    ids = [b.experiment_id for b in gradebooks(admin)]
    assert ids.index(second.gradebook_id) < ids.index(first.gradebook_id)
    # the control: a note changed by hand is written again by the next assign
    admin.call(
        "/api/2.0/mlflow/experiments/set-experiment-tag",
        {"experiment_id": class_id, "key": str(Tag.NOTE), "value": theirs},
        what="describe",
    )
    assigning.assign(admin, Assignment(name="land-1"))
    assert class_note(admin, class_id) == note
    # a student reads that page, and no gradebook through it (listing them is the teacher's)
    alice = ClassClient(server.url, ("alice", students["alice"]))
    assert landing_experiment(alice) == class_id
    assert gradebooks(alice) == []
    assert update_landing(admin, class_id)[0].experiment_id == second.gradebook_id


def test_the_welcome_points_to_the_gradebooks_and_says_ctrl_c(server, capsys, monkeypatch):
    done = assigning.assign(ClassClient(server.url, server.admin), Assignment(name="land-w"))
    monkeypatch.delenv(DETACHED_ENV, raising=False)
    print_welcome(server)
    said = capsys.readouterr().out
    assert "its top links each assignment's gradebook" in said
    assert "gradebooks:     " in said and "land-w" in said
    view = f"/#/experiments/{done.gradebook_id}/runs?workflowType=machine_learning"
    assert f"\n    {server.public_url}{view}&viewStateShareKey={VIEW}\n" in said  # the newest
    assert f"Ctrl-C (or attnref server stop {server.root}) stops the edge" in said
    assert f"time zone: {server.timezone} (now " in said  # the class's (issue 58)
    # the control: in a start in the background, the same welcome names the stop command
    monkeypatch.setenv(DETACHED_ENV, "1")
    print_welcome(server)
    said = capsys.readouterr().out
    assert "Ctrl-C" not in said
    assert f"It runs in the background: attnref server stop {server.root} stops the edge" in said


@pytest.mark.soak
def test_a_detached_start_says_attnref_server_stop_stops_it_not_ctrl_c():
    from tests.classroom.test_lifecycle import admin_env, attnref

    root = class_dir("attnref-detach-")
    folder, port = root / "class", free_port()
    try:
        started = attnref(
            "server",
            "start",
            str(folder),
            *("--port", str(port), "--workers", "1", "--detach"),
            *("--timezone", "America/Sao_Paulo"),  # passed on to the start in the background
            env=admin_env(secrets.token_urlsafe(18)),
        )
        assert started.returncode == 0, started.stdout + started.stderr
        out = " ".join(started.stdout.split())  # lines broken anywhere, words whole
        stop = f"It runs in the background: attnref server stop {folder} stops the edge, the"
        assert stop in out and "Ctrl-C" not in out, started.stdout
        assert "gradebooks: none yet (each assignment's is linked at the top of that page)" in out
        assert "time zone: America/Sao_Paulo (now UTC-03:00)" in out
        assert stop in " ".join((folder / "start.log").read_text().split())
        assert healthy(f"http://127.0.0.1:{port}")
    finally:
        stopped = attnref("server", "stop", str(folder))
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    shutil.rmtree(root, ignore_errors=True)
