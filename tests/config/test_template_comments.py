"""Django's ``{# … #}`` comment ends on its own line: one that goes on to the next line is not
a comment at all, and every page would show its text. Longer notes use ``{% comment %}``."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from django.conf import settings


def test_no_template_comment_runs_past_its_line() -> None:
    dirs = cast("list[str]", settings.TEMPLATES[0]["DIRS"])
    roots = [Path(d) for d in dirs]
    templates = [p for root in roots for p in root.rglob("*.html")]
    assert templates, "no templates found: the test would pass for nothing"
    open_comments = [
        f"{path}:{number}"
        for path in templates
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "{#" in line and "#}" not in line[line.index("{#") :]
    ]
    assert open_comments == []
