"""A class of students doing homework on a real class server, all at once: the recorded class.

`plan` gives each of ``n`` students (30 by default) a behaviour: a right answer; each mistake
of the catalogue that exists on their own exercise (`attention_ref.worked.mistakes`), one
student each; two mistakes together; the rounding of earlier steps carried on (right) and
answers rounded to fewer decimals than asked; a partial answer; late answers; resubmissions
(wrong then right, right then wrong, on time then late); a malformed file refused on the
student's machine (nothing sent) and one pushed past the command over REST (stored, and
graded "malformed"). `run_class` makes the accounts and the assignment, has every student
submit **concurrently** (one thread each, the same library calls as ``attnref homework
submit``), moves the due time to now, has the late ones submit, grades as the teacher, and
counts: submissions, answers on disk, grades. `expected` is what the checker says of each
student's counted answer, computed apart from the server: the gradebook must equal it.

The answers are written as a student writes them (`attention_ref.worked.answer.answer_text`:
every number to the decimals asked). Nothing here is a mock: the server, its gate, the
PostgreSQL store and the artifact files are the real ones.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import secrets
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from attention_ref.classroom.assignment import (
    ANSWER_FILE,
    ANSWER_SHA_TAG,
    Assignment,
    lateness,
    parse_due,
)
from attention_ref.classroom.gradebook import Row, Standing
from attention_ref.classroom.patience import Patience, patiently

if TYPE_CHECKING:
    from torch import Tensor

    from attention_ref.worked.answer import Problem
    from attention_ref.worked.exercise import ExerciseOptions

#: 30 students' names (accounts on the server)
NAMES: Final = ("ana", "bruno", "carla", "davi", "elisa", "fabio", "gabi", "heitor", "iris",
                "joao", "karin", "lucas", "maria", "nuno", "olga", "pedro", "quenia", "rafa",
                "sofia", "tiago", "ursula", "vitor", "wanda", "xavier", "yara", "zeca", "beto",
                "cida", "duda", "enzo")  # fmt: skip


def class_of(n: int) -> tuple[str, ...]:
    """``n`` students' names: the recorded class's 30, then ``s031``, ``s032``, …"""
    return (NAMES + tuple(f"s{i:03d}" for i in range(len(NAMES) + 1, n + 1)))[:n]


#: two mistakes made together by one student (they change different stages)
PAIR: Final = ("no_scale", "no_W_O")


@dataclass(frozen=True)
class Attempt:
    """One thing a student sends: an answer's bytes, on time or after the due time; ``via``
    says how (``"client"``: the library call ``attnref homework submit`` makes, which checks the
    file first; ``"rest"``: past the command, straight to the server's REST API)."""

    text: bytes
    late: bool = False
    via: str = "client"
    refused: bool = False  # the client must refuse it (nothing reaches the server)


@dataclass(frozen=True)
class Behaviour:
    """What one simulated student does, and why (``label``: the plan's words)."""

    student: str
    label: str
    attempts: tuple[Attempt, ...]
    mistakes: tuple[str, ...] = ()  # the diagnoses the counted answer must carry

    @property
    def stored(self) -> list[Attempt]:
        return [a for a in self.attempts if not a.refused]

    @property
    def counted(self) -> Attempt | None:
        """The latest stored attempt (the gradebook's default)."""
        return self.stored[-1] if self.stored else None


#: every step an answer may hold: the homework's, and a variant's (rotated, K/V heads)
STEPS: Final = ("Q", "Q_rot", "K", "V", "kv.K", "kv.V", "kv.K_rot", "scores", "S", "S_masked",
                "A", "H", "concat", "output")  # fmt: skip


def _write(steps: dict[Any, Tensor], prob: Problem, decimals: int, **kw: Any) -> bytes:
    import torch

    from attention_ref.worked.answer import answer_from_steps, answer_text

    steps = {k: v for k, v in steps.items() if not torch.isnan(v).any()}
    doc = answer_from_steps(steps, prob.naming, decimals, **{"keys": STEPS, **kw})
    return answer_text(doc, decimals).encode()


def _chain(prob: Problem) -> tuple[Sequence[Any], Sequence[Any]]:
    """The stages and the catalogue of the problem's attention (the homework's or a variant's)."""
    from attention_ref.worked.mistakes import CATALOGUE
    from attention_ref.worked.steps import FORWARD

    if prob.chain is None:
        return FORWARD, CATALOGUE
    return prob.chain.stages, prob.chain.catalogue


def right_answer(prob: Problem, decimals: int) -> bytes:
    """Every step, exact, written to ``decimals`` places."""
    from attention_ref.worked.steps import computed_steps

    stages, _ = _chain(prob)
    return _write(computed_steps(prob.data(), (), stages), prob, decimals)


def carried_answer(prob: Problem, decimals: int) -> bytes:
    r"""Each step computed from the earlier steps as the student wrote them (rounded to
    ``decimals``): :math:`S = \mathrm{rnd}(QK^\top)/\sqrt{d_k}`, :math:`A = \mathrm{softmax}(
    \mathrm{rnd}(\tilde S))`, :math:`H = \mathrm{rnd}(A) V`, output :math:`= \mathrm{rnd}(
    \text{concat}) W_O` (rounded at every step): right, within what the rounding carries."""
    import torch

    def rnd(t: Tensor) -> Tensor:
        return torch.where(torch.isfinite(t), torch.round(t, decimals=decimals), t)

    tr = prob.trace
    steps: dict[Any, Tensor] = {}
    hs = []
    for i in range(tr.h):
        Q, K, V = tr.Q[i], tr.K[i], tr.V[i]
        scores = Q @ K.T
        S = rnd(scores / math.sqrt(Q.shape[-1]))
        S_masked = rnd(S + tr.M) if tr.M is not None else S
        A = rnd(torch.softmax(S_masked, dim=-1))
        H = rnd(A @ V)
        steps |= {("Q", i): Q, ("K", i): K, ("V", i): V, ("scores", i): scores, ("S", i): S,
                  ("S_masked", i): S_masked, ("A", i): A, ("H", i): H}  # fmt: skip
        hs.append(H)
    concat = torch.cat(hs, dim=-1)
    steps[("concat", None)] = concat
    steps[("output", None)] = rnd(concat @ tr.W_O) if tr.W_O is not None else concat
    return _write(steps, prob, decimals)


def mistaken_answer(prob: Problem, decimals: int, names: Sequence[str]) -> bytes | None:
    """Every step as the mistakes ``names`` (of the catalogue, on this problem) make it, or
    ``None`` when one of them does not exist on this problem."""
    from attention_ref.worked.mistakes import mistakes_for
    from attention_ref.worked.steps import computed_steps

    stages, catalogue = _chain(prob)
    found = {m.name: m for m in mistakes_for(prob.data(), stages, decimals, catalogue)
             if m.rank == 0}  # fmt: skip
    if any(n not in found for n in names):
        return None
    return _write(computed_steps(prob.data(), [found[n] for n in names], stages), prob, decimals)


def slip_answer(prob: Problem, decimals: int) -> bytes:
    """Every step right but one entry of the output, off by 1 (an arithmetic slip)."""
    from attention_ref.worked.steps import computed_steps

    steps = dict(computed_steps(prob.data()))
    out = steps[("output", None)].clone()
    out[-1, 0] += 1
    steps[("output", None)] = out
    return _write(steps, prob, decimals)


def partial_answer(prob: Problem, decimals: int) -> bytes:
    """Only the projections and the scores (a student who stopped half way), right."""
    from attention_ref.worked.steps import computed_steps

    return _write(computed_steps(prob.data()), prob, decimals,
                  keys=("Q", "K", "V", "scores", "S"))  # fmt: skip


def _exercise_numbers(opt: ExerciseOptions) -> bytes:
    """The exercise's own numbers (the problem, not an answer): the client refuses them."""
    from attention_ref.worked.exercise import draw_problem

    return json.dumps(draw_problem(opt)).encode()


def plan(assignment: Assignment, students: Sequence[str]) -> list[Behaviour]:
    """Who does what (see the module docstring). Each mistake of the catalogue goes to the
    first student left whose own exercise has it; needs about 30 students for all."""
    from attention_ref.worked.answer import Problem
    from attention_ref.worked.mistakes import mistakes_for

    p = assignment.decimals
    problems = {s: Problem.of_exercise(assignment.exercises_of(s)[0]) for s in students}
    left = list(students)
    out: list[Behaviour] = []

    def take(label: str, make: Callable[[Problem], tuple[Attempt, ...] | None],
             mistakes: tuple[str, ...] = ()) -> None:  # fmt: skip
        for s in left:
            attempts = make(problems[s])
            if attempts and attempts[0].refused:  # the student's own exercise's numbers
                attempts = (Attempt(_exercise_numbers(assignment.exercises_of(s)[0]),
                                    refused=True), *attempts[1:])  # fmt: skip
            if attempts is not None:
                left.remove(s)
                out.append(Behaviour(s, label, attempts, mistakes))
                return

    def one(text: bytes | None, late: bool = False) -> tuple[Attempt, ...] | None:
        return None if text is None else (Attempt(text, late),)

    take("right", lambda pr: one(right_answer(pr, p)))
    take(
        "right, after a malformed file the client refused",
        lambda pr: (Attempt(b"", refused=True), Attempt(right_answer(pr, p))),
    )
    take("rounding carried from earlier steps", lambda pr: one(carried_answer(pr, p)))
    take(f"rounded to {p - 1} decimals", lambda pr: one(right_answer(pr, p - 1)))
    take("a partial answer (Q, K, V, scores, S)", lambda pr: one(partial_answer(pr, p)))
    kinds = sorted({m.name for pr in problems.values() for m in mistakes_for(pr.data())
                    if m.rank == 0})  # fmt: skip
    for name in kinds:
        take(f"mistake: {name}", lambda pr, n=name: one(mistaken_answer(pr, p, [n])), (name,))
    take("an arithmetic slip in the output", lambda pr: one(slip_answer(pr, p)), ("slip",))
    take(f"two mistakes: {' + '.join(PAIR)}", lambda pr: one(mistaken_answer(pr, p, PAIR)),
         PAIR)  # fmt: skip
    take("late, right", lambda pr: one(right_answer(pr, p), late=True))
    take("late, no mask", lambda pr: one(mistaken_answer(pr, p, ["no_mask"]), late=True),
         ("no_mask",))  # fmt: skip
    take("resubmitted: no scale, then right",
         lambda pr: (Attempt(mistaken_answer(pr, p, ["no_scale"]) or b""),
                     Attempt(right_answer(pr, p))))  # fmt: skip
    take("resubmitted: right, then K Qᵀ (the latest counts)",
         lambda pr: (Attempt(right_answer(pr, p)),
                     Attempt(mistaken_answer(pr, p, ["K_Qt"]) or b"")), ("K_Qt",))  # fmt: skip
    take("resubmitted: softmax over columns on time, then right but late",
         lambda pr: (Attempt(mistaken_answer(pr, p, ["softmax_columns"]) or b""),
                     Attempt(right_answer(pr, p), late=True)))  # fmt: skip
    take(
        "malformed, pushed past the command over REST",
        lambda pr: (Attempt(b'{"exercise": "not an object", "heads": 7}', via="rest"),),
    )
    while left:  # any student left over: a right answer
        take("right", lambda pr: one(right_answer(pr, p)))
    return out


@dataclass
class ClassRecord:
    """What happened: the plan, the gradebook, the counts, the expected verdicts."""

    assignment: Assignment
    behaviours: list[Behaviour]
    rows: list[Row]
    expected: dict[str, dict[str, object]]
    counts: dict[str, int]
    timings: dict[str, float]
    errors: list[str] = field(default_factory=list)

    def mismatches(self) -> list[str]:
        """Every difference between the gradebook and the checker's own verdicts."""
        out = []
        by_student = {r.student: r for r in self.rows}
        for b in self.behaviours:
            row, want = by_student.get(b.student), self.expected[b.student]
            if row is None:
                out.append(f"{b.student}: no gradebook row")
                continue
            got = {"standing": str(row.standing), "steps_right": row.steps_right,
                   "steps_given": row.steps_given, "first_wrong": row.first_wrong,
                   "diagnoses": [list(d) for d in row.diagnoses], "attempts": row.attempts,
                   "late": row.late is not None}  # fmt: skip
            for key, value in want.items():
                if got.get(key) != value:
                    out.append(f"{b.student} ({b.label}): {key} {got.get(key)!r}, "
                               f"expected {value!r}")  # fmt: skip
            named = {n for d in row.diagnoses for n in d}
            if b.mistakes and not set(b.mistakes) <= named:
                out.append(f"{b.student} ({b.label}): diagnosed {sorted(named)}, made "
                           f"{list(b.mistakes)}")  # fmt: skip
        return out

    def to_json(self) -> dict[str, object]:
        """The record for the book (``docs/results/class-homework.json``)."""
        from attention_ref.classroom.gradebook import summarize
        from attention_ref.worked.mistakes import CATALOGUE

        labels = {b.student: b.label for b in self.behaviours}
        return {
            "assignment": {"name": self.assignment.name, "salt": self.assignment.salt,
                           **self.assignment.shape()},
            "students": len(self.behaviours), "counts": self.counts, "timings": self.timings,
            "mismatches": self.mismatches(), "errors": self.errors,
            "gradebook": [{"student": r.student, "behaviour": labels.get(r.student, ""),
                           "steps_right": r.steps_right, "steps_given": r.steps_given,
                           "first_wrong": r.first_wrong, "diagnosis": r.diagnosis,
                           "attempts": r.attempts, "late": r.late_text,
                           "status": str(r.standing)} for r in self.rows],
            "summary": summarize(self.rows, [k.name for k in CATALOGUE]).to_json(),
        }  # fmt: skip


def absent_on_the_class(record: dict[str, Any], names: Sequence[str], lang: str = "en") -> str:
    """Why the catalogue's entries ``names`` were made by no student of a recorded class
    (`ClassRecord.to_json`), computed on the class's own exercises: each is either on none of
    them (with the shape's reason, where the shape gives one) or on some, and no one made it."""
    from attention_ref.classroom.gradebook import kind_of
    from attention_ref.worked.answer import Problem
    from attention_ref.worked.mistakes import CATALOGUE, mistakes_for

    info = dict(record["assignment"])
    a = Assignment(name=str(info.pop("name")), **info)  # type: ignore[arg-type]
    kinds = [k.name for k in CATALOGUE]
    students = [row["student"] for row in record["gradebook"]]
    found: dict[str, int] = dict.fromkeys(names, 0)
    for student in students:
        prob = Problem.of_exercise(a.exercises_of(student)[0])
        present = {kind_of(m.name, kinds) for m in mistakes_for(prob.data())}
        for name in names:
            found[name] += name in present
    d_k = a.d_model // a.heads
    reasons = {
        "transposed_W": {"en": f"W_Q, W_K and W_V are {a.d_model} × {d_k}, not square",
                         "pt": f"W_Q, W_K e W_V são {a.d_model} × {d_k}, não quadradas"}
        if a.d_model != d_k else None,
        "gave_dW_Ot": {"en": "the assignment asks no gradient",
                       "pt": "a tarefa não pede gradiente"} if not a.backward else None,
    }  # fmt: skip
    out = []
    for name in names:
        why = reasons.get(name)
        if found[name] == 0:
            because = f" ({why[lang]})" if why else ""
            out.append({"en": f"{name} can happen on none of the {len(students)} exercises"
                              f"{because}",
                        "pt": f"{name} não pode acontecer em nenhum dos {len(students)} "
                              f"exercícios{because}"}[lang])  # fmt: skip
        else:
            out.append({"en": f"{name} could happen on {found[name]} of the exercises; no "
                              "student made it",
                        "pt": f"{name} poderia acontecer em {found[name]} dos exercícios; "
                              "nenhum aluno o cometeu"}[lang])  # fmt: skip
    return "; ".join(out) + "." if out else ""


def expected_verdicts(assignment: Assignment, behaviours: Sequence[Behaviour]) -> dict:
    """What the checker says of each student's counted answer, computed here, apart from the
    server (the gradebook must say the same)."""
    from attention_ref.classroom.homework import Mine, check_text
    from attention_ref.worked.inputs import InputError

    out: dict[str, dict[str, object]] = {}
    for b in behaviours:
        counted = b.counted
        n = len(b.stored)
        if counted is None:
            out[b.student] = {"standing": str(Standing.MISSING), "attempts": 0}
            continue
        me = Mine(assignment, b.student, "", tuple(assignment.exercises_of(b.student)))
        try:
            _, report = check_text(counted.text, me)
        except (InputError, ValueError):
            out[b.student] = {"standing": str(Standing.MALFORMED), "steps_right": 0,
                              "attempts": n, "late": counted.late}  # fmt: skip
            continue
        first = report.first_wrong
        out[b.student] = {
            "standing": str(Standing.GRADED), "steps_right": report.steps_right,
            "steps_given": report.steps_given, "first_wrong": first.label if first else "",
            "diagnoses": [list(d) for d in report.diagnosis_names], "attempts": n,
            "late": counted.late,
        }  # fmt: skip
    return out


def _push_past_the_command(url: str, auth: tuple[str, str], name: str, text: bytes) -> None:
    """A submission made over REST without the command's checks (the gate still applies)."""
    from attention_ref.classroom.homework import _answer_path, _call, mine

    me = mine(url, auth, name)
    made = _call(url, "/api/2.0/mlflow/runs/create", {"experiment_id": me.experiment_id},
                 auth, "create", None)  # fmt: skip
    run_id = made["run"]["info"]["run_id"]
    from attention_ref.classroom.server import _checked, rest

    # a raw client that asks a busy server again, as MLflow's own clients do
    _checked(*patiently(lambda: rest(url, _answer_path(me.experiment_id, run_id), data=text,
                                     method="PUT", auth=auth), CLASS_PATIENCE),
             "upload")  # fmt: skip
    _call(url, "/api/2.0/mlflow/runs/update", {"run_id": run_id, "status": "FINISHED"}, auth,
          "finish", None)  # fmt: skip


def _send(url: str, auth: tuple[str, str], name: str, a: Attempt,
          checked: tuple[Any, int, Any] | None = None) -> str:  # fmt: skip
    """One attempt; returns what happened (``"stored"``, ``"refused"``). ``checked``: the
    check the student's command made before sending (`prepare`)."""
    from attention_ref.classroom.homework import submit
    from attention_ref.worked.inputs import InputError

    if a.via == "rest":
        _push_past_the_command(url, auth, name, a.text)
        return "stored"
    try:
        submit(url, auth, name, a.text, patience=CLASS_PATIENCE, checked=checked)
    except (InputError, ValueError):
        if a.refused:
            return "refused"
        raise
    if a.refused:
        raise AssertionError("the client stored a file it should have refused")
    return "stored"


#: how long a simulated student's command waits for a busy server: until it is served
#: (10 minutes; the command's own patience is 5): what the class's burst costs is measured
CLASS_PATIENCE = Patience(give_up_after_s=600.0)


def prepare(
    url: str, name: str, behaviours: Sequence[Behaviour], passwords: dict[str, str]
) -> dict[tuple[str, int], tuple[Any, int, Any]]:
    """``(student, attempt index) -> (their assignment, exercise, report)`` of every attempt the
    command would check before sending it (not those the command refuses, nor REST pushes)."""
    from attention_ref.classroom.homework import check_text, mine

    out: dict[tuple[str, int], tuple[Any, int, Any]] = {}
    for b in behaviours:
        me = None
        for i, a in enumerate(b.attempts):
            if a.refused or a.via == "rest":
                continue
            me = me or mine(url, (b.student, passwords[b.student]), name)
            k, report = check_text(a.text, me)
            out[(b.student, i)] = (me, k, report)
    return out


def run_class(
    url: str, admin: tuple[str, str], name: str = "attention-1", *,
    students: Sequence[str] = NAMES, salt: str | None = None, artifacts: Path | None = None,
    add: Callable[[str, str], None] | None = None,
) -> ClassRecord:  # fmt: skip
    """The whole class on the server at ``url`` (see the module docstring). ``add(name,
    password)`` makes a student's account (default: `attention_ref.classroom.server.add_student`
    into the server's class experiment); ``artifacts``: the server's artifact folder, to count
    the answers on disk."""
    from attention_ref.classroom.homework import _search_runs, _student_experiments, assign, grade
    from attention_ref.classroom.server import DEFAULT_EXPERIMENT, add_student

    passwords = {s: secrets.token_urlsafe(15) for s in students}

    def make(s: str) -> None:
        if add is None:
            add_student(url, admin, s, passwords[s], DEFAULT_EXPERIMENT)
        else:
            add(s, passwords[s])

    with ThreadPoolExecutor(max_workers=8) as pool:  # the teacher's script, a few at a time
        list(pool.map(make, passwords))
    far = parse_due((dt.datetime.now(dt.UTC) + dt.timedelta(days=7)).isoformat())
    asked = Assignment(name=name, salt=salt or secrets.token_hex(8), due=far)
    assignment = assign(url, admin, asked).assignment
    behaviours = plan(assignment, students)
    errors: list[str] = []
    timings: dict[str, float] = {}
    durations: list[float] = []  # of each `homework submit` (the command's library call)
    said_failed: list[tuple[str, str]] = []  # (student, sha256) the client said failed

    # what each student's command does on their own machine before it sends anything (reads
    # their exercise, checks the answer): done here beforehand, so that the one machine that
    # plays the whole class spends the burst on the server's work, not on a thousand checks
    checked = prepare(url, name, behaviours, passwords)

    def attempts_of(b: Behaviour, late: bool) -> list[str]:
        done = []
        for i, a in enumerate(b.attempts):
            if a.late == late:
                t = time.monotonic()
                try:
                    done.append(_send(url, (b.student, passwords[b.student]), name, a,
                                      checked.get((b.student, i))))  # fmt: skip
                except Exception as e:  # a failure is recorded, never hidden
                    errors.append(f"{b.student}: {type(e).__name__}: {e}")
                    said_failed.append((b.student, hashlib.sha256(a.text).hexdigest()))
                if a.via != "rest" and not a.refused:
                    durations.append(time.monotonic() - t)
        return done

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(behaviours)) as pool:
        on_time = list(pool.map(lambda b: attempts_of(b, False), behaviours))
    timings["on_time_s"] = round(time.monotonic() - t0, 2)
    # the due time is kept to the second: the next one, so that every answer sent so far
    # was received before it
    now = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=1)
    assignment = assign(url, admin, Assignment(name=name, due=now, salt=assignment.salt),
                        due_given=True).assignment  # fmt: skip
    assert assignment.due is not None
    wait = (assignment.due - dt.datetime.now(dt.UTC)).total_seconds() + 1.5
    time.sleep(max(wait, 0))
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(behaviours)) as pool:
        late = list(pool.map(lambda b: attempts_of(b, True), behaviours))
    timings["late_s"] = round(time.monotonic() - t0, 2)
    t0 = time.monotonic()
    graded = grade(url, admin, name)
    timings["grade_s"] = round(time.monotonic() - t0, 2)
    done = [x for run in on_time + late for x in run]
    finished = answers_on_disk = same_bytes = 0
    sent = {hashlib.sha256(a.text).hexdigest() for b in behaviours for a in b.stored}
    held: set[tuple[str, str]] = set()  # (student, sha256) of every finished submission
    for student, exp_id in _student_experiments(url, admin, name, None).items():
        for run in _search_runs(url, admin, exp_id, None):
            if run["info"]["status"] != "FINISHED":
                continue
            finished += 1
            tags = {t["key"]: t["value"] for t in run.get("data", {}).get("tags", [])}
            held.add((student, tags.get(ANSWER_SHA_TAG, "")))
            if artifacts is not None:
                path = artifacts / exp_id / run["info"]["run_id"] / "artifacts" / ANSWER_FILE
                if path.is_file():
                    answers_on_disk += 1
                    same_bytes += hashlib.sha256(path.read_bytes()).hexdigest() in sent
    counts = {
        "students": len(behaviours),
        "attempts_planned": sum(len(b.attempts) for b in behaviours),
        "stored_planned": sum(len(b.stored) for b in behaviours),
        "refused_by_the_client": done.count("refused"),
        "stored": done.count("stored"),
        "finished_runs_on_the_server": finished,
        "answers_on_disk": answers_on_disk,
        "answers_equal_to_what_was_sent": same_bytes,
        "graded_submissions": len(graded.graded),
        "gradebook_rows": len(graded.rows),
        "late_rows": sum(r.late is not None for r in graded.rows),
        "client_errors": len(said_failed),
        # the client said it failed, the server holds it finished: what a student must never read
        "told_failed_but_finished": sum(f in held for f in said_failed),
    }  # fmt: skip
    if durations:
        ordered = sorted(durations)
        timings["submit_p50_s"] = round(ordered[len(ordered) // 2], 2)
        timings["submit_p95_s"] = round(ordered[min(len(ordered) - 1,
                                                     int(0.95 * len(ordered)))], 2)  # fmt: skip
        timings["submit_max_s"] = round(ordered[-1], 2)
    expected = expected_verdicts(assignment, behaviours)
    return ClassRecord(assignment, behaviours, list(graded.rows), expected, counts, timings,
                       errors)  # fmt: skip


__all__ = ["NAMES", "Attempt", "Behaviour", "ClassRecord", "absent_on_the_class", "carried_answer",
           "class_of",
           "expected_verdicts", "lateness", "mistaken_answer", "partial_answer", "plan",
           "right_answer", "run_class", "slip_answer"]  # fmt: skip
