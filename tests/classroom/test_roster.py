"""A class from its roster, parsed: the refusals first (what the file must not be), then the
participant lists of Moodle (English and Brazilian Portuguese headers), Canvas's gradebook
export (its Points Possible row, the test student) and the plain CSV, as they are."""

from __future__ import annotations

import re

import pytest

from attention_ref.classroom.coursework.roster import (
    ACCOUNT,
    MAX_ROSTER_BYTES,
    RosterError,
    detect,
    parse_roster,
    slug,
)

#: Moodle's participants download, English site, identity fields email and username
MOODLE_EN = (
    "First name,Last name,Email address,Username\n"
    "João,Silva,joao.silva@uni.example,jsilva\n"
    "Ana,Souza,ana@uni.example,\n"
    "Zoë,Ng,,zng\n"
)
#: the same page of a Brazilian Portuguese site, with its default identity field only
MOODLE_PT = (
    "\ufeffNome,Sobrenome,Endereço de email\n"
    "João,Silva,joao.silva@uni.example\n"
    "Ana Maria,Souza,ana.souza@uni.example\n"
)
#: Canvas's gradebook export: assignments and totals, the Points Possible row, the test student
CANVAS = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Integration ID,Section,Homework 1 (123),"
    "Current Points,Final Score\n"
    "    Points Possible,,,,,,18,(read only),(read only)\n"
    '"Silva, João",101,S-1,joao.silva@uni.example,,Turma A,12,12,66.7\n'
    '"Souza, Ana",102,,asouza,,Turma A,,0,0\n'
    '"Ng, Zoë",103,S-3,,,Turma B,18,18,100\n'
    '"Student, Test",999,,,,Turma A,,,\n'
)


