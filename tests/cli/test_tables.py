"""Tables at 80 columns: the cells a reader came for are whole, the rest left out with a note."""

from __future__ import annotations

import datetime as dt
import io

from rich.console import Console

from attention_ref.cli.tables import Column, fit, print_table

RUN_ID = "5e413835300146fdab11923aa0c1d2e3"
URL = "http://127.0.0.1:5000/#/experiments/1?workflowType=machine_learning"
COLUMNS = [
    Column("run id", keep=True),
    Column("name", rank=3),
    Column("attention", rank=2),
    Column("status", keep=True),
    Column("steps", keep=True, justify="right"),
    Column("best val", keep=True),
    Column("started", rank=1),
    Column("link", rank=0),
]
ROWS = [
    [
        RUN_ID,
        "q02-multihead-seed-0",
        "multihead (2 heads)",
        "FINISHED",
        "6000",
        "1.5323",
        "2026-11-26 05:16:16",
        URL,
    ]
]


def printed(width: int) -> tuple[str, list[str]]:
    out = Console(width=width, file=io.StringIO(), highlight=False, color_system=None)
    left = print_table(out, f"runs of {URL}", COLUMNS, ROWS, elsewhere="--format json")
    return out.file.getvalue(), left  # type: ignore[attr-defined]


def test_at_80_columns_the_kept_cells_are_whole_and_the_rest_said():
    text, left = printed(80)
    assert all(len(line) <= 80 for line in text.splitlines())
    for cell in (RUN_ID, "FINISHED", "6000", "1.5323"):
        assert any(cell in line for line in text.splitlines()), cell  # on one line, whole
    assert "link" in left and "started" in left
    assert f"(left out at 80 columns: {', '.join(left)}; --format json)" in text
    assert URL in text.splitlines()[0]  # the title's URL on a line of its own, unbroken


def test_at_120_columns_fewer_are_left_out_and_at_240_none():
    text, left = printed(120)
    assert all(len(line) <= 120 for line in text.splitlines())
    assert RUN_ID in text and "q02-multihead-seed-0" in text
    assert left == ["started", "link"]  # 133 characters whole: the lowest ranks go
    text, left = printed(240)
    assert left == [] and URL in text.splitlines()[-2] and "left out" not in text


def test_the_lowest_rank_goes_first_and_kept_columns_last_never_squeezed():
    """The others go first; kept columns go only where they do not fit whole (rich squeezed
    them to nothing: issue 58's diagnosis of zero width), the rightmost of a rank first."""
    natural = {c.name: i for i, c in enumerate(COLUMNS)}
    names = lambda width: [COLUMNS[i].name for i in fit(COLUMNS, ROWS, width)]  # noqa: E731
    assert names(66) == ["run id", "status", "steps", "best val"]  # the kept ones, whole
    assert names(65) == ["run id", "status", "steps"]
    assert names(20) == ["run id"]  # narrower than any: the first alone
    shown = fit(COLUMNS, ROWS, 110)
    assert natural["link"] not in shown and natural["name"] in shown


# a gradebook: five kept columns wider together than 80, the diagnosis in words
BOOK = [
    Column("student", keep=True),
    Column("exercise", keep=True),
    Column("steps right", keep=True),
    Column("first wrong step", keep=True),
    Column("diagnosis", keep=True, wrap=True),
    Column("attempts", rank=4),
    Column("submission", rank=1),
]
BOOK_ROWS = [
    ["karin", "1", "0/18", "heads[0].S_masked", "heads_relabelled", "1", RUN_ID],
    [
        "cida",
        "1",
        "6/18",
        "heads[0].scores",
        "no_scale | scale_d_model_d_k + K_Qt | mask_added_after_softmax",
        "2",
        RUN_ID,
    ],
]


def test_kept_columns_wider_than_80_keep_their_headers_and_cells_whole():
    out = Console(width=80, file=io.StringIO(), highlight=False, color_system=None)
    left = print_table(out, "attention-1 on http://127.0.0.1:5000: 30 students", BOOK, BOOK_ROWS)
    text = out.file.getvalue()  # type: ignore[attr-defined]
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines) and left == ["attempts", "submission"]
    header = next(line for line in lines if "exercise" in line)
    for name in ("student", "exercise", "steps right", "first wrong step", "diagnosis"):
        assert name in header, header  # rich cut them to "studen", "steps righ"
    for cell in ("heads[0].S_masked", "heads_relabelled", "0/18", "karin"):
        assert any(cell in line for line in lines), cell
    # the diagnosis goes over lines: every character of it is there, in order
    column = "".join(line.split("│")[5].replace(" ", "") for line in lines if line[0] == "│")
    assert "".join(BOOK_ROWS[1][4].split()) in column and "heads_relabelled" in column
    # the control: the same table where no column may go over lines is cut somewhere
    narrow = Console(width=80, file=io.StringIO(), highlight=False, color_system=None)
    print_table(narrow, "t", [Column(c.name, keep=True) for c in BOOK[:5]], BOOK_ROWS)
    cut = narrow.file.getvalue()  # type: ignore[attr-defined]
    assert BOOK_ROWS[1][4] not in cut


