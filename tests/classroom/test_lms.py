"""Grades as a learning-management system imports them (Moodle, Canvas): first the rosters
that must be refused, then the header and rows, with and without a roster."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re

import pytest

from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.gradebook import Row, Standing
from attention_ref.classroom.coursework.lms import (
    IMPORT_WORDS,
    SYSTEMS,
    feedback_of,
    grade_of,
    import_steps,
    moodle_field,
    moodle_scale,
    to_lms_csv,
)
from attention_ref.classroom.coursework.roster import BOM, RosterError, parse_roster
from attention_ref.classroom.exchange.grade import steps_asked
from tests.classroom.lms_judges import RefusedError, canvas_import, moodle_import

BOOK = [
    Row("alice", 1, Standing.GRADED, 18, 18),
    Row(
        "alice",
        2,
        Standing.GRADED,
        10,
        18,
        "heads[0].S_masked",
        (("no_mask",),),
        late=dt.timedelta(minutes=4),
    ),
    Row("bob", 1, Standing.MISSING),
    Row("bob", 2, Standing.CHANGED, 0, 0, reason="changed"),
    Row("carol", 1, Standing.GRADED, 12, 12),
    Row("carol", 2, Standing.MALFORMED),
]


def parsed(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_moodle_reads_a_username_a_grade_and_its_feedback():
    rows = parsed(to_lms_csv(BOOK, "hw1", "moodle", 36))
    assert rows[0] == ["username", "hw1", "hw1 feedback"]
    got = {r[0]: r for r in rows[1:]}
    assert set(got) == {"alice", "bob", "carol"}
    assert got["alice"][1] == "28" and got["bob"][1] == "0" and got["carol"][1] == "12"
    assert got["alice"][2] == (
        "exercise 1: 18/18 steps right; exercise 2: 10/18 steps right (no_mask), late by 4 min 00 s"
    )
    assert "exercise 2: changed after it was finished" in got["bob"][2]
    assert "exercise 2: not an answer to the exercise" in got["carol"][2]


def test_the_feedback_is_in_the_assignments_language_with_the_mistakes_in_words():
    from attention_ref.exercises.catalogue import mistake_words

    late = Row(
        "ana",
        1,
        Standing.GRADED,
        8,
        18,
        "heads[0].S",
        (("no_scale",), ("no_mask", "K_Qt")),
        late=dt.timedelta(hours=26),
        penalty=20,
    )
    said = feedback_of(
        [late, Row("ana", 2, Standing.MISSING)], lang="pt", words=lambda n: mistake_words(n, "pt")
    )
    no_scale, no_mask, k_qt = (mistake_words(n, "pt") for n in ("no_scale", "no_mask", "K_Qt"))
    assert "no_scale" not in said and no_scale != "no_scale"
    assert said == (
        f"exercício 1: 8/18 passos certos ({no_scale} ou {no_mask} e {k_qt}), atrasada 1 d 2 h "
        "00 min (-20%); exercício 2: sem envio"
    )


def test_canvas_reads_its_own_layout_with_points_possible():
    rows = parsed(to_lms_csv(BOOK, "hw1", "canvas", 36))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "hw1"]
    assert rows[1] == ["Points Possible", "", "", "", "", "36"]
    assert rows[2] == ["alice", "", "", "alice", "", "28"]
    assert len(rows) == 2 + 3


def test_a_grade_counts_only_graded_submissions():
    assert grade_of(BOOK[:2]) == 28
    assert grade_of(BOOK[2:4]) == 0  # missing and changed: no steps (the control: 28 above)
    assert feedback_of([]) == ""


def test_an_unknown_system_is_refused_in_one_line():
    assert SYSTEMS == ("moodle", "canvas")
    with pytest.raises(ValueError, match="choose one of moodle, canvas"):
        to_lms_csv(BOOK, "hw1", "blackboard", 36)


def test_points_possible_are_the_steps_of_whole_answers():
    one = steps_asked(Assignment(name="x", exercises=1))
    assert one == 18  # Q, K, V, scores, S, S_masked, A, H per head (2 heads), concat, output
    assert steps_asked(Assignment(name="x", exercises=2)) == 2 * one


# --- the roster: account names to the system's own identifiers -------------------------------


def read_roster(text: str, system: str) -> dict[str, dict[str, str]]:
    return parse_roster(text).identifiers(system)


def test_every_student_of_the_gradebook_needs_a_line_of_the_roster():
    roster = read_roster("account,email\nalice,alice@uni.example\ncarol,c@uni.example\n", "moodle")
    with pytest.raises(RosterError, match=r"the roster has no line for bob \(an unknown user"):
        to_lms_csv(BOOK, "hw1", "moodle", 36, roster=roster)
    with_bob = {"alice": {"email": "a@x"}, "bob": {"email": ""}, "carol": {"email": "c@x"}}
    with pytest.raises(RosterError, match=r"the roster has no moodle identifier for bob \("):
        to_lms_csv(BOOK, "hw1", "moodle", 36, roster=with_bob)


def test_moodle_reads_the_roster_identifier_the_teacher_maps_from():
    roster = read_roster(
        "\ufeffaccount,email\nalice,alice@uni.example\nbob,bob@uni.example\ncarol,c@x\nzoe,z@x\n",
        "moodle",
    )
    rows = parsed(to_lms_csv(BOOK, "hw1", "moodle", 36, roster=roster))
    assert rows[0] == ["email", "hw1", "hw1 feedback"]
    assert [r[:2] for r in rows[1:]] == [
        ["alice@uni.example", "28"],
        ["bob@uni.example", "0"],
        ["c@x", "12"],
    ]
    assert import_steps("moodle", "hw1", 36, "email")[2].startswith("3. Map from email to email")
    assert "maximum grade 36" in import_steps("moodle", "hw1", 36)[0]


def test_moodle_maps_from_the_first_field_every_student_has():
    both = {"alice": {"username": "al", "email": "a@x"}, "bob": {"email": "b@x"}}
    assert moodle_field(both) == "email"  # bob has no username
    assert moodle_field(both, ["alice"]) == "username"
    assert moodle_field(None) == "username"
    with pytest.raises(RosterError, match="no e-mail for bob"):
        moodle_field({"alice": {"email": "a@x"}, "bob": {"idnumber": "7"}})


def test_canvas_reads_the_roster_ids_and_names():
    roster = read_roster(
        "account,Student,ID,SIS User ID,Section\n"
        'alice,"Silva, Alice",101,S-1,A\nbob,Bob,,S-2,\ncarol,Carol,103,,B\n',
        "canvas",
    )
    rows = parsed(to_lms_csv(BOOK, "hw1", "canvas", 36, roster=roster))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "hw1"]
    assert rows[2] == ["Silva, Alice", "101", "S-1", "", "A", "28"]
    assert rows[3] == ["Bob", "", "S-2", "", "", "0"]
    assert rows[4] == ["Carol", "103", "", "", "B", "12"]


# --- the judges: each LMS's import rules, first on the files they must refuse -----------------

USERS = {"username": {"alice", "bob", "carol"}, "email": {"a@x", "b@x", "c@x"}, "idnumber": set()}
HEADER = "username,hw1,hw1 feedback\n"


@pytest.mark.parametrize(
    ("text", "item_max", "said"),
    [
        (HEADER + "alice,10,ok\nzoe,3,ok\n", 36, "user mapping error: username 'zoe'"),
        (HEADER + "alice,37,ok\n", 36, "above the item's maximum 36"),
        (HEADER + "alice,101,ok\n", 108, "above the site's gradepointmax 100"),
        (HEADER + "alice,10,ok\n", None, "feedback maps only to an existing grade item"),
        ("username,hw1\nalice,101\n", None, "above the item's maximum 100.0"),
        ("login,hw1\nalice,1\n", 36, "cannot map from 'login'"),
        (HEADER + "alice,ten,ok\n", 36, "bad grade 'ten'"),
    ],
)
def test_the_moodle_judge_refuses_what_moodle_refuses(text, item_max, said):
    with pytest.raises(RefusedError, match=re.escape(said)):
        moodle_import(text.encode(), USERS, item_max)


STUDENTS = [
    {
        "ID": "101",
        "SIS User ID": "S-1",
        "SIS Login ID": "asilva",
        "name": "Alice Silva",
        "sortable_name": "Silva, Alice",
    },
    {"ID": "102", "SIS User ID": "", "SIS Login ID": "bob", "name": "Bob", "sortable_name": "Bob"},
]
CANVAS_HEADER = "Student,ID,SIS User ID,SIS Login ID,Section,hw1\nPoints Possible,,,,,36\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Name,ID,SIS Login ID,Section,hw1\nx,101,,,1\n", "Invalid header row"),
        ("Student,ID,SIS User ID,SIS Login ID,hw1\nx,101,,,,1\n", "Invalid header row"),
        ("Student,ID,SIS User ID,SIS Login ID,Section,hw1\nAlice,101,,,,1\n", "without Points"),
        (CANVAS_HEADER + "Zoe,999,S-9,zoe,,1\n", "a student Canvas does not know"),
        (CANVAS_HEADER.replace(",36", ",many") + "Bob,,,bob,,1\n", "not a number"),
    ],
)
def test_the_canvas_judge_refuses_what_canvas_refuses(text, said):
    with pytest.raises(RefusedError, match=re.escape(said)):
        canvas_import(text.encode(), STUDENTS)


def test_canvas_matches_by_id_then_sis_user_id_then_login_then_name():
    text = CANVAS_HEADER + 'x,101,,,,1\ny,,S-1,,,2\nz,,,bob,,3\n"Silva, Alice",,,,,4\n'
    assert canvas_import(text.encode(), STUDENTS) == {"101": 4.0, "102": 3.0}


# --- what attnref writes, as the judges read it ------------------------------------------------


def six_exercises() -> list[Row]:
    """Three students of a six-exercise assignment (108 points): all right, all but one step
    of each, the first half right."""
    full, most = (
        [Row("alice", k, Standing.GRADED, 18, 18) for k in range(1, 7)],
        [Row("bob", k, Standing.GRADED, 17, 18) for k in range(1, 7)],
    )
    half = [Row("carol", k, Standing.GRADED, 18 if k <= 3 else 0, 18) for k in range(1, 7)]
    return full + most + half


def test_six_exercises_are_scaled_to_moodles_maximum_and_imported():
    points = steps_asked(Assignment(name="x", exercises=6))
    assert points == 108 and moodle_scale(points) == (100, 100 / 108)
    text = BOM + to_lms_csv(six_exercises(), "hw1", "moodle", points)
    got = moodle_import(text.encode(), USERS, item_max=100)
    assert got == {"alice": 100, "bob": round(102 * 100 / 108, 2), "carol": 50}
    steps = import_steps("moodle", "hw1", points)
    assert "maximum grade 100 (the 108 points possible are above" in steps[0]
    # the control: unscaled (a site whose maximum is 200), the same file is refused at 100
    unscaled = to_lms_csv(six_exercises(), "hw1", "moodle", points, moodle_max=200)
    with pytest.raises(RefusedError, match="gradepointmax 100"):
        moodle_import(unscaled.encode(), USERS, item_max=108)
    assert moodle_import(unscaled.encode(), USERS, item_max=108, gradepointmax=200)["alice"] == 108
    assert "maximum grade 108" in import_steps("moodle", "hw1", points, moodle_max=200)[0]
    with pytest.raises(ValueError, match=r"1\.\.10000"):
        moodle_scale(points, 0)


def test_two_exercises_import_as_they_are_into_an_item_of_their_points():
    text = to_lms_csv(BOOK, "hw1", "moodle", 36)
    assert moodle_import(text.encode(), USERS, item_max=36) == {"alice": 28, "bob": 0, "carol": 12}
    with pytest.raises(RefusedError, match="existing grade item"):  # the item not made first
        moodle_import(text.encode(), USERS, item_max=None)
    by_mail = to_lms_csv(
        BOOK,
        "hw1",
        "moodle",
        36,
        roster={"alice": {"email": "a@x"}, "bob": {"email": "b@x"}, "carol": {"email": "c@x"}},
    )
    assert moodle_import(by_mail.encode(), USERS, item_max=36)["a@x"] == 28


def test_canvas_matches_every_row_attnref_writes_from_the_roster():
    roster = {"alice": {"Student": "Silva, Alice", "ID": "101"}, "bob": {"SIS Login ID": "bob"}}
    book = [r for r in BOOK if r.student != "carol"]
    text = BOM + to_lms_csv(book, "hw1", "canvas", 36, roster=roster)
    assert canvas_import(text.encode(), STUDENTS) == {"101": 28.0, "102": 0.0}
    # without the roster, Alice's account name is no identifier Canvas knows
    with pytest.raises(RefusedError, match="does not know"):
        canvas_import(to_lms_csv(book, "hw1", "canvas", 36).encode(), STUDENTS)


def test_the_import_steps_are_said_in_the_classs_language():
    """Moodle's and Canvas's steps in Portuguese on a Portuguese class (they were English on
    the Portuguese page): the same facts (the item, its maximum, the field, the scaled note)
    in each language, each table with the same blanks."""
    blanks = {
        lang: {k: set(re.findall(r"\{(\w+)\}", v)) for k, v in words.items()}
        for lang, words in IMPORT_WORDS.items()
    }
    assert blanks["pt"] == blanks["en"]
    en = import_steps("moodle", "hw1", 120, "email", moodle_max=100)
    pt = import_steps("moodle", "hw1", 120, "email", moodle_max=100, lang="pt")
    assert "Gradebook setup" in en[0] and "Configuração do livro de notas" in pt[0]
    assert "scaled to 100" in en[0] and "escaladas para 100" in pt[0]
    assert pt[2].startswith("3. Mapeie de email para email, 'hw1' para o item")
    canvas = import_steps("canvas", "hw1", 36, lang="pt")
    assert "Importar" in canvas[0] and "com 36 pontos" in canvas[0]
    assert import_steps("canvas", "hw1", 36) != canvas
