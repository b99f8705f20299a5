"""A small Chrome DevTools Protocol client: drives Debian's headless ``chromium`` for the
console's browser tests and its screenshots (scripts/console_screenshots.py).

``Browser.start`` runs chromium on a throw-away profile with remote debugging on a free
loopback port (read from the profile's ``DevToolsActivePort``) and talks to it over one
websocket (aiohttp); ``new_page`` opens a tab at a given viewport. A page can load a
URL, evaluate JavaScript, wait for a condition, press an element with real mouse events
(at its centre, after scrolling it into view) and save a PNG screenshot. JavaScript
dialogs (``confirm``) are accepted. ``BrowserUnavailable`` says why chromium could not
start (missing, or it exits), so a test can skip naming the reason.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
START_TIMEOUT = 20.0
CALL_TIMEOUT = 20.0


class BrowserUnavailable(RuntimeError):
    """Chromium could not be started (the message says why)."""


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise BrowserUnavailable("chromium is not installed (Debian: apt-get install chromium)")


class Browser:
    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._profile: str | None = None
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.console_messages: list[str] = []

    async def start(self) -> Browser:
        exe = chromium_path()
        self._profile = tempfile.mkdtemp(prefix="headway-chromium-")
        argv = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", "about:blank"]
        self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                await self.close()
                last = err.strip().splitlines()[-1:] or ["no output"]
                raise BrowserUnavailable(f"chromium exited at start: {last[0][:300]}")
            text = port_file.read_text() if port_file.exists() else ""
            lines = text.split()
            if len(lines) >= 2:
                break
            if time.monotonic() > deadline:
                await self.close()
                raise BrowserUnavailable("chromium did not open its debugging port in time")
            await asyncio.sleep(0.05)
        url = f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        self._session = aiohttp.ClientSession()
        self._ws = await self._session.ws_connect(url, max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self._ws is not None
        async for msg in self._ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            data = json.loads(msg.data)
            if "id" in data:
                fut = self._pending.pop(data["id"], None)
                if fut is not None and not fut.done():
                    if "error" in data:
                        fut.set_exception(RuntimeError(f"CDP error: {data['error']}"))
                    else:
                        fut.set_result(data.get("result", {}))
            elif data.get("method") == "Page.javascriptDialogOpening":
                asyncio.get_running_loop().create_task(
                    self.call(
                        "Page.handleJavaScriptDialog",
                        {"accept": True},
                        session=data.get("sessionId"),
                        wait=False,
                    )
                )
            elif data.get("method") == "Runtime.consoleAPICalled":
                args = data["params"].get("args", [])
                self.console_messages.append(" ".join(str(a.get("value", "")) for a in args))
            elif data.get("method") == "Runtime.exceptionThrown":
                details = data["params"].get("exceptionDetails", {})
                self.console_messages.append("exception: " + json.dumps(details)[:500])
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(RuntimeError("the browser closed the connection"))

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        wait: bool = True,
    ) -> Any:
        assert self._ws is not None, "start() first"
        mid = next(self._ids)
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session is not None:
            msg["sessionId"] = session
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[mid] = fut
        await self._ws.send_str(json.dumps(msg))
        if not wait:
            return None
        async with asyncio.timeout(CALL_TIMEOUT):
            return await fut

    async def new_page(self, width: int = 1280, height: int = 900, *, mobile: bool = False) -> Page:
        target = await self.call("Target.createTarget", {"url": "about:blank"})
        attached = await self.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        page = Page(self, attached["sessionId"])
        await page.call("Page.enable")
        await page.call("Runtime.enable")
        await page.set_viewport(width, height, mobile=mobile)
        return page

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._session is not None:
            await self._session.close()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)
            if self._proc.stderr is not None:
                self._proc.stderr.close()
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)

    async def __aenter__(self) -> Browser:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self._browser = browser
        self._session = session

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self._browser.call(method, params, session=self._session)

    async def set_viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": width,
                "height": height,
                "deviceScaleFactor": 2 if mobile else 1,
                "mobile": mobile,
            },
        )

    async def goto(self, url: str, timeout: float = 15.0) -> None:
        await self.call("Page.navigate", {"url": url})
        await self.wait_for("document.readyState === 'complete'", timeout)

    async def evaluate(self, expression: str) -> Any:
        result = await self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    async def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Poll ``expression`` until it is truthy; its value. ``TimeoutError`` after
        ``timeout`` seconds, naming the expression."""
        deadline = time.monotonic() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} s for: {expression}")
            await asyncio.sleep(0.1)

    async def text(self, selector: str) -> str:
        return str(
            await self.evaluate(f"document.querySelector({json.dumps(selector)}).textContent")
        )

    async def press(self, selector: str) -> None:
        """Press the element as a person would: a mouse click at its centre."""
        box = await self.evaluate(
            f"""(() => {{
                const e = document.querySelector({json.dumps(selector)});
                if (!e) return null;
                e.scrollIntoView({{block: 'center'}});
                const r = e.getBoundingClientRect();
                return {{x: r.left + r.width / 2, y: r.top + r.height / 2, off: e.disabled}};
            }})()"""
        )
        if box is None:
            raise LookupError(f"no element {selector}")
        if box["off"]:
            raise RuntimeError(f"{selector} is disabled")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1},
            )

    async def screenshot(self, path: Path, *, full_page: bool = True) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = await self.call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params["captureBeyondViewport"] = True
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
        shot = await self.call("Page.captureScreenshot", params)
        path.write_bytes(base64.b64decode(shot["data"]))
