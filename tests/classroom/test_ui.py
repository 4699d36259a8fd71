"""The links people are given open the runs, in a real browser (headless Chromium).

MLflow 3.17's UI lands on its GenAI home (an assistant, "Start Demo", models called "Agent
versions"); the runs need ``?workflowType=machine_learning`` in the link. Two landing pages:

* ``make ui``: the link `tools/ui_link.py` prints for the embedded store;
* the class server: the runs link ``attnref server start`` prints, opened as the admin (basic
  auth sent by the browser as a header, over CDP).

Each page is loaded, waited on until the runs table shows the runs' names, and photographed
(``ATTNREF_UI_SCREENSHOT_DIR=DIR`` keeps the screenshots). The control: the server's root URL,
the link README gave, shows no runs table.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path

import pytest

from attention_ref.classroom.connection.client import rest
from tests.classroom.conftest import EXPERIMENT
from tests.mlflow_serving import mlflow_serving

pytestmark = [pytest.mark.slow, pytest.mark.soak]

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from ui_link import runs_page  # noqa: E402

RUNS_TABLE_HEADER = "Run Name"


def open_and_wait(driver, url: str, texts: list[str], seconds: float = 90) -> bool:
    """Load ``url``; whether all ``texts`` show on the page within ``seconds``."""
    driver.get(url)
    return shows(driver, texts, seconds)


def shows(driver, texts: list[str], seconds: float = 90) -> bool:
    """Whether all ``texts`` show on the page within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body = driver.find_element("tag name", "body").text
        if all(t in body for t in texts):
            return True
        time.sleep(0.5)
    return False


def shoot(driver, tmp_path: Path, name: str) -> Path:
    """A screenshot of the page: in ``tmp_path``, and in ``$ATTNREF_UI_SCREENSHOT_DIR`` if set."""
    path = tmp_path / f"{name}.png"
    assert driver.save_screenshot(str(path))
    keep = os.environ.get("ATTNREF_UI_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / path.name).write_bytes(path.read_bytes())
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000  # a page, not a blank
    return path


@pytest.fixture
def driver():
    from tests.book.browser import make_driver

    drv = make_driver()
    yield drv
    drv.quit()


@pytest.fixture
def embedded_ui(store, shakespeare, tmp_path):
    """A tiny run in the embedded store, and ``mlflow ui`` over it (what ``make ui`` runs)."""
    from attention_ref.experiments.runs import run_training
    from attention_ref.experiments.store import connect
    from tests.configs import tiny

    connect(store)
    cfg = tiny(max_steps=2, eval_interval=2, sample_tokens=5)
    outcome = run_training(cfg, shakespeare, out_root=tmp_path / "runs", log_system_metrics=False)
    with mlflow_serving("ui", store, tmp_path / "ui.log") as (base, _):
        yield base, Path(store.removeprefix("sqlite:///")), outcome


def test_make_ui_opens_the_runs_table(embedded_ui, driver, tmp_path):
    base, db, _ = embedded_ui
    run_name = "q02-multihead"
    link = runs_page(db, base)
    assert link.endswith("?workflowType=machine_learning") and "/#/experiments/" in link
    assert open_and_wait(driver, link, [RUNS_TABLE_HEADER, run_name]), driver.page_source[:2000]
    assert driver.title.startswith("Runs - ")
    shoot(driver, tmp_path, "make-ui-landing")
    # the control: the bare URL (README's old link) lands on the GenAI home, no runs table
    assert not open_and_wait(driver, base + "/", [RUNS_TABLE_HEADER, run_name], seconds=15)
    # no store: the experiments list, in the runs' view
    expected = f"{base}/#/experiments?workflowType=machine_learning"
    assert runs_page(tmp_path / "none.db", base) == expected


def test_the_class_servers_printed_link_opens_the_runs_table(server, students, driver, tmp_path):
    _, exp = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=server.admin,
        query={"experiment_name": EXPERIMENT},
    )
    exp_id = exp["experiment"]["experiment_id"]
    made = rest(
        server.url,
        "/api/2.0/mlflow/runs/create",
        {"experiment_id": exp_id, "run_name": "ui-alice"},
        auth=("alice", students["alice"]),
    )
    assert made[0] == 200
    token = base64.b64encode(":".join(server.admin).encode()).decode()
    driver.execute_cdp_cmd(
        "Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}}
    )
    link = server.runs_page(exp_id)
    assert link == f"{server.url}/#/experiments/{exp_id}?workflowType=machine_learning"
    assert open_and_wait(driver, link, [RUNS_TABLE_HEADER, "ui-alice"]), driver.page_source[:2000]
    shoot(driver, tmp_path, "class-server-landing")
    # the server's root lands there too, on the "Model training" side, no assistant opened
    assert open_and_wait(driver, server.url + "/", [RUNS_TABLE_HEADER, "ui-alice"])
    shoot(driver, tmp_path, "class-root")
    assert driver.execute_script("return localStorage.getItem('mlflow.workflowType_v1')") == (
        '"machine_learning"'
    )
    assert "Welcome to MLflow Assistant" not in driver.find_element("tag name", "body").text


