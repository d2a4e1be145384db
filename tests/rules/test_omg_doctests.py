"""The worked examples in the OMG engine's docstrings are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rules.dice",
    "rules.odds",
    "rules.omg",
    "rules.omg_character",
    "rules.omg_check",
    "rules.omg_combat",
    "rules.omg_data",
    "rules.omg_fate",
    "rules.omg_wounds",
]


@pytest.mark.parametrize("name", MODULES)
def test_it_keeps_the_docstring_examples_true(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