def test_words_around_a_table_break_at_spaces_and_a_url_keeps_a_line():
    from attention_ref.cli.tables import say

    out = Console(width=40, file=io.StringIO(), highlight=False, color_system=None)
    say(out, f"runs of {URL} and some [bold]words[/bold] heads[0].A to go over lines")
    lines = out.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert URL in lines  # whole, on a line of its own
    assert all(len(line) <= 40 for line in lines if line != URL)
    assert "[bold]words[/bold]" in " ".join(lines) and "heads[0].A" in " ".join(lines)


def gradebook_at_80(monkeypatch, capsys, late: dt.timedelta | None, penalty: int = 0) -> str:
    """`attnref server grades`' table (`attention_ref.cli.gradebook_tables.print_book`) of three
    students at 80 columns, carla's answer ``late`` (or on time), less ``penalty`` percent of her
    points."""
    from attention_ref.classroom.coursework.gradebook import Row, Standing
    from attention_ref.cli.gradebook_tables import print_book as _print_book

    monkeypatch.setenv("COLUMNS", "80")
    received = dt.datetime(2026, 11, 28, 12, 0, 31, tzinfo=dt.UTC)
    book = [
        Row("alice", 1, Standing.GRADED, 18, 18, attempts=1, received=received, submission=RUN_ID),
        Row(
            "bruno",
            1,
            Standing.GRADED,
            8,
            18,
            "heads[0].S",
            (("no_scale",),),
            attempts=2,
            received=received,
            submission=RUN_ID,
        ),
        Row(
            "carla",
            1,
            Standing.GRADED,
            18,
            18,
            attempts=1,
            late=late,
            received=received,
            submission=RUN_ID,
            penalty=penalty,
        ),
    ]
    _print_book("attention-1", "https://class.example:8443", book)
    return capsys.readouterr().out


def test_a_penalty_keeps_the_points_at_80_columns(monkeypatch, capsys):
    """The last gap of issue 42's item 5: under a late penalty carla's 18/18 is 9 points, and
    the table at 80 columns says 9 beside her 18/18 (the CSV and the UI had it, the table not)."""
    out = gradebook_at_80(monkeypatch, capsys, dt.timedelta(seconds=31), penalty=50)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80, out
    header = next(line for line in lines if line.startswith("┃"))
    assert "points" in header, header
    cells = {line.split("│")[1].strip(): line.split("│") for line in lines if line[0] == "│"}
    at = header.split("┃").index(next(h for h in header.split("┃") if "points" in h))
    assert [cells[s][at].strip() for s in ("alice", "bruno", "carla")] == ["18", "8", "9"]
    assert "31 s (-50%)" in out, out
    # the control: no penalty taken, and the points (the steps right again) are left out
    plain = gradebook_at_80(monkeypatch, capsys, dt.timedelta(seconds=31))
    header = next(line for line in plain.splitlines() if line.startswith("┃"))
    assert "points" not in header, plain


def test_a_late_answer_keeps_the_late_column_at_80_columns(monkeypatch, capsys):
    """Item 5 of issue 42: the column showed while empty and went as soon as carla was late,
    so her 18/18 read like alice's. Now it stays whenever an answer is late."""
    out = gradebook_at_80(monkeypatch, capsys, dt.timedelta(seconds=31))
    assert max(len(line) for line in out.splitlines()) <= 80, out
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert "late" in header and "│ 31 s" in out, out  # whole, on one line, under "late"
    left = next((line for line in out.splitlines() if line.startswith("(left out")), "")
    assert "late" not in left.replace("left out at", ""), left


def test_the_widest_grades_of_one_exercise_fit_80_columns_late_or_not(monkeypatch, capsys):
    """The recorded class's widest row (a masked-scores first wrong step, a long diagnosis, a
    lateness in minutes): every kept column whole within 80 columns, the exercise's number
    left out where every row has the same (and said)."""
    from attention_ref.classroom.coursework.gradebook import Row, Standing
    from attention_ref.cli.gradebook_tables import print_book as _print_book

    monkeypatch.setenv("COLUMNS", "80")
    received = dt.datetime(2026, 11, 28, 9, 0, tzinfo=dt.UTC)
    late = dt.timedelta(minutes=12, seconds=5)
    diagnosis = (("mask_added_after_softmax",),)
    book = [
        Row(
            "olga",
            1,
            Standing.GRADED,
            10,
            18,
            "heads[0].S_masked",
            diagnosis,
            attempts=3,
            received=received,
            late=late,
            submission=RUN_ID,
        ),
        Row("ana", 1, Standing.GRADED, 18, 18, attempts=1, received=received, submission=RUN_ID),
    ]
    _print_book("attention-1", "https://class.example:8443", book)
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "heads[0].S_masked" in out and "12 min 05 s" in out, out
    left = next(line for line in out.splitlines() if line.startswith("(left out"))
    assert "exercise" in left, left
    # the control: two exercises, and their number is kept
    second = Row("ana", 2, Standing.GRADED, 18, 18, attempts=1, received=received)
    two = [*book, second]
    _print_book("attention-1", "https://class.example:8443", two)
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("┃"))
    assert "exercise" in header, header