@pytest.mark.parametrize(
    ("text", "fmt", "said"),
    [
        ("", None, "is not a header of a Moodle participants download"),
        ("name,mail\nana,a@x\n", None, "or a CSV with a column account"),
        ("First name,Last name\nAna,Souza\n", "canvas", "not a header of a Canvas gradebook"),
        ("account\nana\n", "moodle", "not a header of a Moodle participants download"),
        ("account\nana\n", "blackboard", "--format 'blackboard': choose one of moodle, canvas"),
        ("account,login\nana,a1\n", None, "column 'login' is none of account, username, email"),
        ("account,email,Email\na,b,c\n", None, "names a column twice"),
        ("account\nana\nana\n", None, "roster lines 2 and 3 both make the account 'ana'"),
        ("account\n\n,\n", None, "holds no student"),
        ("account\nana silva\n", None, "line 2: the account 'ana silva' is not 1-64 letters"),
        ("account\nana/x\n", None, "the account 'ana/x' is not"),
        ("account\nadmin\n", None, "line 2: the account 'admin' is reserved"),
        ("account,email\nana,a@x,extra\n", None, "roster line 2 has 3 cells, not 2"),
        ("account\nana\x1b[2J\n", None, "line 2 holds a control character"),
        ("account\n" + "a" * 300 + "\n", None, "line 2 has a cell over 200 characters"),
        ("account\n" + "ana\n" * (MAX_ROSTER_BYTES // 4 + 1), None, f"over {MAX_ROSTER_BYTES}"),
        # an LMS row with no identifier: Moodle without e-mail or username, Canvas without ids
        ("First name,Last name,Email address\nAna,Souza,\n", None, "no username, e-mail or ID"),
        ("Student,ID,Section\nSouza Ana,,A\n", None, "no ID, SIS User ID or SIS Login ID"),
        # two students of one derived account: both lines named
        (
            "First name,Last name,Email address\nAna,S,ana@a.example\nAna,T,ana@b.example\n",
            None,
            "roster lines 2 and 3 both make the account 'ana'",
        ),
    ],
)
def test_a_roster_that_cannot_be_used_is_refused_in_one_line(text, fmt, said):
    with pytest.raises(RosterError, match=re.escape(said)) as e:
        parse_roster(text, fmt)
    assert "\n" not in str(e.value)


def test_the_format_is_told_from_the_header():
    assert detect(["First name", "Surname", "Email address"]) == "moodle"
    assert detect(["Nome", "Sobrenome", "Endereço de e-mail"]) == "moodle"
    assert detect(["Student", "ID", "SIS Login ID", "Section"]) == "canvas"
    assert detect(["account", "email"]) == "plain"
    assert detect(["Name", "Email address"]) is None  # no first and last name: not Moodle's


def test_an_account_name_is_made_deterministically_and_valid():
    assert slug("João.Silva") == "joao.silva"
    assert slug("  Zoë  Ng ") == "zoe.ng"
    assert slug("李") == ""  # nothing of it is ASCII: no name made (refused by the parser)
    for made in ("joao.silva", "zoe.ng", "a-b_c"):
        assert ACCOUNT.fullmatch(made)
    assert not ACCOUNT.fullmatch("ana@uni.example") and not ACCOUNT.fullmatch(".ana")


def test_moodle_english_reads_username_then_email_local_part():
    roster = parse_roster(MOODLE_EN)
    assert roster.kind == "moodle"
    assert [(e.account, e.line, e.name) for e in roster.entries] == [
        ("jsilva", 2, "João Silva"),
        ("ana", 3, "Ana Souza"),
        ("zng", 4, "Zoë Ng"),
    ]
    ids = roster.identifiers("moodle")
    assert ids["jsilva"] == {"username": "jsilva", "email": "joao.silva@uni.example"}
    assert ids["ana"] == {"email": "ana@uni.example"} and ids["zng"] == {"username": "zng"}
    assert roster.identifiers("canvas") == {}


def test_moodle_portuguese_with_a_byte_order_mark_and_semicolons():
    roster = parse_roster(MOODLE_PT)
    assert [e.account for e in roster.entries] == ["joao.silva", "ana.souza"]
    assert roster.identifiers("moodle")["ana.souza"] == {"email": "ana.souza@uni.example"}
    # a spreadsheet in Portuguese saves CSV with semicolons: the same roster
    semi = parse_roster(MOODLE_PT.replace(",", ";"))
    assert semi.identifiers("moodle") == roster.identifiers("moodle")


def test_canvas_export_skips_points_possible_and_the_test_student():
    roster = parse_roster(CANVAS)
    assert roster.kind == "canvas"
    assert [(e.account, e.line, e.name) for e in roster.entries] == [
        ("joao.silva", 3, "João Silva"),
        ("asouza", 4, "Ana Souza"),
        ("zoe.ng", 5, "Zoë Ng"),  # no SIS Login ID: first.last of "Ng, Zoë"
    ]
    ids = roster.identifiers("canvas")
    assert ids["joao.silva"] == {
        "Student": "Silva, João",
        "ID": "101",
        "SIS User ID": "S-1",
        "SIS Login ID": "joao.silva@uni.example",
        "Section": "Turma A",
    }
    assert ids["zoe.ng"] == {
        "Student": "Ng, Zoë",
        "ID": "103",
        "SIS User ID": "S-3",
        "Section": "Turma B",
    }
    # Canvas's row of muted assignments is no student either
    muted = CANVAS.replace("    Points Possible,", ",,,,,,Muted,,\n    Points Possible,", 1)
    assert [e.account for e in parse_roster(muted).entries] == ["joao.silva", "asouza", "zoe.ng"]


def test_plain_roster_keeps_the_accounts_and_both_systems_identifiers():
    roster = parse_roster(
        'account,email,SIS Login ID,Student\njoão,joao@uni.example,jsilva,"Silva, João"\nbob,,,\n'
    )
    assert roster.kind == "plain" and [e.account for e in roster.entries] == ["joão", "bob"]
    assert roster.identifiers("moodle") == {"joão": {"email": "joao@uni.example"}}
    assert roster.identifiers("canvas") == {
        "joão": {"SIS Login ID": "jsilva", "Student": "Silva, João"}
    }
    # a format named for the file that is of it: the same roster
    assert parse_roster(CANVAS, "canvas") == parse_roster(CANVAS)
