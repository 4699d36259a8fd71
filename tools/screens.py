"""What a teacher and a student see in an 80-column terminal, photographed: the commands of a
recorded class run for real, their output kept as text and as a picture (PNG).

Starts a class server in a temporary folder (as `tools/record_class.py` does), runs the class
on it (`attnref_book.simulated.simulate.run_class`: 30 students, the assignment, their
submissions, the teacher's grading), then runs, with ``COLUMNS=80``:

* ``attnref server grades attention-1`` and ``... --summary`` (the teacher),
* ``attnref server assign attention-1 --late-penalty 50``, then (graded again) ``server
  grades attention-1``: the policy as the teacher sets it and the gradebook under it,
* ``attnref server grades attention-1 --csv-format moodle`` and ``canvas``: the files a
  learning-management system imports, and the steps the teacher takes there,
* ``attnref homework status attention-1`` (the first student, with their account; the
  student's commands on a pseudo-terminal 80 columns wide, as a student's terminal is),
* a Portuguese assignment whose feedback is the verdicts alone (``server assign attention-pt
  --lang pt --feedback steps``): the first student's ``homework fetch attention-pt``, then, from
  the folder it wrote, ``homework submit attention-pt answer-1.json`` of an answer with the
  scaling forgotten (what the student reads, in Portuguese, without the right values),
* ``attnref check`` of a GQA+RoPE answer with the scaling forgotten, on a pseudo-terminal 80
  columns wide (the report breaks its lines at the terminal's width, not at ``COLUMNS``),
* ``attnref runs`` over a store holding one ``attnref ablation --quick`` (its three arms),

and writes ``NAME.txt`` and ``NAME.png`` for each into the folder given (Chromium draws the
text in a monospace font, 80 columns wide).

    python tools/screens.py /tmp/screens
"""

from __future__ import annotations

import html
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

ATTNREF = str(Path(sys.executable).with_name("attnref"))
CHROMIUM = os.environ.get("CHROMIUM_BINARY", "/usr/lib/chromium/chromium")
COLUMNS = 80
#: the picture's font and the pixels one line and one character take in it
FONT_PX, LINE_PX, CHAR_PX, PAD_PX = 14, 17, 8.5, 12


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def size_of(text: str, columns: int = COLUMNS) -> tuple[int, int]:
    """The picture's size in pixels: ``columns`` characters wide, one line per line."""
    lines = max(1, len(text.splitlines()))
    return int(columns * CHAR_PX) + 2 * PAD_PX, lines * LINE_PX + 2 * PAD_PX


def render(text: str, png: Path, columns: int = COLUMNS) -> Path:
    """``text`` drawn as a terminal shows it (white on black, monospace) into ``png``."""
    width, height = size_of(text, columns)
    page = png.with_suffix(".html")
    page.write_text(
        "<!doctype html><meta charset='utf-8'><style>html,body{margin:0;background:#111}"
        f"pre{{margin:0;padding:{PAD_PX}px;color:#eee;font:{FONT_PX}px/{LINE_PX}px "
        "'DejaVu Sans Mono',monospace;white-space:pre}</style><pre>" + html.escape(text) + "</pre>",
        encoding="utf-8",
    )
    subprocess.run(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    page.unlink()
    return png


def on_terminal(
    argv: list[str], env: dict[str, str], cwd: Path | None = None, columns: int = COLUMNS
) -> tuple[int, str]:
    """``argv`` run with its output on a pseudo-terminal ``columns`` wide (its own size: no
    ``COLUMNS`` in its environment): exit code and text, the terminal's escapes taken out.
    ``tests/cli/test_check_at_80.py`` runs the commands it checks at 80 columns through it."""
    import errno
    import fcntl
    import pty
    import re
    import struct
    import termios

    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, columns, 0, 0))
    env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, env=env, cwd=cwd)
    os.close(child)
    data = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError as e:  # EIO: the child closed the terminal
            if e.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        data += chunk
    os.close(main)
    text = data.decode("utf-8").replace("\r\n", "\n")
    return proc.wait(timeout=600), re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def shoot(
    name: str,
    args: list[str],
    env: dict[str, str],
    out: Path,
    cwd: Path,
    *,
    terminal: bool = False,
) -> str:
    """Run ``attnref ARGS`` at 80 columns in ``cwd`` (where ``grades`` writes its CSV); its
    output into ``out/NAME.txt`` and ``.png``. ``terminal``: on a pseudo-terminal of 80
    columns (`on_terminal`), else to a pipe with ``COLUMNS=80``."""
    env = env | {"COLUMNS": str(COLUMNS), "LINES": "30", "TERM": "xterm", "NO_COLOR": "1"}
    if terminal:
        code, said = on_terminal([ATTNREF, *args], env, cwd)
    else:
        done = subprocess.run(
            [ATTNREF, *args], env=env, capture_output=True, text=True, cwd=cwd, timeout=600
        )
        code, said = done.returncode, done.stdout + done.stderr
    text = f"$ attnref {' '.join(args)}\n" + said
    (out / f"{name}.txt").write_text(text, encoding="utf-8")
    render(text, out / f"{name}.png")
    print(f"{name}: exit {code}, {len(text.splitlines())} lines")
    return text