def grade_columns(driver) -> list[str]:
    """The runs table's columns on screen, by MLflow's keys, the grade's only."""
    cells = driver.find_elements("css selector", ".ag-header-cell")
    return [
        c.get_attribute("col-id")
        for c in cells
        if (c.get_attribute("col-id") or "").startswith(("metrics.", "tags."))
    ]


def test_the_gradebook_is_the_runs_table_of_its_experiment(server, students, driver, tmp_path):
    """The gradebook `attnref server grade` writes, in the UI: one run per student and
    exercise whose name says the grade, and the link `assign` and `grade` print opens it in
    the gradebook's view: the grade's columns (steps right, points, late, diagnosis) first,
    the runs by student. A student who opens that link reads why there is nothing (the gate's
    one answer), not a blank page."""
    from attention_ref.classroom.connection.class_client import ClassClient
    from attention_ref.classroom.coursework.assignment import Assignment
    from attention_ref.classroom.coursework.gradebook import SHOWN_COLUMNS, VIEW, ui_url, whole
    from attention_ref.classroom.coursework.student_answers import mistaken_answer
    from attention_ref.classroom.exchange import assign as assigning
    from attention_ref.classroom.exchange import grade as grading
    from attention_ref.classroom.exchange import submit as submitting
    from attention_ref.classroom.gate.refusals import HIDDEN, REFUSAL
    from attention_ref.exercises.answer import Problem

    a = assigning.assign(ClassClient(server.url, server.admin), Assignment(name="hw-ui")).assignment
    prob = Problem.of_exercise(a.exercises_of("alice")[0])
    submitting.submit(
        ClassClient(server.url, ("alice", students["alice"])),
        "hw-ui",
        mistaken_answer(prob, a.decimals, ["no_mask"]) or b"",
    )
    done = grading.grade(ClassClient(server.url, server.admin), "hw-ui")
    link = ui_url(server.url, done.gradebook_id)
    assert link == (
        f"{server.url}/#/experiments/{done.gradebook_id}/runs"
        f"?workflowType=machine_learning&viewStateShareKey={VIEW}"
    )
    assert link in assigning.Assigned(a, done.gradebook_id, True, (), ()).describe(server.url)
    token = base64.b64encode(":".join(server.admin).encode()).decode()
    driver.execute_cdp_cmd(
        "Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}}
    )
    alices = next(r for r in done.rows if r.student == "alice")
    assert alices.run_name.startswith("alice · 1 · ") and alices.run_name.endswith(" · no_mask")
    names = [RUNS_TABLE_HEADER, alices.run_name, "bob · 1 · no submission"]
    # the control: the experiment's own link shows the runs, and none of the grade's columns
    assert open_and_wait(driver, server.runs_page(done.gradebook_id), names)
    time.sleep(2)
    assert grade_columns(driver) == []
    ok = open_and_wait(driver, link, [*names, "steps_right", "points", "diagnosis"])
    shoot(driver, tmp_path, "class-gradebook")
    assert ok, driver.find_element("tag name", "body").text[:3000]
    # on screen at 1280 px: the steps right, the points, late, the diagnosis (the view also
    # puts them first; the UI applies that order only once its table has settled)
    shown = grade_columns(driver)
    assert set(shown) <= set(SHOWN_COLUMNS) and set(SHOWN_COLUMNS[:4]) <= set(shown), shown

    def cell(row: int, column: str) -> str:
        found = driver.find_elements(
            "css selector", f".ag-row[row-index='{row}'] [col-id='{column}']"
        )
        return found[0].text if found else ""

    want = [str(alices.steps_right), str(whole(alices.points)), "0", alices.diagnosis]
    assert [cell(0, c) for c in SHOWN_COLUMNS[:4]] == want  # alice first: the runs by name
    # a row opens the grade's run, a training run (not a GenAI evaluation): its grade in
    # sentences, its metrics and tags
    driver.find_element("link text", alices.run_name).click()
    row_page = f"{server.url}/#{driver.current_url.partition('#')[2]}"  # through the landing
    said = f"{alices.steps_right} of {alices.steps_given} steps right"
    opened = open_and_wait(driver, row_page, [said, "steps_right", "Model metrics"])
    shoot(driver, tmp_path, "class-gradebook-row")
    assert opened, driver.find_element("tag name", "body").text[:3000]
    crumb = driver.find_element("css selector", "[data-testid='experiment-observatory-link-runs']")
    assert crumb.text == "Runs"
    # the control: a reader who chose MLflow's GenAI side keeps it, and the run opens there
    driver.execute_script("localStorage.setItem('mlflow.workflowType_v1', '\"genai\"')")
    assert open_and_wait(driver, row_page, [said, "Evaluation runs"])
    crumb = driver.find_element("css selector", "[data-testid='experiment-observatory-link-runs']")
    assert crumb.text == "Evaluations"
    driver.execute_script("localStorage.removeItem('mlflow.workflowType_v1')")
    # as a student, the same link shows no gradebook, and says why
    token = base64.b64encode(f"bob:{students['bob']}".encode()).decode()
    driver.execute_cdp_cmd(
        "Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}}
    )
    said = open_and_wait(driver, link, [REFUSAL + HIDDEN], seconds=30)
    shoot(driver, tmp_path, "class-gradebook-as-student")
    assert said, driver.find_element("tag name", "body").text[:3000]
    assert "alice · 1" not in driver.find_element("tag name", "body").text


