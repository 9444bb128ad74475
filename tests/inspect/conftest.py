"""The inspector tests' shared fixture: the system's Chromium, one per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from inspect_support import chromium_path
from playwright.sync_api import Browser, sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium_path())
        yield launched
        launched.close()
