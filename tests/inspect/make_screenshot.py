"""Regenerate docs/images/inspector.png: the inspector serving a realistic store (no
hostile notes), opened in the system's Chromium.

    python tests/inspect/make_screenshot.py [--full]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from inspect_support import build_store, chromium_path, serving
from playwright.sync_api import sync_playwright

from commonplace_inspect import anchor

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "images" / "inspector.png"


def main() -> None:
    full = "--full" in sys.argv
    with tempfile.TemporaryDirectory(prefix="inspect-shot-") as folder:
        built = build_store(f"sqlite:///{Path(folder) / 'memory.db'}")
        query = ("--query", "where does alice live?")
        with serving(built.url, *query) as address, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path())
            page = browser.new_page(viewport={"width": 1180, "height": 1500})
            page.goto(address)
            # open one note's evidence, as a reader following it would
            page.locator(f"#{anchor('rec-', built.porto)} details.evidence summary").click()
            OUT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(OUT), full_page=full)
            browser.close()
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
