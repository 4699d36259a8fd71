"""Grading padded answers against plain ones (issue 57, finding 4): the grader's own function.

Run (a quiet machine: no test suite, no helper)::

    .venv/bin/python benchmarks/padded_answers.py docs/results/padded-answers.json
    .venv/bin/python benchmarks/padded_answers.py --students 20 /tmp/smoke.json

``server grade`` reads each stored answer with
`attention_ref.classroom.exchange.answers.check_answer`; this script calls that function on
``--students`` right answers (one per student, the assignment's first exercise) and on the same
answers with every number padded by ``--zeros`` zeros (a right answer still: ``0.123`` →
``0.123000…``), and times each list. What it moves out of the timed part: drawing the
exercises and writing the answers, and the server's reading of the stored files (the same for
both lists). A padded answer is refused by the one JSON loader (a number of more than
`attention_ref.inputs.jsonfile.MAX_NUMBER_CHARS` characters): the script counts the answers
graded and refused in each list. The 1-minute load average is read before each part.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import time
from pathlib import Path

from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.student_answers import right_answer
from attention_ref.classroom.exchange.answers import check_answer
from attention_ref.exercises.answer import Problem

_NUMBER = re.compile(rb"(?<![\w.])(-?\d+\.\d+)")


def padded(text: bytes, zeros: int) -> bytes:
    """``text`` with every decimal number padded by ``zeros`` zeros (the same values)."""
    return _NUMBER.sub(lambda m: m.group(1) + b"0" * zeros, text)


def grade_all(answers: list[tuple[bytes, list]], assignment: Assignment) -> dict[str, float]:
    """Time `check_answer` over ``answers``; how many were graded and refused."""
    graded = refused = 0
    load = os.getloadavg()[0]
    start = time.perf_counter()
    for text, exercises in answers:
        try:
            check_answer(text, assignment, exercises)
            graded += 1
        except ValueError:  # InputError / HomeworkError: one line, as the gradebook shows it
            refused += 1
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 3), "graded": graded, "refused": refused, "load_1m": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--zeros", type=int, default=4000)
    args = parser.parse_args()
    assignment = Assignment(name="padded", salt="5eed0f0a77e47104")
    plain = []
    for i in range(args.students):
        exercises = assignment.exercises_of(f"s{i:03d}")
        text = right_answer(Problem.of_exercise(exercises[0]), assignment.decimals)
        plain.append((text, exercises))
    pad = [(padded(t, args.zeros), e) for t, e in plain]
    sizes = [len(t) for t, _ in plain], [len(t) for t, _ in pad]
    result = {
        "students": args.students,
        "zeros": args.zeros,
        "answer_bytes": {"plain": max(sizes[0]), "padded": max(sizes[1])},
        "plain": grade_all(plain, assignment),
        "padded": grade_all(pad, assignment),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
