"""Headless Chromium for tests (a minimal helper: branch first-docs is writing the shared one with the same calls):
open a page with the network cut off, evaluate JavaScript in it, collect console errors and requests, take a
screenshot. The DevTools protocol over a pipe (`--remote-debugging-pipe`): no dependency, nothing downloaded.

    with Chromium.start() as browser:      # skips when Chromium is absent (under CI=true: fails)
        browser.open(path.as_uri())
        browser.evaluate("document.title")
        browser.screenshot(tmp_path / "page.png")
        assert browser.console_errors() == []

Chromium: Debian's `chromium` (`.ci/run` installs it), or `$ANYTOOL_CHROMIUM`; headless, fresh profile, no sandbox,
GPU, first run, sync, component updates or background networking; every host name resolves to nothing.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
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
    """Chromium failed, or a page was not ready in time."""


def _above_4(fd: int) -> int:
    """`fd` moved to a number above 4 (close-on-exec: only its copies on 3 and 4 reach Chromium)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def chromium_path() -> str | None:
    if os.environ.get("ANYTOOL_CHROMIUM"):
        return os.environ["ANYTOOL_CHROMIUM"]
    return next((p for name in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(name))), None)


def require_chromium() -> str:
    import pytest

    path = chromium_path()
    if path is None:
        reason = "headless Chromium is not installed (apt-get install chromium, or set ANYTOOL_CHROMIUM)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI must run this test")
        pytest.skip(reason)
    return path


class Chromium:
    """One headless Chromium with one page (a flattened DevTools session)."""

    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int) -> None:
        self._process, self._out, self._in = process, to_browser, from_browser
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self._call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable")

    @classmethod
    @contextmanager
    def start(cls, binary: str | None = None) -> Iterator[Chromium]:
        binary = binary or require_chromium()
        with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
            to_r, to_w = os.pipe()  # commands: Chromium reads its fd 3
            from_r, from_w = os.pipe()  # replies: Chromium writes its fd 4
            to_r, from_w = _above_4(to_r), _above_4(from_w)  # so that placing one on 3 or 4 clobbers neither

            def child_fds() -> None:  # in the child, before exec: the pipe ends on fds 3 and 4
                os.dup2(to_r, 3)
                os.dup2(from_w, 4)

            process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                       pass_fds=(3, 4), preexec_fn=child_fds, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.close(to_r)
            os.close(from_w)
            browser = None
            try:
                browser = cls(process, to_w, from_r)
                yield browser
            finally:
                if browser is not None:
                    with suppress(BrowserError, OSError):
                        browser._call("Browser.close", timeout=10)
                os.close(to_w)
                os.close(from_r)
                if process.poll() is None:
                    process.kill()
                process.wait(timeout=30)

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
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._in], [], [], left)[0]:
                    raise BrowserError(f"no reply from Chromium to {method} in time")
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium exited (code {self._process.poll()}) during {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return dict(reply.get("result") or {})
            if "method" in reply:
                self.events.append(reply)

    def open(self, url: str, until: str = "true", timeout: float = 60) -> None:
        """Load `url`; wait until it is loaded and the JavaScript expression `until` is true."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"document.readyState === 'complete' && Boolean({until})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"{url}: not ready after {timeout:g} s ({until})")
            time.sleep(0.1)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def console_errors(self) -> list[str]:
        """`console.error` messages and uncaught exceptions so far, one line each."""
        self.evaluate("0")
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
        self.evaluate("0")
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
