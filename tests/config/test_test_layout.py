"""The test suite's own layout, read from its source (nothing is imported or run):

- no module under tests/ imports a test module or a conftest: what tests share lives in a helper
  module (tests/browser/helpers.py, tests/combat/helpers.py, tests/fight_steps.py ...), so that
  running one test module never collects, or depends on, another;
- a fixture named ``table`` means tests/conftest.py's table (a campaign with every role around
  it) everywhere: a folder may extend it (it takes ``table`` and adds to it), never replace it;
  the demo table of the browser tests is ``demo_table``;
- the rules app's tests (its engine, its public API, the dice pages) are under tests/rules/,
  its browser tests under tests/browser/;
- no test waits a fixed time: it waits for the condition it needs (Playwright's ``expect``, an
  event or a queue with a timeout, a poll of the condition with a deadline). A sleep that is
  itself the thing tested, or the poll interval of a named wait-until helper, is allowed below,
  with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


#: Sleeps that are the point, each inside a named helper: (file, enclosing function) -> why.
ALLOWED_SLEEPS: dict[tuple[str, str], str] = {
    ("tests/polling.py", "wait_for"): "the poll interval of the wait-until helper",
    ("tests/polling.py", "wait_for_async"): "the poll interval of the wait-until helper",
    ("tests/polling.py", "nothing_within"): (
        "seeing that something does not happen takes the time it would have taken"
    ),
    ("tests/browser/helpers.py", "move_clock_until"): (
        "the page's installed clock is moved on a second at a time; the short real pause lets"
        " what a fired timer starts (a redraw, a fetch) run between two moves"
    ),
    ("tests/browser/test_double_submit.py", "slow_server.slow"): (
        "the server is made slow on purpose, so a double click's second click lands while the"
        " first request is still being answered"
    ),
    ("tests/integrations/receiver.py", "start.Handler.send_trickled"): (
        "the receiver answers one byte at a time on purpose: the sender's timeout is tested"
    ),
    ("tests/locking.py", "wait_for_a_lock_waiter"): (
        "the poll interval of a wait until another session queues for a lock"
    ),
    ("tests/combat/test_fight_deletion_races.py", "_race.deleting"): (
        "the race itself: the deletion starts at each of several offsets into the other"
        " threads' steps, so that it meets them at different points"
    ),
    ("tests/combat/test_live_wakes.py", "settled"): (
        "not yet a condition: a broadcaster shows no sign that the passes its streams' arrival"
        " caused are over, so this waits them out"
    ),
}

#: Where the rules app's tests live; the browser tests of every app stay in tests/browser/.
RULES_HOMES = ("tests/rules/", "tests/browser/")
#: The rules app's web layer: a test importing it tests the rules app.
RULES_WEB = ("rules.api", "rules.views", "rules.urls")


@cache
def modules() -> list[tuple[str, ast.Module]]:
    found = [
        (path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(TESTS.rglob("*.py"))
    ]
    assert len(found) > 100, "the tests were not found: this guard would pass for nothing"
    return found


def is_test_module(name: str) -> bool:
    return name.rsplit(".", 1)[-1].startswith("test_") or name.endswith("conftest")


def imported(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: `from .test_x import y`, `from . import test_x`
                yield node.lineno, "." * node.level + (node.module or "")
                for alias in node.names:
                    yield node.lineno, "." * node.level + alias.name
            elif node.module:
                yield node.lineno, node.module
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"


def test_it_finds_no_module_importing_a_test_module() -> None:
    found = [
        f"{path}:{line} imports {name}"
        for path, tree in modules()
        for line, name in imported(tree)
        if (name.startswith("tests.") or name.startswith(".")) and is_test_module(name)
    ]
    assert not found, "\n".join(found)


def fixture_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name a function is a pytest fixture under, or None if it is not one."""
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call else decorator
        if ast.unparse(target) not in ("pytest.fixture", "fixture"):
            continue
        for keyword in call.keywords if call else []:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
        return node.name
    return None


def test_it_gives_the_table_fixture_one_meaning() -> None:
    found = []
    for path, tree in modules():
        if path == "tests/conftest.py":
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            extends = "table" in [a.arg for a in node.args.args + node.args.kwonlyargs]
            if fixture_name(node) == "table" and not extends:
                found.append(f"{path}:{node.lineno} defines another `table`")
    assert not found, "\n".join(found)


def test_it_keeps_the_rules_apps_tests_under_tests_rules() -> None:
    found = []
    for path, tree in modules():
        name = path.rsplit("/", 1)[-1]
        if path.startswith(RULES_HOMES) or not name.startswith("test_"):
            continue
        if "rules" in name or "dice" in name:
            found.append(f"{path} is named for the rules app")
        found += [
            f"{path}:{line} imports {module}"
            for line, module in imported(tree)
            if module.startswith(RULES_WEB)
        ]
    assert not found, "\n".join(found)


def enclosing(tree: ast.Module) -> dict[ast.AST, str]:
    """Each node's enclosing function, as ``Class.function.inner`` ("" at module level)."""
    names: dict[ast.AST, str] = {}

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{where}.{child.name}" if where else child.name
            names[child] = inner
            visit(child, inner)

    visit(tree, "")
    return names


def is_fixed_sleep(node: ast.Call) -> bool:
    callee = ast.unparse(node.func)
    if callee.endswith("wait_for_timeout"):
        return True
    if callee not in ("time.sleep", "asyncio.sleep", "sleep", "anyio.sleep", "trio.sleep"):
        return False
    # `asyncio.sleep(0)` hands the loop to the other tasks once: it waits for no time.
    delay = node.args[0] if node.args else None
    return not (isinstance(delay, ast.Constant) and delay.value == 0)


def test_it_waits_for_conditions_not_for_fixed_times() -> None:
    found = []
    seen = set()
    for path, tree in modules():
        where = enclosing(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and is_fixed_sleep(node):
                if (path, where[node]) in ALLOWED_SLEEPS:
                    seen.add((path, where[node]))
                else:
                    found.append(f"{path}:{node.lineno} in {where[node] or 'the module'}")
    assert not found, "\n".join(found)
    # An allowance whose sleep has gone goes too.
    assert set(ALLOWED_SLEEPS) - seen == set()