#: a laptop's screen: the gradebook's key columns fit its width, no horizontal scroll
LAPTOP = (1366, 768)
#: the gradebook's key columns: the run's name (the student, then the exercise), the steps
#: right, the points, late, the diagnosis
KEY_COLUMNS = (
    "attributes.`Run Name`",
    "metrics.`steps_right`",
    "metrics.`points`",
    "metrics.`late`",
    "tags.`attnref.grade.diagnosis`",
)
#: the gradebook's view before issue 58 (the control): late seventh, after the steps given,
#: the first wrong step, the diagnosis and the attempts; the points not chosen
OLD_SHOWN = [
    "metrics.`steps_right`",
    "metrics.`steps_given`",
    "tags.`attnref.grade.first_wrong`",
    "tags.`attnref.grade.diagnosis`",
    "metrics.`attempts`",
    "metrics.`late`",
    "tags.`attnref.grade.status`",
]
OLD_VIEW = {
    "selectedColumns": OLD_SHOWN,
    "columnOrder": ["attributes.`Run Name`", *OLD_SHOWN, "runDateAndNestInfo", "duration"],
    "columnWidths": {
        "attributes.`Run Name`": 230,
        "metrics.`steps_right`": 110,
        "metrics.`steps_given`": 110,
        "tags.`attnref.grade.first_wrong`": 200,
        "tags.`attnref.grade.diagnosis`": 190,
    },
    "orderByKey": "tags.`mlflow.runName`",
    "orderByAsc": True,
}
#: the runs table's columns whose header lies whole inside the table and the window
_ON_SCREEN = """
const grid = document.querySelector('.ag-root-wrapper');
if (!grid) return [];
const box = grid.getBoundingClientRect(), right = Math.min(box.right, window.innerWidth);
return [...document.querySelectorAll('.ag-header-cell')].filter(c => {
  const r = c.getBoundingClientRect();
  return r.width > 0 && r.left >= box.left - 1 && r.right <= right + 1;
}).map(c => c.getAttribute('col-id'));
"""


def on_screen(driver, wanted: tuple[str, ...], seconds: float = 20) -> list[str]:
    """The runs table's columns on screen (its horizontal scroll at the start), once
    ``wanted`` are, or after ``seconds`` (the UI orders the columns once the table settled)."""
    deadline = time.monotonic() + seconds
    while True:
        shown = list(driver.execute_script(_ON_SCREEN))
        if set(wanted) <= set(shown) or time.monotonic() > deadline:
            return shown
        time.sleep(0.5)


def as_account(driver, account: tuple[str, str]) -> None:
    """The browser sends ``account``'s basic auth with every request."""
    token = base64.b64encode(":".join(account).encode()).decode()
    driver.execute_cdp_cmd(
        "Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}}
    )


def graded(server, students, name: str):
    """Assignment ``name`` with alice's answer (a causal mask forgotten), graded."""
    from attention_ref.classroom.connection.class_client import ClassClient
    from attention_ref.classroom.coursework.assignment import Assignment
    from attention_ref.classroom.coursework.student_answers import mistaken_answer
    from attention_ref.classroom.exchange import assign as assigning
    from attention_ref.classroom.exchange import grade as grading
    from attention_ref.classroom.exchange import submit as submitting
    from attention_ref.exercises.answer import Problem

    admin = ClassClient(server.url, server.admin)
    a = assigning.assign(admin, Assignment(name=name)).assignment
    prob = Problem.of_exercise(a.exercises_of("alice")[0])
    submitting.submit(
        ClassClient(server.url, ("alice", students["alice"])),
        name,
        mistaken_answer(prob, a.decimals, ["no_mask"]) or b"",
    )
    return grading.grade(admin, name)


