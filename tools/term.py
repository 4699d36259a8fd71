"""A term of teaching, run for real on a class server and photographed at 80 columns.

Issue 58's "Done when": a class under a time zone (``server start --timezone
America/Sao_Paulo``), its students imported from a Moodle participants download and a Canvas
gradebook export (``server add-students --roster``), an assignment in Portuguese whose due time
is typed in the class's zone and moved twice and whose late penalty changes, students who
submit a partial answer, one more attempt than the policy allows, and an answer late by a
minute; then the teacher grades and exports for Moodle and Canvas. Every command runs as the
teacher or a student types it (``attnref ...`` in a subprocess, the students' on a
pseudo-terminal 80 columns wide, the teacher's with ``COLUMNS=80``), and what it prints is kept
as ``term-NAME.txt`` (and, with ``--png``, a picture) in the folder given.

`run_term` is what ``tests/classroom/test_term.py`` runs and checks;

    python tools/term.py docs/results/screens --png

records the screens the teaching page shows.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tools"):
    if str(path) not in sys.path:  # run as a script from anywhere
        sys.path.insert(0, str(path))

from screens import ATTNREF, COLUMNS, free_port, on_terminal, render  # noqa: E402

ZONE = "America/Sao_Paulo"
NAME = "atencao-1"
#: Moodle's participants download (English headers), as the site writes it
MOODLE_ROSTER = (
    "\ufeffFirst name,Last name,Email address\n"
    "Ana,Souza,ana.souza@uni.example.br\n"
    "Bruno,Lima,bruno.lima@uni.example.br\n"
    "Carla,Costa,carla.costa@uni.example.br\n"
    "Davi,Dias,davi.dias@uni.example.br\n"
)
#: the same class in Canvas's gradebook export (its grades go there too): the Points
#: Possible row and the test student of Student View are skipped; the SIS Login IDs make the
#: same accounts, which gain their Canvas identifiers
CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Atividade 0 (311)\n"
    "    Points Possible,,,,,10\n"
    '"Souza, Ana",101,2020001,ana.souza,Turma A,9\n'
    '"Lima, Bruno",102,2020002,bruno.lima,Turma A,\n'
    '"Costa, Carla",103,2020003,carla.costa,Turma A,10\n'
    '"Dias, Davi",104,2020004,davi.dias,Turma A,\n'
    '"Student, Test",999,,,Turma A,\n'
)


@dataclass
class Term:
    """What the term left: each screen's text by name, the class's URL and folder, the
    students' passwords, and the files the teacher exported."""

    url: str = ""
    screens: dict[str, str] = field(default_factory=dict)
    codes: dict[str, int] = field(default_factory=dict)
    passwords: dict[str, str] = field(default_factory=dict)
    exports: dict[str, str] = field(default_factory=dict)
    late_by: float = 0.0  # seconds bruno.lima's answer came after the final due time


def _local(when: dt.datetime) -> str:
    """``when`` as a teacher in the class's zone types it: no zone, to the second."""
    from zoneinfo import ZoneInfo

    return when.astimezone(ZoneInfo(ZONE)).strftime("%Y-%m-%dT%H:%M:%S")


