"""The served page's user picker and forget buttons, in the system's Chromium driven by
Playwright, and the forget form's guards over plain HTTP: each test serves its own real
store (erasing changes it) on a free loopback port."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from inspect_support import OTHER_USER, USER, Built, build_store, parse, serving
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from commonplace import HashingEmbedder, Memory, Scope
from commonplace_inspect import anchor, content_security_policy


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build_store(f"sqlite:///{tmp_path / 'memory.db'}")


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: _console(m, problems))
    yield opened
    context.close()
    assert problems == []  # the policy refused nothing the page did (its forms included)


def _console(message: ConsoleMessage, problems: list[str]) -> None:
    # a refusal's status is logged as a failed load: what is refused is tested itself
    if message.type in ("error", "warning") and "Failed to load resource" not in message.text:
        problems.append(message.text)


def _count(url: str, user: str = USER) -> int:
    with Memory(url, embedder=HashingEmbedder(), create=False) as memory:
        return memory.count(scope=Scope(user=user))


def _exists(url: str, record_id: str) -> bool:
    with Memory(url, embedder=HashingEmbedder(), create=False) as memory:
        return memory.store.get_record(record_id, any_status=True) is not None


def test_the_picker_switches_user_and_names_an_unknown_one(built: Built, page: Page) -> None:
    with serving(built.url) as address:
        page.goto(address)
        expect(page.locator("nav.users b[aria-current=page]")).to_have_text(USER)
        page.locator("nav.users a", has_text=OTHER_USER).click()
        page.wait_for_url(f"{address}?user={OTHER_USER}")
        expect(page.locator("#user")).to_have_text(OTHER_USER)
        expect(page.locator("article.note", has_text="cello")).to_be_visible()
        expect(page.locator("article.note", has_text="Porto")).to_have_count(0)
        page.locator("nav.users a", has_text=USER).click()
        expect(page.locator("#user")).to_have_text(USER)
        answer = page.goto(f"{address}?user=nobody")
        assert answer is not None and answer.status == 404
        problem = page.locator(".problem")
        expect(problem).to_contain_text("nothing about a user 'nobody'")
        expect(problem).to_contain_text(f"{USER}, {OTHER_USER}")
        expect(page.locator("nav.users a", has_text=OTHER_USER)).to_be_visible()


def test_a_note_is_forgotten_only_once_confirmed(built: Built, page: Page) -> None:
    porto = page.locator(f"#{anchor('rec-', built.porto)}")
    with serving(built.url) as address:
        page.goto(address)
        expect(page.locator("#card pre.card")).to_contain_text("city Porto")
        porto.locator("form.forget button").click()
        expect(page.locator("h2")).to_have_text("Erase “The user moved to Porto last weekend.”?")
        expect(page.locator("main")).to_contain_text("This cannot be undone")
        assert _exists(built.url, built.porto)  # asking erased nothing
        page.locator("a", has_text="No, go back").click()
        expect(porto).to_be_visible()
        assert _exists(built.url, built.porto)
        before = _count(built.url)
        porto.locator("form.forget button").click()
        page.locator("button", has_text="Erase it").click()
        page.wait_for_url(f"{address}?user={USER}&notice=*")
        expect(page.locator(".notice")).to_contain_text(
            "Erased “The user moved to Porto last weekend.”: 1 record and 1 turn"
        )
        # nor does the profile card still say it
        expect(page.locator("#card pre.card")).not_to_contain_text("Porto")
        expect(porto).to_have_count(0)
        expect(page.locator("#episodes")).not_to_contain_text(built.porto_turn)
        page.reload()
        expect(porto).to_have_count(0)
    assert not _exists(built.url, built.porto) and _count(built.url) == before - 1


def test_everything_about_a_user_is_erased_once_confirmed(built: Built, page: Page) -> None:
    with serving(built.url) as address:
        page.goto(f"{address}?user={OTHER_USER}")
        page.locator("header form.forget button").click()
        expect(page.locator("h2")).to_have_text(f"Erase everything remembered about {OTHER_USER}?")
        assert _count(built.url, OTHER_USER) == 1
        page.locator("button", has_text="Erase it").click()
        expect(page.locator(".notice")).to_contain_text(
            f"Erased everything remembered about {OTHER_USER}:"
        )
        expect(page.locator("#user")).to_have_text(USER)  # back to the first page
        expect(page.locator("nav.users")).not_to_contain_text(OTHER_USER)
    assert _count(built.url, OTHER_USER) == 0 and _count(built.url) > 0


def test_a_server_others_can_reach_offers_no_forgetting(built: Built, page: Page) -> None:
    with serving(built.url, "--allow-remote") as address:
        answer = page.goto(address)
        assert answer is not None
        assert answer.headers["content-security-policy"] == content_security_policy()
        expect(page.locator(f"#{anchor('rec-', built.porto)}")).to_be_visible()
        expect(page.locator("nav.users a", has_text=OTHER_USER)).to_be_visible()
        assert page.locator("form, button").count() == 0
        refused = _post(address, {"user": USER, "record": built.porto, "confirm": "yes"})
        assert refused.status == 403 and b"--allow-remote" in refused.body
    assert _exists(built.url, built.porto)


class _Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


def _post(
    address: str,
    form: dict[str, str],
    *,
    host: str | None = None,
    origin: str | None = None,
    path: str = "/forget",
    method: str = "POST",
) -> _Answer:
    parts = urlsplit(address)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if host is not None:
        headers["Host"] = host
    if origin is not None:
        headers["Origin"] = origin
    try:
        body = urlencode(form) if method == "POST" else None
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return _Answer(response.status, dict(response.getheaders()), response.read())
    finally:
        connection.close()


def _token(address: str) -> str:
    page = _post(address, {}, path="/", method="GET").body.decode()
    (token,) = {a["value"] for t, a in parse(page).tags if a.get("name") == "token"}
    assert token
    return token


def test_a_forget_without_the_token_or_from_elsewhere_changes_nothing(built: Built) -> None:
    before = _count(built.url)
    with serving(built.url) as address:
        port = urlsplit(address).port
        token = _token(address)
        form = {"user": USER, "record": built.porto, "confirm": "yes"}
        assert _post(address, form).status == 403  # no token
        assert _post(address, {**form, "token": token[:-1] + "x"}).status == 403
        assert _post(address, {**form, "token": token}, host=f"evil.example:{port}").status == 421
        other = _post(address, {**form, "token": token}, origin="http://evil.example")
        assert other.status == 403
        # a GET erases nothing, whatever it carries
        query = urlencode({**form, "token": token})
        assert _post(address, {}, path=f"/forget?{query}", method="GET").status == 404
        assert _post(address, {}, path=f"/?{query}", method="GET").status == 200
        assert _exists(built.url, built.porto) and _count(built.url) == before
        # an unknown user or record is named, and nothing is erased either
        stranger = _post(address, {**form, "token": token, "user": "nobody"})
        assert stranger.status == 404 and b"nobody" in stranger.body
        gone = _post(address, {**form, "token": token, "record": "nt_nope"})
        assert gone.status == 404 and b"nt_nope" in gone.body
        assert _count(built.url) == before
        # the same form from the page's own origin, with its token, erases
        done = _post(address, {**form, "token": token}, origin=f"http://127.0.0.1:{port}")
        assert done.status == 303 and done.headers["Location"].startswith(f"/?user={USER}&")
    assert not _exists(built.url, built.porto)


def test_a_garbled_form_is_refused_and_the_server_goes_on(built: Built) -> None:
    before = _count(built.url)
    with serving(built.url) as address:
        parts = urlsplit(address)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        try:
            connection.request("POST", "/forget", body=b"token=\xff\xfe&user=\x00&confirm=yes")
            assert connection.getresponse().status == 403
        finally:
            connection.close()
        assert _post(address, {"token": "x" * 20_000}).status == 413
        assert _post(address, {}, path="/", method="GET").status == 200
    assert _count(built.url) == before
