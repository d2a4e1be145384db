"""What the authorization matrix and the tests built on its world share: the table every cell
starts from, and a valid request for each endpoint of the public rules API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.test import Client
from django.utils import timezone

from combat import services as combat
from combat.models import Encounter, Participant
from sheets.models import ApiToken, Campaign, Character
from sheets.services import create_character
from tests.factories import make_campaign, make_thug, make_user, make_ysolde

# --- The table every cell starts from --------------------------------------------------------


@dataclass
class World:
    """The Sunken Keep (GM ``gm``; players ``owner`` and ``player``) in a running fight:
    Ysolde (the owner's) against a hidden copy of the GM's thug, Ysolde's turn. Bram (the
    player's) is not in the fight. ``other_gm`` runs Elsewhere."""

    gm: Any
    owner: Any
    player: Any
    outsider: Any
    other_gm: Any
    campaign: Campaign
    elsewhere: Campaign
    ysolde: Character
    bram: Character
    npc: Character
    encounter: Encounter
    y: Participant  # Ysolde in the fight
    t: Participant  # the hidden thug copy
    owner_token: ApiToken
    sessions: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)

    def zone(self, character: Character, name: str = "chest") -> int:
        return character.zones.get(name=name).pk

    def sword(self) -> int:
        return self.ysolde.weapons.get().pk

    def discipline(self) -> int:
        return self.ysolde.disciplines.order_by("pk").first().pk


def build_world() -> World:
    gm, owner, player, outsider, other_gm = (
        make_user(name) for name in ("gm", "owner", "player", "outsider", "other_gm")
    )
    campaign = make_campaign(gm, players=(owner, player), name="The Sunken Keep")
    elsewhere = make_campaign(other_gm, name="Elsewhere")
    ysolde = make_ysolde(campaign, owner, fate=3)
    Character.objects.filter(pk=ysolde.pk).update(rsv=40)
    bram = create_character(campaign=campaign, owner=player, name="Bram")
    npc = make_thug(campaign, gm)
    encounter, _ = combat.create_encounter(campaign=campaign, name="Ambush", actor=gm)
    combat.add_participants(encounter=encounter, characters=[ysolde], actor=gm)
    combat.add_npc_copies(encounter=encounter, npc=npc, count=1, hidden=True, actor=gm)
    combat.start_encounter(encounter=encounter, actor=gm)
    encounter.refresh_from_db()
    y = encounter.participants.get(character=ysolde)
    t = encounter.participants.exclude(character=ysolde).get()
    assert encounter.turn_id == y.pk
    owner_token, owner_key = ApiToken.objects.create_token(user=owner, name="owner's script")
    _, gm_key = ApiToken.objects.create_token(user=gm, name="GM's bot")
    # Used just now: a token request inside a cell then writes nothing (last_used_at is
    # touched at most once a minute), so a refusal can be checked against the fingerprint.
    ApiToken.objects.update(last_used_at=timezone.now())
    world = World(
        gm=gm,
        owner=owner,
        player=player,
        outsider=outsider,
        other_gm=other_gm,
        campaign=campaign,
        elsewhere=elsewhere,
        ysolde=Character.objects.get(pk=ysolde.pk),
        bram=bram,
        npc=npc,
        encounter=encounter,
        y=y,
        t=t,
        owner_token=owner_token,
        keys={"owner_token": owner_key, "gm_token": gm_key},
    )
    for role in ("outsider", "player", "owner", "gm", "other_gm"):
        client = Client()
        client.force_login(getattr(world, role))
        world.sessions[role] = client.cookies[settings.SESSION_COOKIE_NAME].value
    return world


# --- The public rules API ------------------------------------------------------------------

STRIKE = {
    "strike": "fast",
    "attack_apt": 3,
    "attack_dsc": 3,
    "weapon_dmg": 4,
    "defense": "dodge",
    "defense_apt": 3,
    "defense_dsc": 2,
    "arm": 2,
}
#: The public rules API: a valid request for each endpoint (query string for GET).
RULES: dict[str, tuple[str, Mapping[str, Any]]] = {
    "rules_omg_check": ("post", {"pro": 70, "dif": 20, "roll": 43}),
    "rules_omg_odds": ("get", {"pro": 70, "dif": 20}),
    "rules_omg_strike": ("post", {**STRIKE, "roll": 43}),
    "rules_omg_strike_odds": ("get", {k: str(v) for k, v in STRIKE.items()}),
    "rules_ogs_check": ("post", {"dice": ["d4", "d8"], "values": [1, 4], "difficulty": 8}),
    "rules_ogs_odds": ("get", {"dice": "d4,d8,d8", "difficulty": 8}),
    "rules_ogs_opposed": ("post", {"a": {"dice": ["d4", "d8"]}, "b": {"dice": ["d6", "d6"]}}),
    "rules_ogs_opposed_odds": ("get", {"a": "d4,d8", "b": "d6,d6"}),
    "rules_ogs_open": ("post", {"dice": ["d6"] * 3, "values": [1, 5, 6], "flat": 2}),
    "rules_ogs_increase": ("post", {"dice": ["d12"], "stages": 2, "open": False}),
    "rules_ore_roll": ("post", {"pool": 4, "dice": [2, 5, 9, 9]}),
    "rules_ore_odds": ("get", {"pool": 2}),
    "rules_ore_contest": ("post", {"a": {"dice": [3, 4, 4]}, "b": {"dice": [1, 5, 7, 7]}}),
    "rules_ore_contest_odds": ("get", {"a_pool": 7, "b_pool": 5}),
    "rules_ore_gobble": ("post", {"dice": [1, 5, 7, 7, 8], "hits": 1}),
    "rules_ore_multiple": ("post", {"actions": 2, "dice": [4, 4, 6], "difficulty": 3}),
    "rules_ore_cooperate": ("post", {"members": [{"pool": 2}, {"pool": 1}], "dice": [1, 1, 3]}),
    "rules_sds_check": ("post", {"skill": 8, "skill_rolls": [1], "flag_rolls": [5]}),
    "rules_sds_odds": ("get", {"skill": 4, "hard": 8}),
    "rules_okrpg_damage": ("post", {"damage": "Grt", "dr": "Avg+", "lethality": "cutting"}),
    "rules_okrpg_round": ("post", {"combatants": [{"name": "A", "successes": 3}]}),
    "rules_okrpg_tide": ("post", {"tide": "worse", "dice": [6, 2]}),
    "rules_okrpg_odds": ("get", {"tide": "worse"}),
}
