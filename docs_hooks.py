"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

* The pages link to repository files outside docs/ the way a reader of the repository
  follows them (``../examples/migrate_sqlite_to_weaviate.py``). Those files are published
  with the site under ``repo/`` (a Markdown file as a page, whose own links are followed
  the same way) and the links are pointed there, so the built site has no dead links. A
  link to a file that does not exist is a warning, which ``--strict`` makes an error.
* reST roles left in docstrings (``:class:`~commonplace.errors.StoreError```) are shown
  as code (``StoreError``).
* The Pygments stylesheet for the code highlighted at build time is written into the
  site (the theme's highlight.js would be fetched from a CDN, so it is off).
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

log = logging.getLogger(f"mkdocs.plugins.{__name__}")

ROOT = Path(__file__).resolve().parent
PUBLISHED = "repo"  # where repository files outside docs/ land in the site
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):<code>(~?)([^<]+)</code>")


def _source(src_uri: str, docs_dir: Path) -> Path:
    """The file in the checkout that a page of the site was made from."""
    if src_uri.startswith(PUBLISHED + "/"):
        return ROOT / src_uri[len(PUBLISHED) + 1 :]
    return docs_dir / src_uri


def _target(page_source: Path, url: str) -> Path | None:
    """The file a relative link of a page points at, or None for any other link."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path or url.startswith(("/", "#")):
        return None
    found = Path(posixpath.normpath((page_source.parent / unquote(parts.path)).as_posix()))
    if found.is_dir() and (found / "README.md").is_file():
        found = found / "README.md"
    return found


def _site_uri(target: Path, docs_dir: Path) -> str | None:
    """Where ``target`` is in the site: its place in docs/, or under ``repo/``."""
    if target.is_relative_to(docs_dir):
        return target.relative_to(docs_dir).as_posix()
    if target.is_relative_to(ROOT):
        return f"{PUBLISHED}/{target.relative_to(ROOT).as_posix()}"
    return None


def _links(markdown: str) -> list[str]:
    return [m.group(2) for m in LINK.finditer(FENCE.sub("", markdown))]


def on_files(files: Files, config: MkDocsConfig) -> Files:
    docs_dir = Path(config.docs_dir).resolve()
    queue = [f for f in files if f.src_uri.endswith(".md")]
    while queue:
        page = queue.pop()
        source = _source(page.src_uri, docs_dir)
        for url in _links(source.read_text(encoding="utf-8")):
            target = _target(source, url)
            if target is None or target.is_relative_to(docs_dir) or not target.is_file():
                continue  # mkdocs checks links within docs/; missing ones are warned below
            uri = _site_uri(target, docs_dir)
            if uri is None or files.get_file_from_path(uri) is not None:
                continue
            published = File.generated(
                config, uri, abs_src_path=str(target), inclusion=InclusionLevel.NOT_IN_NAV
            )
            files.append(published)
            if uri.endswith(".md"):
                queue.append(published)
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    docs_dir = Path(config.docs_dir).resolve()
    source = _source(page.file.src_uri, docs_dir)
    here = posixpath.dirname(page.file.src_uri)

    def point(match: re.Match[str]) -> str:
        url = match.group(2)
        target = _target(source, url)
        if target is None or (target.is_relative_to(docs_dir) and source.is_relative_to(docs_dir)):
            return match.group(0)  # an ordinary link between pages: mkdocs checks it
        uri = _site_uri(target, docs_dir)
        if uri is None or not target.is_file():
            log.warning("%s links to %s, which is not in the repository", page.file.src_uri, url)
            return match.group(0)
        anchor = urlsplit(url).fragment
        relative = posixpath.relpath(uri, here or ".") + (f"#{anchor}" if anchor else "")
        return f"{match.group(1)}{relative}{match.group(3)}"

    fences = [(m.start(), m.end()) for m in FENCE.finditer(markdown)]
    out, last = [], 0
    for start, end in [*fences, (len(markdown), len(markdown))]:
        out.append(LINK.sub(point, markdown[last:start]))
        out.append(markdown[start:end])
        last = end
    return "".join(out)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    def code(match: re.Match[str]) -> str:
        tilde, name = match.groups()
        return f"<code>{name.rsplit('.', 1)[-1] if tilde else name}</code>"

    return ROLE.sub(code, html)


def on_post_build(config: MkDocsConfig) -> None:
    from pygments.formatters import HtmlFormatter

    css = Path(config.site_dir) / "css" / "pygments.css"
    css.parent.mkdir(parents=True, exist_ok=True)
    css.write_text(HtmlFormatter(style="default").get_style_defs(".highlight"), encoding="utf-8")
