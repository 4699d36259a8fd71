"""The attention explorer page in headless Chromium: it loads offline, the reader's clicks
change what it shows, hovering a character shows that character's row of ``A``, and the
page's JavaScript forward pass gives torch's attention (and next-character probabilities).

The reference is torch: a `CharGPT` built from the very files the built site serves
(``results/explorer/``), asked for `CharGPT.attention_maps`.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import torch

from attention_ref.experiments.explorer import read_weights
from attention_ref.lm.config import ModelConfig
from attention_ref.lm.model import CharGPT
from tests.book.conftest import SHOTS

pytestmark = pytest.mark.slow

#: a line of no play, with a newline, spaces and punctuation (all in the vocabulary)
TYPED = "HAMLET:\nTo be, or not to be: that is the question;\nwhether 'tis nobler?"


def torch_model(site: Path) -> tuple[CharGPT, dict[str, int]]:
    """The model the page runs, in torch, from the site's own files."""
    m = json.loads((site / "results" / "explorer" / "model.json").read_text(encoding="utf-8"))
    keys = ("vocab_size", "block_size", "n_embd", "n_layer", "n_head")
    model = CharGPT(ModelConfig(**{k: m["config"][k] for k in keys}))
    model.load_state_dict(read_weights(site / "results" / "explorer"))
    model.eval()
    return model, {c: i for i, c in enumerate(m["chars"])}


def js(drv, expr: str):
    """Await a Promise returned by ``expr`` in the page."""
    return drv.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"Promise.resolve({expr}).then(done, e => done({{error: String(e)}}));"
    )


def shown(drv) -> dict:
    """What the explorer shows: its state, each character's weight, the info line, the heatmap."""
    return drv.execute_script(
        """
        const root = document.getElementById('attnref-explorer');
        const chars = [...root.querySelectorAll('.ax-char')];
        return {
          state: window.attnrefExplorer.view.state(),
          glyphs: chars.map(s => s.textContent).join(''),
          weights: chars.map(s => s.dataset.w === '' ? null : Number(s.dataset.w)),
          future: chars.map(s => s.classList.contains('ax-future')),
          info: root.querySelector('.ax-info').textContent,
          message: root.querySelector('.ax-message').textContent,
          heatmap: root.querySelector('canvas.ax-heatmap').toDataURL(),
          pressed: [...root.querySelectorAll('[aria-pressed="true"]')].map(b => b.textContent),
        };"""
    )


