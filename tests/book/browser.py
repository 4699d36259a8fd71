"""Headless Chromium (Debian packages) driven by Selenium, fully offline.

Reusable pieces:
  serve_dir(path)        -> context manager, serves a folder on 127.0.0.1:<free port>
  RecordingProxy()       -> context manager, a fake HTTP proxy that records (and refuses)
                            every request Chromium tries to send to a non-loopback host
  make_driver(proxy)     -> selenium Chrome driver using $CHROMEDRIVER (/usr/bin/chromedriver)
  page_requests(driver)  -> URLs the page requested (from Chrome performance logs / CDP)
  page_fetches(netlog)   -> URLs the pages, their frames and workers requested, from the
                            browser's own network log (NetLog), by initiator
  external(urls)         -> the subset whose host is not 127.0.0.1/localhost

The offline verdict is what the pages asked for: a request whose initiator is a page's origin
(the page, a frame, a worker). The browser's own background traffic (component updates,
accounts, a search engine's preconnect), which each Chromium release adds to and which the
flags below chase version by version, has no page as initiator: it is refused by the recording
proxy and reported, never counted against the book. ``tests/book/test_offline_verdict.py``
holds the verdict to a page that loads from another host (an image, a frame's image, a
worker's fetch), and to a NetLog where only the browser itself went out.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import socketserver
import threading
from urllib.parse import urlsplit

# Belt and braces: Selenium Manager must never run / download anything.
os.environ.setdefault("SE_OFFLINE", "true")
os.environ.setdefault("SE_AVOID_STATS", "true")

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common import selenium_manager

# CHROMEDRIVER and CHROMIUM_BINARY choose another Chromium (e.g. an older release unpacked from
# its Debian packages, to hold the verdicts to it); the tests' "is it installed" checks read
# the same CHROMEDRIVER.
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get(
    "CHROMIUM_BINARY", "/usr/lib/chromium/chromium"
)  # real binary, not the Debian wrapper script
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _forbid_selenium_manager(*_a, **_k):
    raise RuntimeError("Selenium Manager was invoked; it must not be (offline build)")


selenium_manager.SeleniumManager.binary_paths = _forbid_selenium_manager

CHROME_ARGS = [
    "--headless=new",
    "--no-sandbox",  # required when running as root (else: exits at start)
    "--disable-dev-shm-usage",  # containers often have a small /dev/shm
    "--disable-gpu",
    "--window-size=1280,900",
    "--hide-scrollbars",
    # keep the browser itself quiet on the network:
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,"
    "AutofillServerCommunication,InterestFeedContentSuggestions",
    # Chromium 156 still phones home despite the flags above (found with RecordingProxy):
    #  - update.googleapis.com  on-demand component 'ceofaddefefcbblgcgnibnonglccbfja'
    #    (Optimization Guide on-device models manifest), even with --disable-component-update
    #  - accounts.google.com    (GAIA)
    # Point both at a closed loopback port (9/discard) so they fail locally:
    "--component-updater=url-source=http://127.0.0.1:9/",
    "--gaia-url=http://127.0.0.1:9",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


@contextlib.contextmanager
def serve_dir(path: str | os.PathLike, port: int = 0):
    """Serve `path` on 127.0.0.1 (free port unless given) in a daemon thread; yields base URL."""
    handler = functools.partial(_QuietHandler, directory=str(path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class RecordingProxy:
    """Fake proxy on 127.0.0.1. Chromium is started with --proxy-server pointing here;
    loopback is bypassed by Chromium's default rules, so ANY request reaching the proxy
    is an attempt to leave 127.0.0.1 (page *or* browser background traffic).
    Requests are recorded and answered with 403 (nothing is forwarded)."""

    def __init__(self):
        self.seen: list[str] = []
        outer = self

        class H(socketserver.StreamRequestHandler):
            def handle(self):
                line = self.rfile.readline(8192).decode("latin-1").strip()
                if line:
                    outer.seen.append(line)
                self.wfile.write(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )

        self._srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
        self._srv.daemon_threads = True
        self.port = self._srv.server_address[1]

    def __enter__(self):
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._srv.shutdown()
        self._srv.server_close()


def make_driver(proxy: RecordingProxy | None = None, extra_args=(), netlog=None):
    """Chromium through ``proxy``; with ``netlog`` (a path), its NetLog written there (read
    it with `page_fetches` after ``quit``)."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in CHROME_ARGS:
        opts.add_argument(a)
    if proxy is not None:
        opts.add_argument(f"--proxy-server=http://127.0.0.1:{proxy.port}")
    if netlog is not None:
        opts.add_argument(f"--log-net-log={netlog}")
        opts.add_argument("--net-log-capture-mode=Default")
    for a in extra_args:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER)  # explicit => Selenium Manager skipped
    drv = webdriver.Chrome(service=service, options=opts)
    drv.execute_cdp_cmd("Network.enable", {})
    return drv


def page_requests(driver) -> list[str]:
    """All URLs requested since the last call (Network.requestWillBeSent events).
    Note: reading the performance log drains it."""
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def _url_requests(netlog) -> list[tuple[str, str]]:
    """``(url, initiator)`` of every request the NetLog at ``netlog`` started (its
    ``URL_REQUEST_START_JOB`` events); the initiator is an origin for what a page, a frame or
    a worker asked, ``"not an origin"`` for the browser's own requests and its navigations."""
    with open(netlog, encoding="utf-8") as f:
        text = f.read()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a browser that did not close its log: the events so far
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        (e["params"]["url"], str(e["params"].get("initiator", "not an origin")))
        for e in log["events"]
        if e.get("type") == start and "url" in e.get("params", {})
    ]


def page_fetches(netlog) -> list[str]:
    """What the pages asked for, by the NetLog at ``netlog``: the URL of every request whose
    initiator is an origin (a page, one of its frames or workers)."""
    return [url for url, initiator in _url_requests(netlog) if "://" in initiator]


def browser_own(netlog) -> list[str]:
    """The browser's own requests to other hosts (no page as initiator): reported, not judged."""
    own = [url for url, initiator in _url_requests(netlog) if "://" not in initiator]
    return external(own)


def external(urls) -> list[str]:
    out = []
    for u in urls:
        parts = urlsplit(u)
        if parts.scheme in ("data", "blob", "about", "chrome", "devtools"):
            continue
        if (parts.hostname or "") not in LOOPBACK:
            out.append(u)
    return out


def offline_verdict(requests, netlog, proxy: RecordingProxy) -> tuple[list[str], str]:
    """What the pages fetched from another host (their DevTools log, ``requests``, and the
    NetLog at ``netlog``, by initiator), and, in words for an assertion's message, what the
    browser itself tried (the proxy refused it all)."""
    fetched = sorted(set(external(requests)) | set(external(page_fetches(netlog))))
    said = f"the browser's own requests: {browser_own(netlog)}; at the proxy: {proxy.seen}"
    return fetched, said
