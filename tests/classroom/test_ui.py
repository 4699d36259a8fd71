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
    the gradebook's view: the grade's columns (steps right, steps given, first wrong step,
    diagnosis) first, the runs by student. A student who opens that link reads why there is
    nothing (the gate's one answer), not a blank page."""
    from attention_ref.classroom.connection.class_client import ClassClient
    from attention_ref.classroom.coursework.assignment import Assignment
    from attention_ref.classroom.coursework.gradebook import SHOWN_COLUMNS, VIEW, ui_url
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
    ok = open_and_wait(driver, link, [*names, "steps_right", "steps_given", "first_wrong"])
    shoot(driver, tmp_path, "class-gradebook")
    assert ok, driver.find_element("tag name", "body").text[:3000]
    # on screen at 1280 px: the steps, the first wrong step, the diagnosis (the view also
    # puts them first; the UI applies that order only once its table has settled)
    shown = grade_columns(driver)
    assert set(shown) <= set(SHOWN_COLUMNS) and set(SHOWN_COLUMNS[:4]) <= set(shown), shown

    def cell(row: int, column: str) -> str:
        found = driver.find_elements(
            "css selector", f".ag-row[row-index='{row}'] [col-id='{column}']"
        )
        return found[0].text if found else ""

    want = [str(alices.steps_right), str(alices.steps_given), alices.first_wrong, alices.diagnosis]
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