def run_term(work: Path, out: Path, *, png: bool = False, wait_s: float = 65.0) -> Term:
    """The term in folder ``work`` (the class server's folder and the people's), its screens
    into ``out``; ``wait_s``: how long after the on-time answers the late one comes."""
    from attention_ref.classroom.connection.class_client import ClassClient
    from attention_ref.classroom.coursework.student_answers import partial_answer, right_answer
    from attention_ref.classroom.exchange.fetch import mine
    from attention_ref.classroom.hosting.server import ClassServer
    from attention_ref.exercises.answer import Problem

    out = out.resolve()  # the pictures are drawn from file URIs, which are absolute
    out.mkdir(parents=True, exist_ok=True)
    term = Term()
    # the machine's environment without anyone's MLflow account or attnref setting (the data's
    # path kept)
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MLFLOW_TRACKING_", "ATTNREF_")) or k == "ATTNREF_DATA"
    }
    base |= {"LANG": "pt_BR.UTF-8", "TERM": "xterm", "NO_COLOR": "1", "TZ": "UTC"}
    server = ClassServer(
        work / "class", secrets.token_urlsafe(18), port=free_port(), workers=1, timezone=ZONE
    )
    with server:
        term.url = url = server.url
        teacher = base | {"MLFLOW_TRACKING_URI": url, "ATTNREF_ADMIN_PASSWORD": server.admin[1]}
        desk = work / "teacher"
        desk.mkdir()

        def shot(name: str, args: list[str], env: dict[str, str], cwd: Path, *, tty: bool) -> str:
            if tty:
                code, said = on_terminal([ATTNREF, *args], env, cwd)
            else:
                done = subprocess.run(
                    [ATTNREF, *args],
                    env=env | {"COLUMNS": str(COLUMNS), "LINES": "30"},
                    capture_output=True,
                    text=True,
                    cwd=cwd,
                    timeout=600,
                )
                code, said = done.returncode, done.stdout + done.stderr
            text = f"$ attnref {' '.join(args)}\n" + said
            term.screens[name], term.codes[name] = text, code
            (out / f"term-{name}.txt").write_text(text, encoding="utf-8")
            if png:
                render(text, out / f"term-{name}.png")
            return text

        def teach(name: str, *args: str) -> str:
            return shot(name, ["server", *args], teacher, desk, tty=False)

        # the class from its rosters: Moodle's download and Canvas's export, as they are
        (desk / "moodle-participants.csv").write_text(MOODLE_ROSTER, encoding="utf-8")
        (desk / "canvas-gradebook.csv").write_text(CANVAS_ROSTER, encoding="utf-8")
        for system, file in (
            ("moodle", "moodle-participants.csv"),
            ("canvas", "canvas-gradebook.csv"),
        ):
            teach(
                f"add-students-{system}",
                "add-students",
                "--roster",
                file,
                "--passwords",
                "passwords.csv",
            )
        import csv

        with (desk / "passwords.csv").open(encoding="utf-8") as f:
            term.passwords = {r["account"]: r["password"] for r in csv.DictReader(f)}

        # an assignment in Portuguese, due in the class's zone; moved, its penalty changed
        teach(
            "assign",
            "assign",
            NAME,
            "--exercises",
            "2",
            "--lang",
            "pt",
            "--due",
            "2026-12-20T23:59",
            "--late-penalty",
            "10",
            "--attempts",
            "2",
        )
        teach("assign-move-due", "assign", NAME, "--due", "2026-12-22T23:59")
        teach("assign-penalty", "assign", NAME, "--late-penalty", "20")

        def student(who: str) -> dict[str, str]:
            return base | {
                "MLFLOW_TRACKING_URI": url,
                "MLFLOW_TRACKING_USERNAME": who,
                "MLFLOW_TRACKING_PASSWORD": term.passwords[who],
            }

        def answers(who: str, folder: Path, partial: int = 0) -> None:
            me = mine(ClassClient(url, (who, term.passwords[who])), NAME)
            for k, opt in enumerate(me.exercises, start=1):
                write = partial_answer if k == partial else right_answer
                text = write(Problem.of_exercise(opt), me.assignment.decimals)
                (folder / f"answer-{k}.json").write_bytes(text)

        def submit_both(name: str, who: str, folder: Path) -> str:
            files = ["answer-1.json", "answer-2.json"]
            return shot(name, ["homework", "submit", NAME, *files], student(who), folder, tty=True)

        homes = {}
        for who in ("ana.souza", "bruno.lima", "carla.costa"):
            homes[who] = work / who
            homes[who].mkdir()
        shot(
            "fetch", ["homework", "fetch", NAME], student("ana.souza"), homes["ana.souza"], tty=True
        )
        for who in ("bruno.lima", "carla.costa"):
            on_terminal([ATTNREF, "homework", "fetch", NAME], student(who), homes[who])
        # ana: exercise 1 half done (its projections and scores, right), exercise 2 whole
        folder = homes["ana.souza"] / NAME
        answers("ana.souza", folder, partial=1)
        submit_both("submit-partial", "ana.souza", folder)
        # carla: exercise 1 three times, where the policy allows two
        folder = homes["carla.costa"] / NAME
        answers("carla.costa", folder)
        for _attempt in (1, 2):
            on_terminal(
                [ATTNREF, "homework", "submit", NAME, "answer-1.json"],
                student("carla.costa"),
                folder,
            )
        shot(
            "submit-over-attempts",
            ["homework", "submit", NAME, "answer-1.json"],
            student("carla.costa"),
            folder,
            tty=True,
        )
        on_time = dt.datetime.now(dt.UTC)
        # bruno: both right, a minute after the others; then the due time moves before him
        time.sleep(wait_s)
        folder = homes["bruno.lima"] / NAME
        answers("bruno.lima", folder)
        before = dt.datetime.now(dt.UTC)
        submit_both("submit-late", "bruno.lima", folder)
        due = (on_time + dt.timedelta(seconds=2)).replace(microsecond=0)
        term.late_by = (before - due).total_seconds()
        teach("assign-due-before-bruno", "assign", NAME, "--due", _local(due))
        teach("grade", "grade", NAME)
        teach("grades", "grades", NAME)
        for system in ("moodle", "canvas"):
            teach(f"grades-{system}", "grades", NAME, "--csv-format", system)
            path = desk / f"{NAME}-{system}.csv"
            term.exports[system] = path.read_text(encoding="utf-8") if path.exists() else ""
        for who in ("ana.souza", "bruno.lima", "carla.costa"):
            shot(
                f"status-{who.split('.')[0]}",
                ["homework", "status", NAME],
                student(who),
                homes[who],
                tty=True,
            )
    return term


if __name__ == "__main__":
    import argparse
    import shutil
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--png", action="store_true", help="a picture of each screen too")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="attnref-term-"))
    work.chmod(0o711)  # as root, PostgreSQL runs as `postgres` and must enter it
    try:
        done = run_term(work, args.out, png=args.png)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(done.screens)} screens in {args.out}; the late answer {done.late_by:.0f} s late")
