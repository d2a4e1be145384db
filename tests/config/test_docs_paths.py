"""The docs name files and Python names that exist: a module moved or renamed leaves the docs
pointing at nothing, and this test names each such place (file and line) to fix."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from django.apps import apps
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
TOP = (
    "config|rules|sheets|combat|checks|prep|integrations|templates|static|tests|bench|docs|scripts"
)
APPS = "config|rules|sheets|combat|checks|prep|integrations"

#: A path in the tree: starts with a top-level folder, not inside a URL (``/api/rules/``).
PATH = re.compile(rf"(?<![\w/.:-])(?:{TOP})/[\w./*<>{{}}-]*")
#: A dotted Python name: ``combat.services.rows``, ``sheets.Campaign`` (a model by its label).
DOTTED = re.compile(rf"(?<![\w./-])((?:{APPS})(?:\.\w+)+)")
#: Examples and patterns rather than real names: ``rules/engine/xyz.py``, ``rules/omg_*.py``.
PLACEHOLDER = re.compile(r"[*<>{}]|xyz|\.\.\.")


def places(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in pattern.finditer(line):
                name = match.group(match.lastindex or 0).rstrip(".,;:)")
                if not PLACEHOLDER.search(name):
                    found.append((f"{doc.relative_to(ROOT)}:{number}", name))
    return found


def path_exists(path: str) -> bool:
    # A template is named as Django finds it: `sheets/_qr.html` is templates/sheets/_qr.html.
    return (ROOT / path).exists() or (ROOT / "templates" / path).exists()


def name_exists(name: str) -> bool:
    if name.endswith((".md", ".json")):  # a file's name (`combat.record.md`), not a module
        return True
    parts = name.split(".")
    if len(parts) == 2 and parts[1][:1].isupper():  # a model by its label: `sheets.Campaign`
        try:
            apps.get_model(name)
        except LookupError:
            return False
        return True
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(value, attr):
                return False
            value = getattr(value, attr)
        return cut > 1 or len(parts) == 1
    return False


def test_it_finds_the_paths_and_names_it_checks():
    assert ("docs/architecture.md", "config/throttling.py") in {
        (where.split(":")[0], name) for where, name in places(PATH)
    }
    assert len(places(PATH)) > 50
    assert len(places(DOTTED)) > 10


def test_every_path_in_the_docs_exists():
    missing = [f"{where}: {path}" for where, path in places(PATH) if not path_exists(path)]
    assert missing == [], "paths in the docs that are not in the tree:\n" + "\n".join(missing)


def test_every_python_name_in_the_docs_exists():
    missing = [f"{where}: {name}" for where, name in places(DOTTED) if not name_exists(name)]
    assert missing == [], "names in the docs that the code lacks:\n" + "\n".join(missing)


def test_it_tells_a_missing_path_or_name():
    assert not path_exists("rules/omg.py")
    assert path_exists("rules/engine/omg.py")
    assert path_exists("sheets/_qr.html")
    assert not name_exists("combat.services.nowhere")
    assert not name_exists("combat.nowhere.at_all")
    assert not name_exists("sheets.Nothing")
    assert name_exists("combat.services.attacks.setup")
    assert name_exists("sheets.Campaign")


#: A pointer to a section of a doc, from the code or another doc: docs/rules.md, "Disarm".
SECTION = re.compile(r"docs/(\w+)\.md,? \"([^\"]+)\"")
SOURCES = (
    "config",
    "rules",
    "sheets",
    "combat",
    "checks",
    "prep",
    "integrations",
    "templates",
    "static",
)


def sections(doc: Path) -> list[str]:
    """What a pointer may name: a heading, or the bold lead of a paragraph or bullet."""
    text = doc.read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    leads = re.findall(r"^\s*(?:- )?\*\*([^*]+?)\.?\*\*", text, re.MULTILINE)
    return headings + leads


def pointers() -> list[tuple[str, str, str]]:
    files = [*DOCS, *(f for top in SOURCES for f in (ROOT / top).rglob("*") if f.is_file())]
    files += sorted((ROOT / "tests").rglob("*.py"))
    found = []
    for path in files:
        if path.suffix not in (".py", ".html", ".md", ".js", ".css", ".txt"):
            continue
        text = path.read_text(encoding="utf-8")
        # A pointer may wrap: join the lines of a comment or docstring first.
        joined = re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)
        for match in SECTION.finditer(joined):
            found.append((str(path.relative_to(ROOT)), match.group(1), match.group(2)))
    return found


def test_every_pointer_to_a_section_names_one():
    known = {doc.stem: sections(doc) for doc in (ROOT / "docs").glob("*.md")}
    missing = [
        f'{where}: docs/{doc}.md, "{name}"'
        for where, doc, name in pointers()
        if not any(s == name or s.startswith(name) for s in known.get(doc, []))
    ]
    assert missing == [], "pointers to sections that do not exist:\n" + "\n".join(missing)


PAGES = ROOT / "docs" / "pages.md"

#: Routes that serve no page, so docs/pages.md need not list them (its "Not pages" names them).
#: Matched against the route's name with its namespace. Static files are not in the URLconf.
NOT_PAGES = (
    "api:",  # the REST API: /api/docs/ describes it
    "admin:",  # Django's admin
    "healthz",  # the load balancer's health check
    "live:",  # the live streams (server-sent events) of a fight and a campaign
    "display:events",  # the table display's live stream
)


def routes(
    patterns: list[URLPattern | URLResolver] | None = None, prefix: str = "/", namespace: str = ""
) -> list[tuple[str, str]]:
    """Every route of the URLconf as (URL pattern, name with its namespaces)."""
    found = []
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            inner = namespace + (f"{pattern.namespace}:" if pattern.namespace else "")
            found += routes(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        else:
            found.append((prefix + str(pattern.pattern), namespace + (pattern.name or "")))
    return found


def shape(url: str) -> str:
    """A URL with each parameter blanked: `/characters/<int:pk>/` and `/characters/<id>/`
    both become `/characters/<>/`."""
    return re.sub(r"<[^>]*>", "<>", url.split("?")[0])


def named_in_pages() -> list[str]:
    return re.findall(r"`(/[^`\s]*)`", PAGES.read_text(encoding="utf-8"))


def test_pages_md_names_every_page_route():
    named = {shape(url) for url in named_in_pages()}
    missing = [
        f"{url} ({name})"
        for url, name in routes()
        if not name.startswith(NOT_PAGES) and shape(url) not in named
    ]
    assert missing == [], "routes that docs/pages.md does not name:\n" + "\n".join(missing)


def test_every_url_in_pages_md_is_served():
    unknown = []
    for url in named_in_pages():
        try:
            resolve(re.sub(r"<[^>]*>", "1", url.split("?")[0]))
        except Resolver404:
            unknown.append(url)
    assert unknown == [], "URLs in docs/pages.md that the URLconf does not serve:\n" + "\n".join(
        unknown
    )


def test_it_finds_the_routes_it_checks():
    found = dict(routes())
    assert found["/characters/<int:pk>/"] == "sheets:character_detail"
    assert found["/check-calls/<int:pk>/"] == "checks:call_detail"
    assert "/display/<str:secret>/" in found
    assert shape("/campaigns/<int:pk>/webhooks/<int:pk>/") == "/campaigns/<>/webhooks/<>/"
    assert shape("/campaigns/join/?code=…") == "/campaigns/join/"
