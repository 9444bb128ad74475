"""The inspector's page, rendered from a real SQLite store built through Memory: every
section holds the store's data, and every piece of memory text is escaped."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from inspect_support import HOSTILE, HOSTILE_USER, USER, Built, build_store, element, parse

from commonplace import HashingEmbedder, Memory, Scope
from commonplace.errors import InvalidInputError
from commonplace_inspect import (
    Inspection,
    Served,
    anchor,
    collect,
    content_security_policy,
    render_page,
    supersession_chains,
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("inspect-page")
    return build_store(f"sqlite:///{folder / 'memory.db'}", hostile=True)


@pytest.fixture(scope="module")
def inspection(built: Built) -> Iterator[Inspection]:
    with Memory(built.url, embedder=HashingEmbedder()) as memory:
        yield collect(memory, user=USER, probe="where does alice live?")


@pytest.fixture(scope="module")
def page(inspection: Inspection) -> str:
    return render_page(inspection)


def test_every_section_is_there_in_order(page: str) -> None:
    ids = [attrs.get("id") for tag, attrs in parse(page).tags if tag == "section"]
    assert ids == ["card", "notes", "chains", "episodes", "recalls", "audit", "conflicts"]


def test_the_profile_card_is_the_stored_one(inspection: Inspection, page: str) -> None:
    assert inspection.card is not None and "Porto" in inspection.card.text
    assert html.escape(inspection.card.text) in page
    assert "Mia" in parse(page).text.split("Its fields", 1)[1]  # the structured fields too


def test_notes_are_grouped_by_tier_with_tags_and_scores(built: Built, page: str) -> None:
    text = parse(page).text
    hot = text.index("hot (1)")
    warm = text.index("warm (")
    cold = text.index("cold (")
    assert hot < text.index("The user works at Feedzai") < warm  # pinned, so hot
    assert warm < text.index("The user moved to Porto last weekend.") < cold
    assert cold < text.index("The user lives in Lisbon.")
    porto = element(page, anchor("rec-", built.porto))
    assert "user.city = Porto" in porto and "retrieved <b>" in porto and "importance" in porto


def test_a_note_carries_its_evidence_down_to_the_turn(built: Built, page: str) -> None:
    porto = element(page, anchor("rec-", built.porto))
    assert f'<blockquote class="turn">{built.porto_turn}</blockquote>' in porto
    assert '<details class="evidence">' in porto
    # and the turn itself, in the evidence section, names the note written from it
    with Memory(built.url, embedder=HashingEmbedder()) as memory:
        (turn,) = memory.explain(built.porto).episodes()
    episode = element(page, anchor("ep-", turn.id))
    assert built.porto_turn in episode and f'href="#{anchor("rec-", built.porto)}"' in episode


def test_the_assistant_turn_is_evidence_but_never_a_note(page: str) -> None:
    text = parse(page).text
    assert "That sounds lovely, enjoy the visit!" in text
    notes = text.split("Supersession chains", 1)[0]
    assert "enjoy the visit" not in notes


def test_supersession_chains_show_validity(built: Built, inspection: Inspection) -> None:
    (chain,) = inspection.chains
    assert [r.id for r in chain] == [built.lisbon, built.porto]
    assert chain[0].valid_to is not None and chain[0].valid_to == chain[1].valid_from
    section = render_page(inspection).split('<section id="chains">', 1)[1].split("</section>")[0]
    until = chain[0].valid_to.strftime("%Y-%m-%d %H:%M")
    assert section.index("Lisbon") < section.index("Porto") and f"→ {until}" in section


def test_chains_follow_superseded_by_through_the_middle(inspection: Inspection) -> None:
    from dataclasses import replace

    a, b = inspection.chains[0]
    c = replace(b, id="nt_c", superseded_by=None)
    chains = supersession_chains([a, replace(b, superseded_by="nt_c"), c])
    assert [[r.id for r in chain] for chain in chains] == [[a.id, b.id, "nt_c"]]


def test_recalls_list_what_was_retrieved_and_answered(
    built: Built, inspection: Inspection, page: str
) -> None:
    section = page.split('<section id="recalls">', 1)[1].split("</section>")[0]
    (log,) = [r for r in inspection.recalls if r.id == built.recall_id]
    assert log.feedback_at is not None and log.item_ids
    row = next(r for r in section.split("<tr") if built.recall_id in r)
    assert log.feedback_at.strftime("%Y-%m-%d %H:%M") in row
    assert all(f'href="#{anchor("rec-", i)}"' in row for i in log.item_ids)
    # the question and each retrieved record's signals, as the recall scored them
    assert log.query and f'<td class="recall-query">{log.query}</td>' in row
    assert set(log.scores) == set(log.item_ids)
    for rid in log.item_ids:
        scores = log.scores[rid]
        assert f"{scores['total']:.3f}" in row and f"semantic {scores['semantic']:.2f}" in row
    probe = inspection.probe
    assert probe is not None
    assert "not yet" in next(r for r in section.split("<tr") if probe.id in r)  # unanswered


def test_the_probe_shows_each_signal(inspection: Inspection, page: str) -> None:
    assert inspection.probe is not None and inspection.probe.items
    section = page.split('<h3 id="probe">', 1)[1].split("</table>")[0]
    for signal in ("semantic", "keyword", "recency", "frequency", "importance", "total"):
        assert f">{signal}</th>" in section
    first = inspection.probe.items[0]
    assert f"{first.score.breakdown()['total']:.3f}" in section


def test_the_audit_log_says_what_was_forgotten_and_why(built: Built, page: str) -> None:
    section = page.split('<section id="audit">', 1)[1].split("</section>")[0]
    row = next(r for r in section.split("<tr") if "forget_smart" in r and built.forgotten in r)
    assert "forgotten" in row and "I had toast this morning." in row and "importance" in row
    assert "demote_unused" in section and "pin" in section


def test_conflicts_show_both_records_and_the_resolution(page: str) -> None:
    section = page.split('<section id="conflicts">', 1)[1].split("</section>")[0]
    assert "Mia is named as coworker and as sister" in section
    assert "sister Mia is visiting" in section and "coworker Mia got promoted" in section
    assert "separate entities" in section


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_text_is_text(hostile: str, page: str) -> None:
    parsed = parse(page)
    assert hostile in parsed.text  # shown, exactly as the user typed it
    if any(c in hostile for c in "<>&\"'"):
        assert hostile not in page  # and never as markup


def test_nothing_from_memory_becomes_markup(page: str) -> None:
    parsed = parse(page)
    assert [tag for tag, _ in parsed.tags if tag in ("script", "style")] == ["style", "script"]
    from commonplace_inspect._assets import SCRIPT, STYLE

    assert parsed.scripts == [SCRIPT] and parsed.styles == [STYLE]
    allowed = {
        "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3",
        "span", "input", "nav", "a", "main", "section", "p", "div", "pre", "table", "tr",
        "th", "td", "article", "b", "code", "details", "summary", "blockquote", "br",
        "script", "ul", "li",
    }  # fmt: skip
    assert {tag for tag, _ in parsed.tags} <= allowed
    for tag, attrs in parsed.tags:
        assert not [a for a in attrs if a.startswith("on") or a in ("style", "src", "srcdoc")]
        for value in attrs.values():
            assert not (value or "").strip().lower().startswith(("javascript:", "data:"))
        if tag == "a":
            assert (attrs["href"] or "").startswith("#"), attrs


def test_a_hostile_user_name_is_text_too(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with Memory(url, embedder=HashingEmbedder()) as memory:
        memory.write("My name is <b>Mallory</b> and I like <i>tags</i>.", scope=HOSTILE_USER)
        page = render_page(collect(memory, user=HOSTILE_USER))
    parsed = parse(page)
    assert HOSTILE_USER in parsed.text and "<b>Mallory</b>" in parsed.text
    assert "b" not in {tag for tag, attrs in parsed.tags if "onclick" in attrs}
    assert not [tag for tag, _ in parsed.tags if tag == "i"]


def test_the_meta_policy_allows_exactly_the_page_s_own_style_and_script(page: str) -> None:
    parsed = parse(page)
    (policy,) = [a["content"] for t, a in parsed.tags if a.get("http-equiv")]
    assert policy == content_security_policy(for_meta=True)

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src 'sha256-{digest(parsed.scripts[0])}'" in (policy or "")
    assert f"style-src 'sha256-{digest(parsed.styles[0])}'" in (policy or "")
    assert "default-src 'none'" in (policy or "") and "unsafe" not in (policy or "")
    assert "frame-ancestors 'none'" in content_security_policy()


def test_anchors_keep_ids_apart_and_safe() -> None:
    made = {anchor("rec-", i) for i in ("a.b", "a_b", "a-b", "a.2e.b", 'a"b', "a b")}
    assert len(made) == 6
    assert all(set(a) <= set("abcdefghijklmnopqrstuvwxyz0123456789.-_") for a in made)


def test_a_user_with_nothing_stored_gets_an_empty_page_not_an_error(built: Built) -> None:
    with Memory(built.url, embedder=HashingEmbedder()) as memory:
        page = render_page(collect(memory, user="nobody"))
        assert memory.count(scope=Scope(user="nobody")) == 0
    assert "No notes for this user." in page and "No profile card yet" in page


def test_no_user_is_refused_clearly(built: Built) -> None:
    with (
        Memory(built.url, embedder=HashingEmbedder()) as memory,
        pytest.raises(InvalidInputError, match="--user"),
    ):
        collect(memory, user=" ")


@pytest.fixture(scope="module")
def disputed(tmp_path_factory: pytest.TempPathFactory) -> Inspection:
    url = f"sqlite:///{tmp_path_factory.mktemp('inspect-flags') / 'memory.db'}"
    with Memory(url, embedder=HashingEmbedder()) as memory:
        memory.write("I eat fish every Friday.", scope=USER)
        memory.write("I don't eat fish anymore.", scope=USER)
        memory.write("My sister Mia is visiting next week.", scope=USER)
        return collect(memory, user=USER, probe="does alice eat fish?")


def test_recalls_list_what_a_recall_showed_though_it_retrieved_nothing(
    disputed: Inspection,
) -> None:
    # three notes are too few to search (search_min_notes): the probe showed them all as
    # recent notes, and its log holds them as shown, none as retrieved
    probe = disputed.probe
    assert probe is not None
    (log,) = [r for r in disputed.recalls if r.id == probe.id]
    assert len(log.shown_ids) == 3 and not log.item_ids
    section = render_page(disputed).split('<section id="recalls">', 1)[1].split("</section>")[0]
    row = next(r for r in section.split("<tr") if probe.id in r)
    cell = row.split('<td class="recall-shown">', 1)[1].split("</td>")[0]
    assert "nothing" not in cell
    assert all(f'href="#{anchor("rec-", i)}"' in cell for i in log.shown_ids)
    assert '<td class="num">3</td>' in row


def test_every_disagreement_marked_is_listed_in_the_flags_section(disputed: Inspection) -> None:
    # the writer kept the newer statement against the older (a dispute), and the probe
    # recall flagged the same pair: one row, and both notes marked with a link to it
    assert disputed.disputes and disputed.probe is not None and disputed.probe.disagreements
    page = render_page(disputed)
    section = page.split('<section id="conflicts">', 1)[1].split("</section>")[0]
    assert "No two records flagged" not in section
    marked = re.findall(r'<span class="mark">\(disagrees with .*?href="#(flag-[^"]+)">why', page)
    assert len(marked) >= 4  # each of the two notes, in the notes and in the probe
    for target in set(marked):
        row = section.split(f'id="{target}"', 1)[1].split("</tr>")[0]
        assert "eats fish every Friday" in row and "eat fish anymore" in row
    (flag,) = disputed.flags
    assert {flag.first, flag.second} == {d.newer for d in disputed.disputes} | {
        d.older for d in disputed.disputes
    }
    sister = next(r for r in disputed.records if "Mia" in r.text)
    assert "disagrees" not in element(page, anchor("rec-", sister.id))


def test_the_user_s_own_turns_come_before_the_assistant_s(page: str) -> None:
    section = page.split('<section id="episodes">', 1)[1].split("</section>")[0]
    theirs, replies = section.split('<details class="assistant">', 1)
    assert "That sounds lovely, enjoy the visit!" in replies
    assert "That sounds lovely" not in theirs
    assert "I moved to Porto last weekend." in theirs and "I live in Lisbon." in theirs
    assert ">user</b>" in theirs and ">user</b>" not in replies
    assert "The assistant's turns (1)" in replies


def test_the_served_page_links_only_to_itself_and_posts_only_to_forget(
    inspection: Inspection,
) -> None:
    served = Served((USER, HOSTILE_USER, "bruno"), token="t0ken", notice=HOSTILE[0])
    page = render_page(inspection, served=served)
    parsed = parse(page)
    assert HOSTILE[0] in parsed.text and HOSTILE_USER in parsed.text  # as text
    hrefs = [a.get("href") or "" for t, a in parsed.tags if t == "a"]
    assert {h for h in hrefs if not h.startswith("#")} == {
        "/?user=bruno",
        "/?user=" + quote(HOSTILE_USER, safe=""),
    }
    forms = [a for t, a in parsed.tags if t == "form"]
    assert len(forms) > len(inspection.records)  # every note, every turn, and the user
    assert all((f["method"], f["action"]) == ("post", "/forget") for f in forms)
    tokens = [a["value"] for t, a in parsed.tags if t == "input" and a.get("name") == "token"]
    assert tokens == ["t0ken"] * len(forms)
    (policy,) = [a["content"] for t, a in parsed.tags if a.get("http-equiv")]
    assert "form-action 'self'" in (policy or "")
    # without a token (a server others can reach) there is nothing to post
    quiet = render_page(inspection, served=Served((USER,)))
    assert "<form" not in quiet and "form-action 'none'" in quiet
