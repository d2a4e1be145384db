"""Every die the server rolls comes from sheets.randomness.server_rng: the services fall back on
it when given no ``rng``, and nothing else in the apps makes a generator of its own or calls the
global ``random``."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from combat.services.resolution import roll_value
from sheets import randomness

ROOT = Path(__file__).resolve().parents[2]
APPS = ("config", "sheets", "combat", "checks", "prep", "integrations", "rules")
# The rules engine always receives its rng (its own tests hold that); bench/ is run by hand.
NOT_SCANNED = ("rules/engine/",)
ALLOWED = {
    # The one generator.
    "sheets/randomness.py",
    # A webhook retry's jitter, not a die: seeding the dice in a test must not move the
    # retries, and no one needs to replay them.
    "integrations/delivery.py",
}


def rolls_of_its_own(tree: ast.AST) -> list[int]:
    """Lines that call the global ``random`` or make a generator: ``random.randint(...)``,
    ``random.SystemRandom()``, ``SystemRandom()``, a name imported from ``random``."""
    from_random: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            from_random.update(alias.asname or alias.name for alias in node.names)
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        on_the_module = (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "random"
            and func.attr != "Random"
        )
        imported = isinstance(func, ast.Name) and (
            func.id in from_random or func.id == "SystemRandom"
        )
        if on_the_module or imported:
            lines.append(node.lineno)
    return lines


def scanned_files() -> list[str]:
    found = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if "/migrations/" in name or name.startswith(NOT_SCANNED):
                continue
            found.append(name)
    return found


def test_it_finds_the_files_it_scans():
    names = scanned_files()
    assert "combat/services/turns.py" in names
    assert "sheets/randomness.py" in names
    assert not any(name.startswith("rules/engine/") for name in names)


def test_it_rolls_nowhere_but_in_server_rng():
    rolling = {}
    for name in scanned_files():
        lines = rolls_of_its_own(ast.parse((ROOT / name).read_text(), filename=name))
        if lines and name not in ALLOWED:
            rolling[name] = lines
    assert rolling == {}


@pytest.mark.parametrize(
    "source",
    [
        "import random\nrandom.randint(1, 100)\n",
        "import random\nrandom.SystemRandom().random()\n",
        "from random import SystemRandom\nSystemRandom()\n",
        "from random import choice as pick\npick([1, 2])\n",
        "import random\nrandom.random()\n",
    ],
)
def test_it_catches_each_way_of_rolling_by_hand(source):
    assert rolls_of_its_own(ast.parse(source))


def test_it_leaves_a_passed_generator_alone():
    assert not rolls_of_its_own(ast.parse("def f(rng):\n    return rng.randint(1, 100)\n"))


def test_it_seeds_every_service_that_is_given_no_rng(monkeypatch):
    monkeypatch.setattr(randomness, "RNG", random.Random(7))
    rolled = [roll_value(None, None) for _ in range(3)]
    expected = random.Random(7)
    assert rolled == [(expected.randint(1, 100), False) for _ in range(3)]
