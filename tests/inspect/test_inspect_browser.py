"""The inspector in a real browser: the system's Chromium, driven by Playwright, on the page
our server serves from a real store on a free loopback port (and on the static report).

Every hostile note sets ``window.__pwned`` or opens a dialog if any of it runs as code;
the tests look for both after hovering, focusing and clicking through the page.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_support import HOSTILE, Built, build_store, serving, write_report
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, expect

from commonplace_inspect import anchor


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("inspect-browser")
    return build_store(f"sqlite:///{folder / 'memory.db'}", hostile=True)


class Watched:
    """A page with every dialog and console message it produced."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.dialogs: list[str] = []
        self.console: list[str] = []
        page.on("dialog", self._dialog)
        page.on("console", self._console)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: ConsoleMessage) -> None:
        self.console.append(f"{message.type}: {message.text}")

    def pwned(self) -> object:
        return self.page.evaluate("() => window.__pwned")


@pytest.fixture
def served(built: Built, browser: Browser) -> Iterator[Watched]:
    with serving(built.url) as address:
        context = browser.new_context()
        watched = Watched(context.new_page())
        response = watched.page.goto(address)
        assert response is not None and response.status == 200
        yield watched
        context.close()


def test_search_finds_a_note_and_a_click_reaches_its_turn(built: Built, served: Watched) -> None:
    page = served.page
    porto = page.locator(f"#{anchor('rec-', built.porto)}")
    feedzai = page.locator("article.note", has_text="works at Feedzai")
    expect(porto).to_be_visible()
    expect(feedzai).to_be_visible()
    page.locator("#filter").fill("moved to porto")
    expect(feedzai).to_be_hidden()  # filtered as the words are typed
    expect(porto).to_be_visible()
    expect(page.locator("#filter-count")).to_contain_text("match")
    turn = porto.locator("blockquote.turn")
    expect(turn).to_be_hidden()  # the evidence is folded until asked for
    porto.locator("details.evidence summary").click()
    expect(turn).to_be_visible()
    expect(turn).to_have_text(built.porto_turn)
    page.locator("#filter").fill("")
    expect(feedzai).to_be_visible()


def test_a_link_to_a_note_opens_its_evidence(built: Built, served: Watched) -> None:
    page = served.page
    page.locator("#chains a.ref", has_text="moved to Porto").click()
    assert page.evaluate("() => location.hash") == f"#{anchor('rec-', built.porto)}"
    expect(page.locator(f"#{anchor('rec-', built.porto)} blockquote.turn")).to_be_visible()


def test_hostile_notes_render_as_text_and_nothing_from_memory_runs(served: Watched) -> None:
    page = served.page
    assert (served.pwned(), served.dialogs) == (None, [])  # nothing ran as the page loaded
    for hostile in HOSTILE:
        note = page.locator("article.note", has_text=hostile)
        expect(note.first).to_be_visible()  # shown, character for character
        note.first.hover()
        note.first.click()
        note.first.locator("details.evidence summary").click()
    page.keyboard.press("Tab")
    page.locator("#filter").fill("pwned")  # every hostile note matches: all shown
    page.locator("#filter").fill("")
    assert served.pwned() is None
    assert served.dialogs == []
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("img, svg, iframe, object, embed").count() == 0
    # the page's own script ran (the filter works) and the policy refused nothing
    assert served.console == [], served.console


def test_the_policy_blocks_a_script_even_if_one_got_in(served: Watched) -> None:
    page = served.page
    # what an escaping bug would do: a script element the policy did not hash
    page.evaluate(
        """() => { const s = document.createElement("script");
                   s.textContent = "window.__pwned = 'injected'";
                   document.body.appendChild(s); }"""
    )
    assert served.pwned() is None
    assert any("Content Security Policy" in m for m in served.console), served.console


def test_the_static_report_works_offline_under_its_meta_policy(
    built: Built, browser: Browser, tmp_path: Path
) -> None:
    out = tmp_path / "report.html"
    write_report(built.url, out)
    context = browser.new_context(offline=True)
    watched = Watched(context.new_page())
    watched.page.goto(out.as_uri())
    watched.page.locator("#filter").fill("coworker mia")
    expect(watched.page.locator("article.note", has_text="works at Feedzai")).to_be_hidden()
    expect(watched.page.locator("article.note", has_text="coworker Mia")).to_be_visible()
    assert watched.pwned() is None and watched.dialogs == []
    assert watched.console == [], watched.console
    context.close()


def test_table_headings_never_break_inside_a_word(built: Built, browser: Browser) -> None:
    # a narrow window squeezes every table: a heading may not wrap in the middle of a
    # word ("frequ-ency"), nor onto a second line at all (they are a word or two)
    context = browser.new_context(viewport={"width": 560, "height": 900})
    page = context.new_page()
    with serving(built.url, "--query", "where does alice live?") as address:
        page.goto(address)
        broken = page.evaluate(
            """() => Array.from(document.querySelectorAll("th")).filter(th => {
                 const range = document.createRange();
                 range.selectNodeContents(th);
                 const tops = new Set(Array.from(range.getClientRects(),
                                                 r => Math.round(r.top)));
                 return tops.size > 1;
               }).map(th => th.textContent)"""
        )
        headings = page.locator("th").count()
    context.close()
    assert headings > 20 and broken == []


def test_the_assistant_s_turns_are_folded_below_the_user_s(served: Watched) -> None:
    page = served.page
    turns = page.locator("#episodes article.episode")
    reply = page.locator("#episodes article.episode", has_text="That sounds lovely")
    expect(reply).to_be_hidden()
    expect(turns.first.locator(".meta b")).to_have_text("user")
    first_visible = turns.first.locator("blockquote").inner_text()
    assert first_visible.startswith("Note: ")  # the newest user turn (a hostile one)
    page.locator("#episodes details.assistant summary").click()
    expect(reply).to_be_visible()
    expect(reply.locator(".meta b")).to_have_text("assistant")
    # a link to a folded turn unfolds it
    page.reload()
    expect(reply).to_be_hidden()
    reply_id = reply.get_attribute("id")
    page.evaluate(f"() => {{ location.hash = '#{reply_id}'; }}")
    expect(reply).to_be_visible()
