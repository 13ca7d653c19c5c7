"""A report page as the tests read it: its figure cells and what it would load (parsed,
outside_loads), and its DOM as a real headless Chromium renders it (chromium_dom)."""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path


class _Cells(HTMLParser):
    """The report's figure cells (``data-key``) per table id, its tables' ids, and every
    attribute that makes a browser load something."""

    LOADING = {"src", "href", "srcset", "action", "poster", "data", "background", "xlink:href", "formaction"}

    def __init__(self) -> None:
        super().__init__()
        self.figures: dict[str, dict[str, str]] = {}
        self.ids: set[str] = set()
        self.loads: list[str] = []
        self.csp: str | None = None
        self._table = ""
        self._key: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "table":
            self._table = str(found.get("id") or "")
        if tag == "meta" and (found.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = found.get("content")
        self._key = found.get("data-key") if tag == "td" else None
        self.loads += [str(value) for name, value in attrs if name in self.LOADING and value]
        self.loads += re.findall(r"url\(([^)]*)\)", found.get("style") or "")

    def handle_data(self, data: str) -> None:
        if self._key:
            self.figures.setdefault(self._table, {})[self._key] = data.strip()
            self._key = None


def parsed(html: str) -> _Cells:
    cells = _Cells()
    cells.feed(html)
    return cells


def outside_loads(cells: _Cells, html: str) -> list[str]:
    """What the page would fetch from anywhere but itself: loading attributes that are not a
    fragment, and url(...) or @import in its styles."""
    wanted = [url for url in cells.loads if not url.startswith("#")]
    styles = " ".join(re.findall(r"<style[^>]*>(.*?)</style>", html, re.S))
    return wanted + re.findall(r"url\(\s*['\"]?(?!#)[^)]*\)", styles) + re.findall(r"@import[^;]*", styles)


def chromium_dom(page: Path, profile: Path) -> str:
    done = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
