"""What the security and config tests share lives in helper modules (tests/security/pages.py,
matrix.py, fingerprint.py, tests/openapi.py): a test module that imports another runs that
module's tests' imports and fixtures with it, and ties two suites that change apart."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_it_imports_no_test_module_from_another():
    found = []
    for folder in ("tests/security", "tests/config"):
        for path in sorted((ROOT / folder).glob("test_*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                found += [
                    f"{path.relative_to(ROOT)}: {name}"
                    for name in names
                    if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")
                ]
    assert found == []
