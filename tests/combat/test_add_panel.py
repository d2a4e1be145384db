"""The "Add to the fight" panel lists the campaign's player characters and its own NPCs
apart, with real checkboxes, and leaves out the copies other fights made; the library's NPCs
have their own way in."""

from __future__ import annotations

import re

import pytest

from combat import services
from tests.factories import make_ysolde

pytestmark = pytest.mark.django_db


def _fieldset(page: str, testid: str) -> str:
    match = re.search(rf'<fieldset data-testid="{testid}">.*?</fieldset>', page, re.S)
    assert match, testid
    return match.group(0)


def test_it_lists_characters_and_npcs_apart_without_other_fights_copies(fight, client_for):
    make_ysolde(fight.table.campaign, fight.table.player, name="Brannoc")
    other, _ = services.create_encounter(
        campaign=fight.table.campaign, name="Elsewhere", actor=fight.table.gm
    )
    services.add_npc_copies(encounter=other, npc=fight.npc, count=2, actor=fight.table.gm)
    page = client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).text
    characters = _fieldset(page, "add-characters")
    npcs = _fieldset(page, "add-npcs")
    assert "Brannoc" in characters and "Salvager" not in characters
    assert 'type="checkbox" name="characters"' in characters
    assert "Salvager Thug <small" in npcs and "#1" not in npcs and "#2" not in npcs
    assert 'data-testid="library-add"' in page
    copies = re.search(r'<select name="npc">.*?</select>', page, re.S)
    assert copies and "#2" not in copies.group(0)