def followed(driver, link, account: tuple[str, str], seconds: float = 20) -> None:
    """Click ``link`` and go where it leads: MLflow opens a description's links in a tab of
    their own (``target="_blank"``), the browser's last, loaded again there as ``account``
    (a browser sends the basic auth it was given to every tab; the header set over CDP is
    one tab's); a link without one, in this tab."""
    before, handles = driver.current_url, len(driver.window_handles)
    link.click()
    deadline = time.monotonic() + seconds
    while len(driver.window_handles) == handles and driver.current_url == before:
        assert time.monotonic() < deadline, "the link led nowhere"
        time.sleep(0.2)
    if len(driver.window_handles) > handles:
        driver.switch_to.window(driver.window_handles[-1])
        as_account(driver, account)
        driver.get(driver.current_url)


def test_at_a_laptops_width_the_gradebooks_key_columns_are_on_screen(
    server, students, driver, tmp_path
):
    """At 1366 px (a laptop's screen), the gradebook's view shows the run's name (the student
    and the exercise), the steps right, the points, late and the diagnosis without a
    horizontal scroll; the view before issue 58 (the control) left late off-screen and the
    points out."""
    import json

    from attention_ref.classroom.coursework.gradebook import ui_url
    from attention_ref.experiments.names import ui_experiment_url

    done = graded(server, students, "hw-laptop")
    old = "attnref-gradebook-before"
    assert (
        rest(
            server.url,
            "/api/2.0/mlflow/experiments/set-experiment-tag",
            {
                "experiment_id": done.gradebook_id,
                "key": f"mlflow.sharedViewState.{old}",
                "value": json.dumps(OLD_VIEW),
            },
            auth=server.admin,
        )[0]
        == 200
    )
    as_account(driver, server.admin)
    driver.set_window_size(*LAPTOP)
    alices = next(r for r in done.rows if r.student == "alice").run_name
    assert open_and_wait(
        driver, ui_experiment_url(server.url, done.gradebook_id, old), [alices, "diagnosis"]
    )
    assert driver.execute_script("return window.innerWidth") == LAPTOP[0]
    before = on_screen(driver, KEY_COLUMNS, seconds=8)
    shoot(driver, tmp_path, "gradebook-1366-before")
    assert "metrics.`steps_right`" in before and "metrics.`late`" not in before, before
    assert "metrics.`points`" not in before
    driver.get("about:blank")  # a page of its own: the view is read when the page loads
    assert open_and_wait(driver, ui_url(server.url, done.gradebook_id), [alices, "points"])
    after = on_screen(driver, KEY_COLUMNS)
    shoot(driver, tmp_path, "gradebook-1366")
    assert set(KEY_COLUMNS) <= set(after), after
    assert alices.startswith("alice · 1 · ")  # the name says the student, then the exercise


def test_the_class_page_links_each_gradebook_and_the_link_opens_it(
    server, students, driver, tmp_path
):
    """The class's landing page (the UI's root) shows, at the top of the class's runs, a
    link to each assignment's gradebook; followed, it opens the gradebook in its view. A
    student follows the same link to the gate's answer, no gradebook."""
    from attention_ref.classroom.coursework.gradebook import VIEW
    from attention_ref.classroom.gate.refusals import HIDDEN, REFUSAL

    done = graded(server, students, "hw-landing")
    as_account(driver, server.admin)
    driver.set_window_size(*LAPTOP)
    assert open_and_wait(driver, server.url + "/", [RUNS_TABLE_HEADER, "Gradebooks", "hw-landing"])
    shoot(driver, tmp_path, "class-landing-gradebooks")
    href = f"#/experiments/{done.gradebook_id}/runs?workflowType=machine_learning"
    view = f"&viewStateShareKey={VIEW}"
    found = driver.find_elements("css selector", f'a[href="{href}{view}"]')
    assert found and found[0].text == "hw-landing", driver.page_source[:3000]
    link = found[0]
    top = link.rect["y"] + link.rect["height"]
    assert link.is_displayed() and top < driver.execute_script("return window.innerHeight")
    followed(driver, link, server.admin)
    alices = next(r for r in done.rows if r.student == "alice").run_name
    assert shows(driver, [alices, "points", "diagnosis"])
    assert f"#/experiments/{done.gradebook_id}/runs?" in driver.current_url
    assert set(KEY_COLUMNS) <= set(on_screen(driver, KEY_COLUMNS))  # in the gradebook's view
    shoot(driver, tmp_path, "class-landing-followed")
    # the control: a student reads the same link on the same page, and is refused the rest
    bob = ("bob", students["bob"])
    as_account(driver, bob)
    driver.get("about:blank")
    assert open_and_wait(driver, server.url + "/", [RUNS_TABLE_HEADER, "hw-landing"])
    followed(driver, driver.find_element("css selector", f'a[href="{href}{view}"]'), bob)
    assert shows(driver, [REFUSAL + HIDDEN], seconds=30)
    assert alices not in driver.find_element("tag name", "body").text
