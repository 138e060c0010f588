"""Headless Chromium for tests: open a page with the network cut off, wait until it is drawn, read its DOM (shadow
roots included, closed ones too) and take screenshots. No dependency: the DevTools protocol over a pipe.

    from tests.browser import Chromium

    with Chromium.start() as browser:                 # skips the test when Chromium is absent (CI=true: fails)
        browser.open(path.as_uri(), until="document.querySelector('.md-content') !== null")
        html = browser.html()                         # the rendered DOM as HTML, shadow roots inlined
        browser.evaluate("document.title")            # any expression, its value returned as JSON
        browser.screenshot(tmp_path / "page.png", width=1200)
        assert browser.console_errors() == []         # console.error calls and uncaught exceptions, as lines
        assert browser.requests() == [path.as_uri()]  # the URL of every request the page made

Chromium: the Debian package `chromium` (`.ci/run` installs it in CI), or `$ANYTOOL_CHROMIUM`. It runs headless
with a fresh profile, without sandbox, GPU, first-run, sync, component updates or background networking, and with
every host name resolving to nothing (`--host-resolver-rules`), so a page reaches no network service: a test sees
what an offline reader sees.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-pipe")


class BrowserError(RuntimeError):
    """Chromium failed, or a page did not get ready in time."""


def chromium_path() -> str | None:
    """The Chromium binary: `$ANYTOOL_CHROMIUM`, else `chromium` / `chromium-browser` / `google-chrome` on PATH."""
    if os.environ.get("ANYTOOL_CHROMIUM"):
        return os.environ["ANYTOOL_CHROMIUM"]
    return next((p for name in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(name))), None)


def require_chromium() -> str:
    """The binary; without one the calling test skips, saying how to get it (under `CI=true` it fails instead)."""
    import pytest

    path = chromium_path()
    if path is None:
        reason = "headless Chromium is not installed (apt-get install chromium, or set ANYTOOL_CHROMIUM)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI must run this test")
        pytest.skip(reason)
    return path


class Chromium:
    """One headless Chromium with one page, driven over the DevTools protocol (`--remote-debugging-pipe`)."""

    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int) -> None:
        self._process, self._out, self._in = process, to_browser, from_browser
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []  # protocol events seen so far (console messages, page loads, ...)
        target = self._call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network"):  # Network: every request the page makes is an event
            self.call(f"{domain}.enable")

    @classmethod
    @contextmanager
    def start(cls, binary: str | None = None) -> Iterator[Chromium]:
        """A fresh browser (new profile in a temporary folder), closed on exit."""
        binary = binary or require_chromium()
        profile = tempfile.mkdtemp(prefix="chromium-")
        try:
            with cls._running(binary, profile) as browser:
                yield browser
        finally:
            _remove_profile(Path(profile))

    @classmethod
    @contextmanager
    def _running(cls, binary: str, profile: str) -> Iterator[Chromium]:
        """Chromium on `profile`, in its own process group: on exit the browser and every helper process it
        started (zygote, renderers, crash handler) are gone, so none writes into the profile while it is removed."""
        cmd_r, cmd_w = os.pipe()  # we write commands, Chromium reads them on its fd 3
        res_r, res_w = os.pipe()  # Chromium writes replies on its fd 4
        cmd_r, res_w = _above_4(cmd_r), _above_4(res_w)  # so that moving them to 3 and 4 closes neither
        argv = [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"]
        # the protocol pipe must be Chromium's fds 3 and 4: bash puts them there, then becomes Chromium
        script = f"exec 3<&{cmd_r} 4>&{res_w} {cmd_r}<&- {res_w}>&-; exec {shlex.join(argv)}"
        process = subprocess.Popen(["bash", "-c", script], pass_fds=(cmd_r, res_w), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(cmd_r)
        os.close(res_w)
        browser = None
        try:
            browser = cls(process, cmd_w, res_r)
            yield browser
        finally:
            if browser is not None:
                browser._close()
            os.close(cmd_w)
            os.close(res_r)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)  # Browser.close lets Chromium flush and exit by itself
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # stragglers of its group (the session's id is its pid)
            process.wait(timeout=30)
            _wait_group_gone(process.pid)

    # --- the protocol ------------------------------------------------------------------------------------------

    def call(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """One command to the page's session; its result."""
        return self._call(method, timeout, session=self._session, **params)

    def _call(self, method: str, timeout: float = 60, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline, method)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return dict(reply.get("result") or {})
            if "method" in reply:
                self.events.append(reply)

    def _read(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise BrowserError(f"no reply from Chromium to {waiting_for} in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited (code {self._process.poll()}) while waiting for {waiting_for}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(raw))

    def _close(self) -> None:
        with suppress(BrowserError, OSError):
            self._call("Browser.close", timeout=10)

    # --- what tests use ----------------------------------------------------------------------------------------

    def open(self, url: str, until: str = "document.readyState === 'complete'", timeout: float = 60) -> None:
        """Load `url` and wait until the JavaScript expression `until` is true (e.g. a diagram is drawn)."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"document.readyState === 'complete' && Boolean({until})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"{url}: not ready after {timeout:g} s ({until})")
            time.sleep(0.2)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def html(self) -> str:
        """The page's rendered DOM as HTML, with each shadow root's content inlined in its host (closed ones too,
        as the developer tools see them): what the reader sees, not the page's source."""
        root = self.call("DOM.getDocument", depth=-1, pierce=True)["root"]
        return _html(root)

    def console_errors(self) -> list[str]:
        """The page's `console.error` messages and uncaught exceptions so far, one line each."""
        self.evaluate("0")  # reads the events Chromium sent before now
        lines: list[str] = []
        for event in self.events:
            params = event.get("params", {})
            if event.get("method") == "Runtime.consoleAPICalled" and params.get("type") == "error":
                lines.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif event.get("method") == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                lines.append(str(details.get("exception", {}).get("description") or details.get("text", "")))
        return lines

    def requests(self) -> list[str]:
        """The URLs of every request the page made so far (`Network.requestWillBeSent`)."""
        self.evaluate("0")  # reads the events Chromium sent before now
        return [str(e["params"]["request"]["url"]) for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, width: int = 1200, height: int = 900, full_page: bool = True) -> Path:
        """A PNG of the page at `width` CSS pixels (the whole page when `full_page`)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1}
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", **params)["data"]))
        return path


def _wait_group_gone(group: int, timeout: float = 10) -> None:
    """Wait until no process of `group` is left (killed helpers take a moment to exit)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)


def _remove_profile(profile: Path, attempts: int = 20) -> None:
    """Remove the browser's profile folder; a file written while removing (a late flush) only delays it."""
    for _ in range(attempts - 1):
        try:
            shutil.rmtree(profile)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
    shutil.rmtree(profile, ignore_errors=True)


def _above_4(fd: int) -> int:
    """`fd` moved to a number above 4."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def _html(node: dict[str, Any]) -> str:
    """A DOM node from `DOM.getDocument` as HTML (shadow roots inlined as <shadow-root> elements)."""
    kind = node.get("nodeType")
    if kind == 3:  # text
        return str(node.get("nodeValue", ""))
    if kind == 8:  # comment
        return ""
    inner = "".join(_html(child) for child in [*node.get("shadowRoots", []), *node.get("children", []),
                                                 *([node["contentDocument"]] if "contentDocument" in node else [])])
    if kind in (9, 11):  # document, shadow root / fragment
        return f"<shadow-root>{inner}</shadow-root>" if kind == 11 else inner
    name = str(node.get("localName") or node.get("nodeName", "")).lower()
    if not name:
        return inner
    values = node.get("attributes", [])
    attrs = "".join(f' {values[i]}="{values[i + 1]}"' for i in range(0, len(values), 2))
    return f"<{name}{attrs}>{inner}</{name}>"
