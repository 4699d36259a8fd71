"""The book's offline verdict (`tests.book.browser.offline_verdict`) judged on its own: it
must catch a page that loads from another host (an image, an image in a frame, a worker's
fetch), and must not blame the book for the browser's own background requests, which
Chromium's releases add to (issue 43: Debian 12's Chromium 150 went to www.google.com)."""

from __future__ import annotations

import json

import pytest

from tests.book.browser import (
    RecordingProxy,
    browser_own,
    make_driver,
    offline_verdict,
    page_fetches,
    page_requests,
    serve_dir,
)

pytestmark = pytest.mark.slow

PAGE = """<!doctype html><html><body><p>offline?</p>
<img src="http://example.invalid/page.png">
<iframe src="frame.html"></iframe>
<script>new Worker("worker.js");</script>
</body></html>"""
FRAME = '<!doctype html><img src="https://frame.example.invalid/frame.png">'
WORKER = 'fetch("https://worker.example.invalid/data.json").catch(() => {});'
OUT = [
    "http://example.invalid/page.png",
    "https://frame.example.invalid/frame.png",
    "https://worker.example.invalid/data.json",
]


def visit(folder, page: str, netlog) -> tuple[list[str], str]:
    import time

    with serve_dir(folder) as base, RecordingProxy() as proxy:
        drv = make_driver(proxy, netlog=netlog)
        try:
            drv.get(f"{base}/{page}")
            time.sleep(1.5)  # the frame and the worker
            requests = page_requests(drv)
        finally:
            drv.quit()
    return offline_verdict(requests, netlog, proxy)


def test_the_verdict_catches_a_page_a_frame_and_a_worker_that_go_out(chromium, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE)
    (site / "frame.html").write_text(FRAME)
    (site / "worker.js").write_text(WORKER)
    (site / "quiet.html").write_text("<!doctype html><p>nothing from elsewhere</p>")
    fetched, _ = visit(site, "index.html", tmp_path / "loud.json")
    assert fetched == OUT
    # the control: the same server, a page that loads nothing from another host
    fetched, _ = visit(site, "quiet.html", tmp_path / "quiet.json")
    assert fetched == []


def netlog_of(requests: list[tuple[str, str | None]]) -> dict:
    """A NetLog as Chromium writes it, with these ``(url, initiator)`` requests."""
    events = []
    for url, initiator in requests:
        params = {"url": url, "method": "GET", "load_flags": 0}
        if initiator is not None:
            params["initiator"] = initiator
        events.append({"type": 7, "phase": 1, "source": {"id": 1, "type": 1}, "params": params})
    events.append({"type": 3, "phase": 0, "source": {"id": 2, "type": 2}, "params": {}})
    return {
        "constants": {"logEventTypes": {"URL_REQUEST_START_JOB": 7, "SOCKET": 3}},
        "events": events,
    }


def test_the_browsers_own_requests_are_reported_and_not_judged(tmp_path):
    log = tmp_path / "netlog.json"
    own = [
        ("https://www.google.com/", "not an origin"),  # what Chromium 150 did on Debian 12
        ("https://update.googleapis.com/service/update2/json", None),
        ("http://127.0.0.1:8000/worked-example/", "not an origin"),  # the test's navigation
    ]
    page = [("http://127.0.0.1:8000/assets/katex.js", "http://127.0.0.1:8000")]
    log.write_text(json.dumps(netlog_of([*own, *page])))
    assert page_fetches(log) == ["http://127.0.0.1:8000/assets/katex.js"]
    assert browser_own(log) == [own[0][0], own[1][0]]
    # the control: the same log with the page asking another host
    log.write_text(
        json.dumps(netlog_of([*own, ("https://cdn.example/x.js", "http://127.0.0.1:8000")]))
    )
    assert page_fetches(log) == ["https://cdn.example/x.js"]
    # a log the browser did not close (killed mid-write) is read up to its last event
    text = json.dumps(netlog_of(page))
    log.write_text(text[: text.rindex("]")] + ",\n")
    assert page_fetches(log) == ["http://127.0.0.1:8000/assets/katex.js"]