def test_the_explorer_runs_offline_and_answers_the_reader(site, chromium, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.book.browser import (
        RecordingProxy,
        make_driver,
        offline_verdict,
        page_requests,
        serve_dir,
    )

    model, stoi = torch_model(site)
    lines = json.loads((site / "results" / "explorer" / "lines.json").read_text())["lines"]
    requests: list[str] = []
    netlog = tmp_path / "netlog.json"
    with serve_dir(site) as base, RecordingProxy() as proxy:
        drv = make_driver(proxy, netlog=netlog)
        drv.set_script_timeout(60)
        try:
            drv.get(f"{base}/explorer/")
            WebDriverWait(drv, 30).until(
                lambda d: d.execute_script(
                    "return !!(window.attnrefExplorer && window.attnrefExplorer.view)"
                )
            )
            root = drv.find_element(By.ID, "attnref-explorer")
            first = shown(drv)
            # the first recorded line, layer 1, head 1, its last character picked
            assert first["state"]["line"] == 0 and first["state"]["typed"] is False
            assert first["glyphs"] == lines[0]["text"].replace("\n", "↵").replace(" ", "␣")
            T = len(lines[0]["text"])
            assert first["weights"] == lines[0]["attention"][0][0][T - 1]
            assert first["info"].startswith(f"Position {T}, ")

            # the reader clicks head 2, then layer 2: the weights, the heatmap and the buttons
            # pressed change, and they are the recorded ones of that layer and head
            def pick(group: str, n: int) -> dict:
                buttons = root.find_elements(
                    By.CSS_SELECTOR, f'[aria-label="{group}"] button.ax-button'
                )
                buttons[n].click()
                return shown(drv)

            head2 = pick("Head", 1)
            assert head2["state"]["head"] == 1 and head2["weights"] != first["weights"]
            assert head2["heatmap"] != first["heatmap"]
            assert head2["weights"] == lines[0]["attention"][0][1][T - 1]
            layer2 = pick("Layer", 1)
            assert layer2["state"]["layer"] == 1 and layer2["heatmap"] != head2["heatmap"]
            assert layer2["weights"] == lines[0]["attention"][1][1][T - 1]
            assert layer2["pressed"] != head2["pressed"]

            # hovering a character shows its row: weights up to it, the rest masked
            k = 12
            spans = root.find_elements(By.CSS_SELECTOR, ".ax-char")
            ActionChains(drv).move_to_element(spans[k]).perform()
            hovered = shown(drv)
            assert hovered["state"]["active"] == k
            assert hovered["weights"][: k + 1] == lines[0]["attention"][1][1][k]
            assert hovered["weights"][k + 1 :] == [None] * (T - k - 1)
            assert hovered["future"] == [j > k for j in range(T)]
            assert hovered["info"].startswith(f"Position {k + 1}, ")
            assert hovered["heatmap"] != layer2["heatmap"]  # the framed row moved

            # another recorded line
            third = pick("Line", 2)
            assert third["state"]["line"] == 2
            assert third["glyphs"] == lines[2]["text"].replace("\n", "↵").replace(" ", "␣")

            # a character outside the vocabulary is refused, and nothing changes
            area = root.find_element(By.CSS_SELECTOR, "textarea.ax-input")
            area.send_keys("café {ok}")
            root.find_element(By.CSS_SELECTOR, "button.ax-run").click()
            refused = shown(drv)
            assert "‘é’" in refused["message"] and "‘{’" in refused["message"]
            assert refused["state"] == third["state"] and refused["glyphs"] == third["glyphs"]

            # a typed line runs in the page; what it shows is torch's attention
            area.clear()
            drv.execute_script("arguments[0].value = arguments[1]", area, TYPED)
            root.find_element(By.CSS_SELECTOR, "button.ax-run").click()
            typed = shown(drv)
            assert typed["state"]["typed"] is True and typed["state"]["text"] == TYPED
            idx = torch.tensor([[stoi[c] for c in TYPED]])
            maps = model.attention_maps(idx)  # [(1, h, T, T)] per layer
            n = len(TYPED)
            layer, head = typed["state"]["layer"], typed["state"]["head"]
            want = maps[layer][0, head, n - 1]
            assert torch.allclose(torch.tensor(typed["weights"]), want, rtol=0, atol=1e-4)

            # the forward pass itself, every layer and head, and the probabilities
            got = js(drv, f"window.attnrefExplorer.attention({json.dumps(TYPED)})")
            assert "error" not in got, got
            probs = js(drv, f"window.attnrefExplorer.probabilities({json.dumps(TYPED)})")
            worst = 0.0
            for A, layer_rows in zip(maps, got, strict=True):
                for head_A, rows in zip(A[0], layer_rows, strict=True):
                    assert [len(r) for r in rows] == list(range(1, n + 1))
                    full = torch.zeros(n, n, dtype=torch.float64)
                    for i, r in enumerate(rows):
                        full[i, : i + 1] = torch.tensor(r, dtype=torch.float64)
                    worst = max(worst, (full - head_A.double()).abs().max().item())
            assert worst <= 1e-4, worst
            want_p = model(idx)[0][0].softmax(-1).double()
            assert (torch.tensor(probs, dtype=torch.float64) - want_p).abs().max() <= 1e-4
            # and on a recorded line, the recorded weights
            again = js(drv, f"window.attnrefExplorer.attention({json.dumps(lines[0]['text'])})")
            assert (
                max(
                    abs(a - b)
                    for ll, rl in zip(again, lines[0]["attention"], strict=True)
                    for hl, rh in zip(ll, rl, strict=True)
                    for row_a, row_b in zip(hl, rh, strict=True)
                    for a, b in zip(row_a, row_b, strict=True)
                )
                <= 1e-4
            )

            # the screenshot of the closing note: a recorded line, a character picked
            pick("Line", 0)
            ActionChains(drv).move_to_element(
                root.find_elements(By.CSS_SELECTOR, ".ax-char")[30]
            ).perform()
            drv.execute_script("arguments[0].value = ''", area)
            drv.set_window_size(1280, 1500)
            drv.execute_script("window.scrollTo(0, 0)")
            time.sleep(0.5)
            SHOTS.mkdir(parents=True, exist_ok=True)
            drv.save_screenshot(str(SHOTS / "explorer.png"))
            requests += page_requests(drv)
            severe = [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]
        finally:
            drv.quit()
    assert any(u.endswith("/results/explorer/weights.bin") for u in requests)
    fetched, browser = offline_verdict(requests, netlog, proxy)
    assert fetched == [], (fetched, browser)  # the pages' own requests, not the browser's
    assert severe == []
    assert (SHOTS / "explorer.png").stat().st_size > 10_000


def test_the_explorer_reports_missing_data(site, chromium, tmp_path):
    """Without its data files the page says so (and logs the error), instead of a blank box:
    the console check above can fail."""
    import shutil

    from selenium.webdriver.support.ui import WebDriverWait

    from tests.book.browser import make_driver, serve_dir

    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    (copy / "results" / "explorer" / "weights.bin").unlink()
    with serve_dir(copy) as base:
        drv = make_driver()
        try:
            drv.get(f"{base}/explorer/")
            WebDriverWait(drv, 30).until(
                lambda d: "could not load" in d.find_element("css selector", ".ax-status").text
            )
            severe = [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]
        finally:
            drv.quit()
    assert any("weights.bin" in m for m in severe), severe


def test_the_portuguese_explorer_speaks_portuguese_and_shows_the_same_weights(site, chromium):
    """The widget of ``pt/explorer`` writes its words in Portuguese (decimal commas) and shows
    the recorded weights the English page shows; the English page is the control."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.book.browser import make_driver, serve_dir

    lines = json.loads((site / "results" / "explorer" / "lines.json").read_text())["lines"]
    T = len(lines[0]["text"])
    seen = {}
    with serve_dir(site) as base:
        drv = make_driver()
        try:
            for page in ("pt/explorer", "explorer"):
                drv.get(f"{base}/{page}/")
                WebDriverWait(drv, 30).until(
                    lambda d: d.execute_script(
                        "return !!(window.attnrefExplorer && window.attnrefExplorer.view)"
                    )
                )
                root = drv.find_element(By.ID, "attnref-explorer")
                seen[page] = (shown(drv), root.text)
        finally:
            drv.quit()
    pt, pt_text = seen["pt/explorer"]
    en, en_text = seen["explorer"]
    assert pt["weights"] == en["weights"] == lines[0]["attention"][0][0][T - 1]
    assert pt["info"].startswith(f"A posição {T}, ") and "olha mais para" in pt["info"]
    assert re.search(r"\(\d,\d{3}\)", pt["info"]) and not re.search(r"\d\.\d", pt["info"])
    assert en["info"].startswith(f"Position {T}, ") and re.search(r"\(\d\.\d{3}\)", en["info"])
    assert "Executar" in pt_text and "Camada" in pt_text and "Layer" not in pt_text
    assert "Run" in en_text and "Layer" in en_text