def gqa_answer(folder: Path) -> Path:
    """An answer to a GQA+RoPE exercise (4 query heads, 8 wide) with the scaling forgotten:
    its scores, S and A, to 3 decimals (``tests/cli/test_check_at_80.py``'s case)."""
    from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text
    from attention_ref.exercises.catalogue import mistakes_for
    from attention_ref.exercises.chain import computed_steps
    from attention_ref.exercises.exercise import ExerciseOptions

    prob = Problem.of_exercise(ExerciseOptions(seed=3, variant="gqa+rope", heads=4, d_model=8))
    d = prob.data()
    ms = [m for m in mistakes_for(d) if m.name == "no_scale"]
    doc = answer_from_steps(computed_steps(d, ms), prob.naming, keys=("scores", "S", "A"))
    path = folder / "answer-gqa.json"
    path.write_text(answer_text(doc, 3), encoding="utf-8")
    return path


def forgot_the_scale(url: str, account: tuple[str, str], name: str) -> bytes:
    """The student's own answer to ``name`` with the scaling forgotten (every step, to the
    decimals asked), as the recorded class writes its ``no_scale`` student's."""
    from attention_ref.classroom.connection.class_client import ClassClient
    from attention_ref.classroom.coursework.student_answers import mistaken_answer
    from attention_ref.classroom.exchange.fetch import mine
    from attention_ref.exercises.answer import Problem

    me = mine(ClassClient(url, account), name)
    text = mistaken_answer(
        Problem.of_exercise(me.exercises[0]), me.assignment.decimals, ["no_scale"]
    )
    if text is None:
        raise SystemExit(f"{account[0]}'s exercise has no scaling to forget")
    return text


def main(out: Path) -> int:
    from attention_ref.classroom.connection.accounts import add_student
    from attention_ref.classroom.hosting.server import DEFAULT_EXPERIMENT, ClassServer
    from attnref_book.simulated.simulate import run_class

    out = out.resolve()  # the pictures are drawn from file URIs, which are absolute
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="attnref-screens-"))
    root.chmod(0o711)  # as root, PostgreSQL runs as `postgres` and must enter it
    base = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING_")}
    try:
        store = f"sqlite:///{root / 'runs.db'}"
        trained = base | {"MLFLOW_TRACKING_URI": store}
        subprocess.run(
            [ATTNREF, "ablation", "--quick"],
            env=trained,
            cwd=root,
            check=True,
            capture_output=True,
            timeout=600,
        )
        shoot("runs", ["runs"], trained, out, root)
        shoot("check-gqa", ["check", gqa_answer(root).name], base, out, root, terminal=True)
        passwords: dict[str, str] = {}
        server = ClassServer(root / "class", secrets.token_urlsafe(18), port=free_port(), workers=2)
        with server:

            def add(name: str, password: str) -> None:
                passwords[name] = password
                add_student(server.url, server.admin, name, password, DEFAULT_EXPERIMENT)

            run_class(server.url, server.admin, artifacts=server.artifacts, add=add)
            teacher = base | {
                "MLFLOW_TRACKING_URI": server.url,
                "ATTNREF_ADMIN_PASSWORD": server.admin[1],
            }
            shoot("server-grades", ["server", "grades", "attention-1"], teacher, out, root)
            shoot(
                "server-grades-summary",
                ["server", "grades", "attention-1", "--summary"],
                teacher,
                out,
                root,
            )
            # the teacher sets a late penalty after the due time, grades again: the late rows
            # lose their share of the points, and the late column says how much
            shoot(
                "server-assign-late-penalty",
                ["server", "assign", "attention-1", "--late-penalty", "50"],
                teacher,
                out,
                root,
            )
            subprocess.run(
                [ATTNREF, "server", "grade", "attention-1"],
                env=teacher,
                cwd=root,
                check=True,
                capture_output=True,
                timeout=600,
            )
            shoot(
                "server-grades-late-penalty",
                ["server", "grades", "attention-1"],
                teacher,
                out,
                root,
            )
            # the grades as Moodle and Canvas import them: the file, and the steps to take
            for system in ("moodle", "canvas"):
                shoot(
                    f"server-grades-{system}",
                    # the recorded class has no roster: its account names are the LMS's
                    ["server", "grades", "attention-1", "--csv-format", system, "--account-names"],
                    teacher,
                    out,
                    root,
                )
            first = sorted(passwords)[0]
            student = base | {
                "MLFLOW_TRACKING_URI": server.url,
                "MLFLOW_TRACKING_USERNAME": first,
                "MLFLOW_TRACKING_PASSWORD": passwords[first],
            }
            shoot(
                "homework-status",
                ["homework", "status", "attention-1"],
                student,
                out,
                root,
                terminal=True,
            )
            # in Portuguese, the verdicts alone: fetch, then submit from the folder fetch wrote
            in_portuguese = ["attention-pt", "--lang", "pt", "--feedback", "steps"]
            subprocess.run(
                [ATTNREF, "server", "assign", *in_portuguese],
                env=teacher,
                cwd=root,
                check=True,
                capture_output=True,
                timeout=600,
            )
            home = root / first
            home.mkdir()
            shoot(
                "homework-fetch-pt",
                ["homework", "fetch", "attention-pt"],
                student,
                out,
                home,
                terminal=True,
            )
            folder = home / "attention-pt"
            (folder / "answer-1.json").write_bytes(
                forgot_the_scale(server.url, (first, passwords[first]), "attention-pt")
            )
            shoot(
                "homework-submit-pt",
                ["homework", "submit", "attention-pt", "answer-1.json"],
                student,
                out,
                folder,
                terminal=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    sys.exit(main(parser.parse_args().out))
