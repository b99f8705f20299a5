"""Screenshots of the operator's console during a crawl of the simulated web, for the
docs: ``docs/console-1280.png`` (a 1280 px wide window) and ``docs/console-phone.png``
(a phone, 390 px at 2x).

The simulated web is served in this process; the crawl runs as ``headway crawl
--console-port`` for ``--seconds`` seconds (a minute or so gives the charts a few
points); headless chromium opens the console and saves both pictures, then the crawl is
stopped. Usage: ``python scripts/console_screenshots.py [--seconds 70] [--out docs]``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the browser client lives with the tests

from tests.console.cdp import Browser  # noqa: E402
from tests.integration.helpers import UA, ThreadedSimWeb  # noqa: E402
from tests.support.argv import headway_argv  # noqa: E402
from tests.support.redisproc import free_port  # noqa: E402

from headway.testing.simweb import HostSpec, SimWebSpec  # noqa: E402


def spec() -> SimWebSpec:
    plain = HostSpec(pages=400, links_per_page=8, features=frozenset({"errors", "redirects"}))
    return SimWebSpec(
        hosts=12,
        host_spec=plain,
        overrides={
            1: HostSpec(pages=400, links_per_page=8, crawl_delay=2.0),
            2: HostSpec(pages=400, links_per_page=8, features=frozenset({"retry-after"})),
            3: HostSpec(pages=400, links_per_page=8, delay=0.4),
            4: HostSpec(pages=400, links_per_page=8, robots_status=503),
        },
        cross_links=0.2,
        seed=5,
    )


async def shoot(port: int, out: Path, slow_host: str) -> None:
    async with Browser() as browser:
        page = await browser.new_page(1280, 900)
        await page.goto(f"http://127.0.0.1:{port}/")
        await page.wait_for("document.body.dataset.updated", 20)
        # an operator slows one host down: the control log shows it
        await page.evaluate(
            f"document.getElementById('host-name').value = {slow_host!r};"
            "document.getElementById('host-delay').value = '1.5';"
        )
        await page.press("#form-host button[type=submit]")
        await page.wait_for("document.querySelectorAll('#controls tbody tr').length > 0", 20)
        await asyncio.sleep(5)  # the node applies it; the page shows the host's new gap
        await page.evaluate("window.scrollTo(0, 0)")
        await page.screenshot(out / "console-1280.png")
        phone = await browser.new_page(390, 844, mobile=True)
        await phone.goto(f"http://127.0.0.1:{port}/")
        await phone.wait_for("document.body.dataset.updated", 20)
        await phone.screenshot(out / "console-phone.png", full_page=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=70.0, help="crawl this long first")
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    args = ap.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp, ThreadedSimWeb(spec()) as web:
        seeds = Path(tmp) / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        argv = headway_argv(
            Path(tmp) / "news-crawl",
            *("--delay", "0.5", "--console-port", str(port), "--retry-base", "1"),
            user_agent=UA,
            seeds=seeds,
        )
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(args.seconds)
            asyncio.run(shoot(port, args.out, f"{web.hosts[3]}:{web.port}"))
        finally:
            proc.terminate()
            proc.wait(60)
    print(f"wrote {args.out / 'console-1280.png'} and {args.out / 'console-phone.png'}")


if __name__ == "__main__":
    main()