def test_with_no_late_answer_the_late_column_may_go(monkeypatch, capsys):
    """The control: nothing late, and the rank decides (at 80 columns it is not kept whole
    at the cost of the others: nothing there to read)."""
    out = gradebook_at_80(monkeypatch, capsys, None)
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "late by" not in out


def test_the_server_commands_lines_break_at_80_columns(tmp_path, monkeypatch, capsys):
    """`attnref server status` (and every `server` command that said one line with `print`:
    stop, add-student, add-teacher, remove-student, reset-password) breaks its words at the
    terminal's width; the folder, one word, keeps a line of its own, whole."""
    from attention_ref.cli.main import main

    folder = tmp_path / "a-class-of-the-autumn-term-2026" / "section-b-mondays-and-thursdays"
    folder.mkdir(parents=True)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["server", "status", str(folder)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["no class server running in", str(folder)], lines
    assert main(["server", "stop", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 or len(line.split()) == 1 for line in lines), lines
    assert " ".join(lines) == f"no class server running in {folder}; nothing to stop"
    # the control: to a pipe with no width said, the one line whole
    monkeypatch.delenv("COLUMNS")
    assert main(["server", "status", str(folder)]) == 1
    assert capsys.readouterr().out == f"no class server running in {folder}\n"


def test_the_gradebook_of_two_exercises_keeps_its_diagnosis_at_80_columns(monkeypatch, capsys):
    """Issue 58's item 5: two exercises, a late answer under a penalty, a long diagnosis: the
    diagnosis had zero width (``┃┃``) and "late" was cut at the right. Now student, exercise,
    points and the diagnosis are kept, the diagnosis over lines at its spaces and underscores,
    what is left out is named, and the rule behind the late label is said once."""
    from attention_ref.classroom.coursework.gradebook import Row, Standing
    from attention_ref.classroom.coursework.policy import Policy
    from attention_ref.cli.gradebook_tables import print_book

    received = dt.datetime(2026, 12, 6, 2, 40, 15, tzinfo=dt.UTC)
    late = dt.timedelta(days=1, minutes=22, seconds=3)
    diagnosis = (("mask_added_after_softmax", "no_scale"), ("transposed_W_O",))
    book = [
        Row(
            who,
            k,
            Standing.GRADED,
            10,
            18,
            "heads[1].S_masked",
            diagnosis,
            attempts=3,
            received=received,
            submission=RUN_ID,
            late=late if who == "carla" else None,
            penalty=20 if who == "carla" else 0,
        )
        for who in ("ana", "joão_pedro_silva", "carla")
        for k in (1, 2)
    ]
    rule = Policy(late_penalty=20).late_words()

    def table(width: int) -> list[str]:
        monkeypatch.setenv("COLUMNS", str(width))
        print_book("atencao-1", "https://class.example.edu", book, "America/Sao_Paulo", rule)
        return capsys.readouterr().out.splitlines()

    lines = table(80)
    assert max(len(line) for line in lines) <= 80, "\n".join(lines)
    header = next(line for line in lines if line.startswith("┃"))
    assert "┃┃" not in header and "┃ ┃" not in header, header
    heads = [h.strip() for h in header.strip("┃").split("┃")]
    assert {"student", "exercise", "points", "diagnosis"} <= set(heads), heads
    at = heads.index("diagnosis") + 1
    carla = [line for line in lines if line.startswith("│ carla")]
    assert len(carla) == 2  # one per exercise, each its own number
    # every character of carla's diagnosis, in order, in her first row's lines
    first = lines.index(carla[0])
    below = [carla[0]] + [line for line in lines[first + 1 : first + 8] if line.startswith("│  ")]
    column = "".join(line.split("│")[at].strip().replace(" ", "") for line in below)
    assert column.startswith("mask_added_after_softmax+no_scale|transposed_W_O"), column
    left = " ".join(line for line in lines if line.startswith(("(left out", "submission")))
    assert "first wrong step" in left and "received" in left, left
    assert [line for line in lines if line.startswith("late: ")] == [
        "late: Late work loses 20% of its points per day or part of a day."
    ]
    # the control: no answer late, no rule said (the same rule given)
    on_time = [r for r in book if r.student != "carla"]
    monkeypatch.setenv("COLUMNS", "80")
    print_book("atencao-1", "https://class.example.edu", on_time, "America/Sao_Paulo", rule)
    assert "late:" not in capsys.readouterr().out
    # wide enough, every column: the received time in the class's zone, with its offset
    wide = "\n".join(table(240))
    assert "2026-12-05 23:40:15 UTC-03:00" in wide and "1 d 0 h 22 min (-20%)" in wide
