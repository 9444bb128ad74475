"""The page's one stylesheet and one script, fixed text (no memory text ever goes in
them), and the Content-Security-Policy that lets exactly these two run and nothing else.

The policy names each by its SHA-256, so a ``<script>`` or ``style=`` smuggled into the
page by a note (were escaping ever to fail) would not run either.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dee7;
  --paper: #ffffff; --wash: #f4f6f9; --hot: #c2410c; --warm: #a16207; --cold: #1d4ed8;
  --accent: #0f766e; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--ink); background: var(--wash); }
header { position: sticky; top: 0; z-index: 2; background: var(--paper);
  border-bottom: 1px solid var(--line); padding: 10px 24px; display: flex;
  flex-wrap: wrap; gap: 8px 24px; align-items: center; }
header h1 { font-size: 18px; margin: 0; }
header .where { color: var(--muted); font-size: 13px; }
#filter { flex: 1 1 260px; max-width: 420px; padding: 6px 10px; font: inherit;
  border: 1px solid var(--line); border-radius: 6px; }
#filter-count { color: var(--muted); font-size: 13px; }
nav { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 13px; width: 100%; }
nav a { color: var(--accent); text-decoration: none; }
main { padding: 12px 24px 48px; max-width: 1180px; }
section { background: var(--paper); border: 1px solid var(--line); border-radius: 8px;
  padding: 12px 18px; margin: 14px 0; }
section > h2 { font-size: 16px; margin: 2px 0 8px; }
section > p.why { color: var(--muted); font-size: 13px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 12px 0 6px; }
.tier-hot { color: var(--hot); } .tier-warm { color: var(--warm); }
.tier-cold { color: var(--cold); }
article { border-top: 1px solid var(--line); padding: 8px 0; }
article:first-of-type { border-top: none; }
article:target { background: #fff7d6; outline: 2px solid #facc15; }
.text { font-size: 15px; white-space: pre-wrap; overflow-wrap: anywhere; }
.meta { color: var(--muted); font-size: 12.5px; margin-top: 2px; }
.meta b { color: var(--ink); font-weight: 600; }
.chip { display: inline-block; border: 1px solid var(--line); border-radius: 10px;
  padding: 0 7px; margin: 2px 4px 0 0; font-size: 12px; background: var(--wash); }
.status-superseded, .status-deleted, .status-invalid { opacity: .72; }
details.evidence { margin-top: 4px; font-size: 13.5px; }
details.evidence summary { cursor: pointer; color: var(--accent); }
blockquote { margin: 6px 0 6px 4px; padding: 4px 10px; border-left: 3px solid var(--accent);
  background: var(--wash); white-space: pre-wrap; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px;
  border-top: 1px solid var(--line); overflow-wrap: anywhere; }
/* a heading is a word or two: wrapping it mid-word (as overflow-wrap: anywhere would in
   a narrow column) reads as a typo */
th { color: var(--muted); font-weight: 600; white-space: nowrap; word-break: normal;
  overflow-wrap: normal; hyphens: none; }
.wide { overflow-x: auto; }
table.signals th.num { white-space: nowrap; }
span.signals { color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; overflow-wrap: normal; }  /* 0.000, never 0.00 then 0 */
.chain { display: flex; flex-wrap: wrap; gap: 6px; align-items: stretch; }
.chain .link { border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px;
  max-width: 340px; }
.chain .arrow { align-self: center; color: var(--muted); }
pre.card { white-space: pre-wrap; background: var(--wash); padding: 8px 10px;
  border-radius: 6px; margin: 0; font: 13.5px/1.5 ui-monospace, monospace; }
a.ref { color: var(--accent); }
.empty { color: var(--muted); font-style: italic; }
[hidden] { display: none !important; }
nav.users { font-size: 13px; width: 100%; }
nav.users a, nav.users b { margin-right: 10px; }
form.forget { display: inline; margin: 0; }
form.forget button, .confirm button { font: inherit; font-size: 12px; cursor: pointer;
  color: var(--hot); background: var(--paper); border: 1px solid var(--line);
  border-radius: 6px; padding: 0 8px; }
.confirm button { font-size: 15px; padding: 4px 14px; }
.notice { background: #ecfdf5; border: 1px solid #a7f3d0; border-radius: 8px;
  padding: 8px 14px; margin: 14px 0 0; }
.problem { background: #fff7ed; border: 1px solid #fed7aa; border-radius: 8px;
  padding: 8px 14px; margin: 14px 0 0; }
details.assistant > summary { cursor: pointer; color: var(--accent); margin: 8px 0; }
.mark { color: var(--hot); font-size: 12.5px; }
"""

# Filters every item of the page (an element marked data-item) by its text as the search
# box is typed in, and opens a note's evidence when a link leads to the note.
SCRIPT = """
(function () {
  "use strict";
  var box = document.getElementById("filter");
  var count = document.getElementById("filter-count");
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-item]"));
  function apply() {
    var words = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var shown = 0;
    items.forEach(function (item) {
      var text = item.textContent.toLowerCase();
      var match = words.every(function (w) { return text.indexOf(w) !== -1; });
      item.hidden = !match;
      if (match) { shown += 1; }
    });
    count.textContent = words.length ? shown + " of " + items.length + " match" : "";
  }
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) { return; }
    target.hidden = false;
    // a turn folded away (the assistant's) opens when a link leads to it
    for (var up = target.parentElement; up; up = up.parentElement) {
      if (up.tagName === "DETAILS") { up.open = true; }
    }
    var evidence = target.querySelector("details.evidence");
    if (evidence) { evidence.open = true; }
  }
  if (box) { box.addEventListener("input", apply); }  // pages without the box: none
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
"""


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy(*, for_meta: bool = False, forms: bool = False) -> str:
    """The policy: nothing loads or runs but the page's own stylesheet and script.

    ``for_meta`` leaves out ``frame-ancestors``, which browsers ignore in a ``<meta>``;
    ``forms`` lets forms post to the page's own origin (the served page's forget buttons),
    and nowhere else."""
    rules = [
        "default-src 'none'",
        f"script-src {_sha256(SCRIPT)}",
        f"style-src {_sha256(STYLE)}",
        "img-src 'none'",
        "base-uri 'none'",
        "form-action 'self'" if forms else "form-action 'none'",
    ]
    if not for_meta:
        rules.append("frame-ancestors 'none'")
    return "; ".join(rules)
