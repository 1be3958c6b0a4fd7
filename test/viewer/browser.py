"""Headless Chromium driven through its DevTools protocol, for the viewer tests.

Chromium starts with a throw-away profile, software WebGL (SwiftShader) and every background
service off; `--remote-debugging-port=0` lets it pick a free port, which it writes to
DevToolsActivePort in the profile. The protocol is JSON over a websocket (`websockets`, which
viser already needs): one command at a time, events kept for the caller. Every request the
page makes is recorded, so a test can check that nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import base64
import contextlib
import io
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

FLAGS = ("--headless", "--no-sandbox", "--use-gl=swiftshader", "--enable-unsafe-swiftshader",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--no-default-browser-check", "--disable-features=Translate",
         "--hide-scrollbars", "--mute-audio")
LOCAL_HOSTS = ("127.0.0.1", "localhost")


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page (`width` x `height` CSS pixels)."""

    def __init__(self, width: int = 1280, height: int = 800, timeout: float = 30.0) -> None:
        from websockets.sync.client import connect

        binary = chromium_path()
        if binary is None:
            raise RuntimeError("chromium not found")
        self._profile = tempfile.TemporaryDirectory(prefix="mb_sim_chromium_")
        profile = Path(self._profile.name)
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        end = time.monotonic() + timeout
        while not port_file.is_file() or not port_file.read_text().strip():
            if time.monotonic() > end or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        self._ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=10,
                           ping_interval=None)  # read only while a command waits
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        self.requests: list[str] = []
        self.send("Network.enable")
        self.send("Page.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def send(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        """Run one DevTools command; its result (RuntimeError on a protocol error)."""
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        end = time.monotonic() + timeout
        while True:
            raw = self._ws.recv(timeout=max(0.01, end - time.monotonic()))
            msg = json.loads(raw)
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self._event(msg)

    def _event(self, msg: dict[str, Any]) -> None:
        if msg["method"] == "Network.requestWillBeSent":
            self.requests.append(msg["params"]["request"]["url"])
        self.events.append(msg)

    def foreign_requests(self) -> list[str]:
        """URLs the page asked for that are not on this machine (data: and blob: are local)."""
        out = []
        for url in self.requests:
            parsed = urlparse(url)
            if parsed.scheme in ("data", "blob", "about"):
                continue
            if parsed.hostname not in LOCAL_HOSTS:
                out.append(url)
        return out

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self) -> np.ndarray:
        """The page as an (height, width, 3) uint8 RGB array."""
        from PIL import Image

        data = self.send("Page.captureScreenshot", format="png")["data"]
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))

    def wait_for(self, check: Callable[[np.ndarray], bool], timeout: float = 60.0,
                 period: float = 0.5) -> np.ndarray:
        """Screenshots until check(image) holds; the last one. TimeoutError with none. The
        page's notices are closed before each one (they cover the scene's corner)."""
        end = time.monotonic() + timeout
        while True:
            self.close_notifications()
            image = self.screenshot()
            if check(image):
                return image
            if time.monotonic() > end:
                from PIL import Image

                shown = Path(tempfile.gettempdir()) / "mb_sim_viewer_timeout.png"
                Image.fromarray(image).save(shown)
                raise TimeoutError(f"the page did not show what was expected within "
                                   f"{timeout:g} s; it showed {shown}")
            time.sleep(period)

    def click_button(self, label: str) -> None:
        """Click the first button whose text is `label`."""
        found = self.evaluate(
            "(() => { const b = [...document.querySelectorAll('button')].find("
            f"e => e.textContent.trim() === {json.dumps(label)}); if (!b) return false; "
            "b.click(); return true; })()")
        if not found:
            raise LookupError(f"no button {label!r} on the page")

    def text(self) -> str:
        """The text of the page (the panel's status line among it)."""
        return str(self.evaluate("document.body ? document.body.innerText : ''"))

    def close_notifications(self) -> None:
        """Close the notices in the page's corner (e.g. that WebGL runs in software)."""
        self.evaluate(
            "document.querySelectorAll('.mantine-Notification-root button')"
            ".forEach(b => b.click())")

    def save(self, path: Path, settle: float = 0.0) -> np.ndarray:
        """A screenshot after `settle` seconds, written to `path` as PNG; the image."""
        from PIL import Image

        time.sleep(settle)
        image = self.screenshot()
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(path, optimize=True)
        return image

    def close(self) -> None:
        ws = getattr(self, "_ws", None)
        if ws is not None:
            with contextlib.suppress(Exception):  # closing anyway
                self.send("Browser.close", timeout=5)
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._profile.cleanup()
