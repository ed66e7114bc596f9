"""Headless Chromium for the report's browser tests: finding it, its flags, and a small
DevTools-protocol client over `--remote-debugging-pipe` (JSON messages ended by a NUL
byte on file descriptors 3 and 4), so a test can read the page's layout with no driver,
no websocket library and no network port."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

# No network (background services off), no GPU, no sandbox (root in a container), and a
# fresh profile for every run.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--hide-scrollbars",
)
TIMEOUT_S = 60.0


def find_chromium() -> str:
    """Chromium's path. Without it the test is skipped, saying why; in CI (CI=true) on
    a machine with apt-get, where `./install.sh dev` installs Debian's chromium, it
    fails instead: there the browser could have been installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "Chromium is not installed: ./install.sh dev installs Debian's chromium"
        if os.environ.get("CI") == "true" and shutil.which("apt-get"):
            pytest.fail(message)
        if not shutil.which("apt-get"):
            message = "Chromium is not installed and this machine has no apt-get to install it"
        pytest.skip(message)
    return found


class DevTools:
    """One headless Chromium driven over its DevTools pipe, with one page open."""

    def __init__(self, chromium: str, profile: Path, width: int, height: int) -> None:
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def pipes_as_3_and_4() -> None:  # the child's fds 3 (commands) and 4 (answers)
            # Out of the way first: either pipe end may itself be fd 3 or 4.
            commands = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
            answers = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            [
                chromium,
                *FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=pipes_as_3_and_4,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.session: str | None = None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        # The viewport exactly as asked, whatever the window's frame takes.
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._receive()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("Chromium did not answer over the DevTools pipe")
            chunk = os.read(self._from_browser, 65536)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> None:
        """Loads `url` and waits until the page and its script have run."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + TIMEOUT_S
        while self.evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading")
            time.sleep(0.05)

    def screenshot(self, out: Path) -> Path:
        """What the viewport shows, as PNG."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        out.write_bytes(base64.b64decode(data))
        return out

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        os.close(self._to_browser)
        os.close(self._from_browser)

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
