"""The worked examples in the OMG engine's docstrings are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rules.engine.dice",
    "rules.engine.odds",
    "rules.engine.omg",
    "rules.engine.omg_character",
    "rules.engine.omg_check",
    "rules.engine.omg_combat",
    "rules.engine.omg_data",
    "rules.engine.omg_fate",
    "rules.engine.omg_wounds",
]


@pytest.mark.parametrize("name", MODULES)
def test_it_keeps_the_docstring_examples_true(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
