"""The authorization matrix: every URL pattern of the URL conf, every method it accepts, every
role, and the answer each must get. A refused request must leave the database as it was; an
allowed write must really happen (2xx or a redirect, and the database changed).

Roles:

- ``anonymous``: nobody logged in;
- ``outsider``: logged in, in no campaign;
- ``player``: plays in the campaign but does not own the object (their own sheet is Bram);
- ``owner``: the player who owns the object (Ysolde, her participant, her rolls, her token);
- ``gm``: runs the campaign; ``other_gm``: runs another campaign;
- ``owner_token`` / ``gm_token``: the owner's and the GM's API tokens (``Authorization:
  Token``). On the API they act as their user; the pages do not read the header, so there they
  are anonymous.

Each cell (route, method, role) runs in a savepoint that is rolled back afterwards, so the
next cell finds the same table: a successful delete does not take the object away from the
next role, and actions that need a fight in a given state (an attack waiting for its defense,
a roll to spend Fate on) set it up inside the cell.

A URL pattern without an entry in :data:`MATRIX` fails ``test_it_has_an_entry_for_every_url``
with its name, so a new URL cannot slip through unreviewed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.core.signals import request_finished
from django.db import close_old_connections, transaction
from django.test import AsyncClient, Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from combat import services as combat
from combat.display import make_link as make_display_link
from combat.models import Declaration, Participant
from sheets.accounts import email_token
from sheets.models import ApiToken
from sheets.services import remove_player
from tests.factories import PASSWORD
from tests.fight_steps import declare
from tests.security.fingerprint import changed_tables, fingerprint
from tests.security.matrix import RULES, World, build_world
from tests.security.pages import SKIPPED_NAMESPACES, routes

# Deep and slow: scripts/test.sh runs it once, on PostgreSQL (see the "once" marker).
pytestmark = [pytest.mark.django_db, pytest.mark.once]

ROLES = (
    "anonymous",
    "outsider",
    "player",
    "owner",
    "gm",
    "other_gm",
    "owner_token",
    "gm_token",
)
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")

# --- Outcomes -------------------------------------------------------------------------------

#: Allowed: 2xx, or a redirect that is not to the login page. A write changes the database;
#: a GET never does.
OK = "ok"
#: 2xx or a redirect that is not to the login page, and the database is unchanged: a
#: computation (the rules API), or an answer such as "you are already in this campaign".
SAME = "same"
#: A redirect to the login page (with ``?next=``).
LOGIN = "login"
#: Not logged in: LOGIN on a page, 401 on the API (the token scheme comes first there).
ANON = "anon"

Outcome = str | int
Who = Mapping[str, Outcome]


def who(
    *,
    anonymous: Outcome = ANON,
    outsider: Outcome = 404,
    player: Outcome,
    owner: Outcome,
    gm: Outcome,
    other_gm: Outcome = 404,
) -> Who:
    return {
        "anonymous": anonymous,
        "outsider": outsider,
        "player": player,
        "owner": owner,
        "gm": gm,
        "other_gm": other_gm,
    }


PUBLIC = who(anonymous=OK, outsider=OK, player=OK, owner=OK, gm=OK, other_gm=OK)
#: Open to everyone, and stores nothing.
PUBLIC_SAME = who(anonymous=SAME, outsider=SAME, player=SAME, owner=SAME, gm=SAME, other_gm=SAME)
#: Any logged-in user, about their own things (lists are filtered: see test_list_leaks.py).
LOGGED_IN = who(outsider=OK, player=OK, owner=OK, gm=OK, other_gm=OK)
#: The campaign's GM and players; outsiders do not learn that it exists.
MEMBERS = who(player=OK, owner=OK, gm=OK)
#: Members may look, only the GM changes it.
GM = who(player=403, owner=403, gm=OK)
#: The character's player and the GM; another player of the campaign may only look.
OWNER_OR_GM = who(player=403, owner=OK, gm=OK)
#: The GM's preparation (their NPC library, prepared encounters): players never see it.
GM_ALONE = who(player=404, owner=404, gm=OK)


# --- Fights in a given state (run inside a cell, rolled back with it) --------------------------


def preparing_encounter(w: World) -> dict[str, Any]:
    encounter, _ = combat.create_encounter(campaign=w.campaign, name="Bridge", actor=w.gm)
    combat.add_participants(encounter=encounter, characters=[w.ysolde], actor=w.gm)
    return {"pk": encounter.pk}


def _ysolde_wounded(w: World) -> None:
    """A grievous wound on Ysolde's head (14 wounds, BZF 12): her Stamina test is due."""
    combat.adjust_zone(
        encounter=w.encounter, zone=w.ysolde.zones.get(name="head"), amount=14, actor=w.gm
    )


def stamina_due_in_fight(w: World) -> dict[str, Any]:
    _ysolde_wounded(w)
    return ysolde_in_fight(w)


def stamina_due(w: World) -> dict[str, Any]:
    _ysolde_wounded(w)
    return participant(w)


def _declare(w: World, attacker: Participant, target: Participant, actor: Any) -> Declaration:
    return declare(w.encounter, attacker, target, actor=actor)


def ysolde_attacks(w: World) -> Declaration:
    """Ysolde's attack on the thug, waiting for the (GM's) defense."""
    return _declare(w, _p(w.y), _p(w.t), w.owner)


def open_attack(w: World) -> dict[str, Any]:
    return {"pk": ysolde_attacks(w).pk}


def attack_on_ysolde(w: World) -> dict[str, Any]:
    """The thug's attack on Ysolde, waiting for her (the owner's) defense."""
    return {"pk": _declare(w, _p(w.t), _p(w.y), w.gm).pk}


def defended_attack(w: World) -> dict[str, Any]:
    decl = ysolde_attacks(w)
    combat.declare_defense(declaration=decl, defense="parry", actor=w.gm)
    return {"pk": decl.pk}


def ysolde_rolled(w: World) -> dict[str, Any]:
    """Ysolde's resolved roll: the latest, so Fate may re-roll or revoke it."""
    decl = Declaration.objects.get(pk=defended_attack(w)["pk"])
    entry = combat.resolve(declaration=decl, roll=43, actor=w.owner)
    return {"pk": entry.pk}


def _p(participant: Participant) -> Participant:
    return Participant.objects.select_related("character", "encounter__campaign").get(
        pk=participant.pk
    )


# --- Webhooks (run inside a cell, rolled back with it) -----------------------------------------

HOOK = {"url": "http://127.0.0.1:9/hook", "events": ["roll.resolved"], "format": "json"}


def _hook(w: World) -> Any:
    from integrations.models import WebhookEndpoint

    return WebhookEndpoint.objects.create(campaign=w.campaign, **HOOK)


def webhook(w: World) -> dict[str, Any]:
    return {"campaign_pk": w.campaign.pk, "pk": _hook(w).pk}


def webhook_delivery(w: World) -> dict[str, Any]:
    from integrations.models import WebhookDelivery

    hook = _hook(w)
    d = WebhookDelivery.objects.create(
        endpoint=hook, event_type="roll.resolved", webhook_id="msg_matrix", payload={"a": 1}
    )
    return {"campaign_pk": w.campaign.pk, "pk": hook.pk, "delivery_pk": d.pk}


def no_such_webhook(w: World) -> dict[str, Any]:
    return {"campaign_pk": w.campaign.pk, "pk": 999_999}


def no_such_delivery(w: World) -> dict[str, Any]:
    return {"campaign_pk": w.campaign.pk, "pk": 999_999, "delivery_pk": 999_999}


# --- Checks outside combat (run inside a cell, rolled back with it) ----------------------------

CHECK_TARGET = {"kind": "aptitude", "aptitude": "SKL", "against": 20}


def _ysolde_check(w: World, *, secret: bool = False) -> Any:
    from checks import services as checks

    return checks.roll_check(
        user=w.gm if secret else w.owner,
        character=w.ysolde,
        target=checks.parse_target(**CHECK_TARGET),
        rng=None,
        roll=50,
        secret=secret,
    )


def ysolde_checked(w: World) -> dict[str, Any]:
    return {"pk": _ysolde_check(w).pk}


def a_check_to_undo(w: World) -> dict[str, Any]:
    _ysolde_check(w)
    return {}


def ysolde_secret_check(w: World) -> dict[str, Any]:
    return {"pk": _ysolde_check(w, secret=True).pk}


def _call_ysolde(w: World) -> Any:
    from checks import services as checks

    return checks.call_checks(
        user=w.gm,
        campaign=w.campaign,
        characters=[w.ysolde],
        target=checks.parse_target(**CHECK_TARGET),
    )


def check_call(w: World) -> dict[str, Any]:
    return {"pk": _call_ysolde(w).pk}


def check_request(w: World) -> dict[str, Any]:
    return {"pk": _call_ysolde(w).requests.get().pk}


def ysolde_pk(w: World) -> dict[str, Any]:
    return {"character_pk": w.ysolde.pk}


# --- The matrix -------------------------------------------------------------------------------

Body = Mapping[str, Any] | Callable[[World], Mapping[str, Any]] | None
At = Callable[[World], dict[str, Any]]


@dataclass(frozen=True)
class Rule:
    """The expected outcome per role for one method, the body (form fields on a page, JSON on
    the API, the query string of a GET) and what the fight must look like first."""

    who: Who
    body: Body = None
    setup: At | None = None

    def data(self, w: World) -> Mapping[str, Any]:
        return (self.body(w) if callable(self.body) else self.body) or {}


@dataclass(frozen=True)
class Entry:
    at: At  # the URL's arguments
    methods: dict[str, Rule]


def entry(at: At, **methods: Rule) -> Entry:
    return Entry(at, {method.upper(): rule for method, rule in methods.items()})


def display_link(w: World) -> dict[str, Any]:
    make_display_link(campaign=w.campaign, actor=w.gm)
    return {"pk": w.campaign.pk}


def display_secret(w: World) -> dict[str, Any]:
    return {"secret": make_display_link(campaign=w.campaign, actor=w.gm).secret}


def no_such_display(w: World) -> dict[str, Any]:
    return {"secret": "A" * 43}


def no_such_display_events(w: World) -> dict[str, Any]:
    return {"secret": "A" * 43, "pk": w.encounter.pk}


def nowhere(w: World) -> dict[str, Any]:
    return {}


def campaign(w: World) -> dict[str, Any]:
    return {"pk": w.campaign.pk}


def campaign_pk(w: World) -> dict[str, Any]:
    return {"campaign_pk": w.campaign.pk}


def ysolde(w: World) -> dict[str, Any]:
    return {"pk": w.ysolde.pk}


def ysolde_rows(w: World) -> dict[str, Any]:
    return {"character_pk": w.ysolde.pk}


def encounter(w: World) -> dict[str, Any]:
    return {"pk": w.encounter.pk}


def ysolde_in_fight(w: World) -> dict[str, Any]:
    return {"pk": w.encounter.pk, "participant_pk": w.y.pk}


def participant(w: World) -> dict[str, Any]:
    return {"pk": w.y.pk}


def ysolde_conditions(w: World) -> dict[str, Any]:
    return {"participant_pk": w.y.pk}


def encounter_record(w: World) -> dict[str, Any]:
    return {"encounter_pk": w.encounter.pk}


def _ysolde_prone(w: World) -> None:
    combat.add_condition(participant=_p(w.y), name="prone", actor=w.gm)


def ysolde_prone_in_fight(w: World) -> dict[str, Any]:
    _ysolde_prone(w)
    return ysolde_in_fight(w)


def ysolde_prone(w: World) -> dict[str, Any]:
    _ysolde_prone(w)
    return ysolde_conditions(w)


def library_npc(w: World) -> dict[str, Any]:
    """The GM's library: the starter set; the URL points at its thug."""
    from prep import services as prep

    prep.add_starter_set(owner=w.gm)
    return {"pk": _gm_npc(w)}


def library_ready(w: World) -> dict[str, Any]:
    """The GM's library holds the starter set (the URL stays the entry's)."""
    library_npc(w)
    return {}


def _gm_npc(w: World) -> int:
    from prep.models import LibraryNpc

    return LibraryNpc.objects.get(owner=w.gm, starter="thug").pk


def prepared_encounter(w: World) -> dict[str, Any]:
    """A prepared encounter of the Sunken Keep: two thugs against Ysolde."""
    from prep.models import PreparedEncounter

    library_npc(w)
    prepared = PreparedEncounter.objects.create(campaign=w.campaign, name="Ford")
    prepared.expected.set([w.ysolde])
    prepared.groups.create(npc_id=_gm_npc(w), count=2, hidden=True)
    return {"pk": prepared.pk}


def prepared_group(w: World) -> dict[str, Any]:
    from prep.models import PreparedGroup

    prepared_encounter(w)
    return {"pk": PreparedGroup.objects.get(npc_id=_gm_npc(w)).pk}


def no_such_object(w: World) -> dict[str, Any]:
    # Replaced by the cell's setup; a reverse() without it would point nowhere.
    return {"pk": 999_999}


def handover_to_owner(w: World) -> dict[str, Any]:
    """The GM has offered the Sunken Keep to the owner."""
    from sheets.models import CampaignHandover

    return {"pk": CampaignHandover.objects.create(campaign=w.campaign, to_user=w.owner).pk}


NEW_PASSWORD = "another-horse-battery-9"
FIGHTER = {"foc": 2, "spd": 2, "skl": 2, "vgr": 2, "nrv": 2, "chr": 2, "svy": 2}
NPC_FORM = {
    "name": "Bandit",
    **{k: str(v) for k, v in FIGHTER.items()},
    "weight": "160",
    "disciplines": "Melee Combat 1",
    "weapons": "Hatchet",
    "zones": "head\nchest: Leather",
}
WIZARD_BUILD = {
    "name": "Brannoc",
    "method": "2d6",
    "dice": "3 1 6 2 4 4 6 6 1 1 2 5 3 3",
    "archetype": "ranger",
    "weight": "168",
    "action": "create",
    "free_0": "3",
    "extra_name_0": "Cartography",
    "extra_rank_0": "2",
    "extra_name_1": "Dancing",
    "extra_rank_1": "1",
}

MATRIX: dict[str, Entry] = {
    # --- Accounts -------------------------------------------------------------------------
    "login": entry(
        nowhere,
        get=Rule(PUBLIC),
        post=Rule(PUBLIC, body={"username": "owner", "password": PASSWORD}),
    ),
    "logout": entry(nowhere, post=Rule(PUBLIC_SAME)),
    "password_change": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        post=Rule(
            LOGGED_IN,
            body={
                "old_password": PASSWORD,
                "new_password1": NEW_PASSWORD,
                "new_password2": NEW_PASSWORD,
            },
        ),
    ),
    "password_change_done": entry(nowhere, get=Rule(LOGGED_IN)),
    # Anyone may ask for a reset mail; the answer is the same whoever asks, for any address.
    "password_reset": entry(
        nowhere, get=Rule(PUBLIC), post=Rule(PUBLIC_SAME, body={"email": "owner@example.org"})
    ),
    "password_reset_done": entry(nowhere, get=Rule(PUBLIC)),
    # A wrong link: the page that says so, to everyone, and nothing changes.
    "password_reset_confirm": entry(
        lambda w: {"uidb64": "MQ", "token": "wrong-token"},
        get=Rule(PUBLIC_SAME),
        post=Rule(PUBLIC_SAME, body={"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}),
    ),
    "password_reset_complete": entry(nowhere, get=Rule(PUBLIC)),
    "sheets:account": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        # Mails a link; nothing is stored until it is followed.
        post=Rule(
            who(outsider=SAME, player=SAME, owner=SAME, gm=SAME, other_gm=SAME),
            body={"email": "new@example.org"},
        ),
    ),
    # The owner's link: only the owner's account takes the address.
    "sheets:email_confirm": entry(
        lambda w: {"token": email_token(w.owner, "owner@example.org")},
        get=Rule(LOGGED_IN),
        post=Rule(who(outsider=400, player=400, owner=OK, gm=400, other_gm=400)),
    ),
    # Only ever one's own data.
    "account_export": entry(nowhere, get=Rule(LOGGED_IN)),
    # Only ever one's own account; the campaigns one runs are confirmed by name.
    "sheets:account_delete": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        post=Rule(
            LOGGED_IN,
            body=lambda w: {
                "password": PASSWORD,
                "characters": "give",
                f"campaign_{w.campaign.pk}": w.campaign.name,
                f"campaign_{w.elsewhere.pk}": w.elsewhere.name,
            },
        ),
    ),
    # The GM offers the campaign to a player; only that player answers the offer.
    "sheets:campaign_handover": entry(
        campaign, post=Rule(GM, body=lambda w: {"player": w.owner.pk})
    ),
    "sheets:handover_accept": entry(
        no_such_object, post=Rule(who(player=404, owner=OK, gm=404), setup=handover_to_owner)
    ),
    "sheets:handover_decline": entry(
        no_such_object, post=Rule(who(player=404, owner=OK, gm=404), setup=handover_to_owner)
    ),
    # Each role has one session in the table: there is no other one to end.
    "sheets:sessions_end": entry(
        nowhere,
        post=Rule(who(outsider=SAME, player=SAME, owner=SAME, gm=SAME, other_gm=SAME)),
    ),
    "healthz": entry(nowhere, get=Rule(PUBLIC)),
    "sheets:home": entry(nowhere, get=Rule(PUBLIC)),
    "sheets:signup": entry(
        nowhere,
        get=Rule(PUBLIC),
        # Logged in, the page sends you to your dashboard instead.
        post=Rule(
            who(anonymous=OK, outsider=SAME, player=SAME, owner=SAME, gm=SAME, other_gm=SAME),
            body={"username": "newcomer", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
        ),
    ),
    "sheets:dashboard": entry(nowhere, get=Rule(LOGGED_IN)),
    "sheets:token_list": entry(
        nowhere, get=Rule(LOGGED_IN), post=Rule(LOGGED_IN, body={"name": "Discord bot"})
    ),
    "sheets:token_revoke": entry(
        lambda w: {"pk": w.owner_token.pk},
        # Only the token's own user finds it; for anyone else it does not exist.
        post=Rule(who(player=404, owner=OK, gm=404)),
    ),
    # --- Campaigns (pages) ------------------------------------------------------------------
    "sheets:campaign_create": entry(
        nowhere, get=Rule(LOGGED_IN), post=Rule(LOGGED_IN, body={"name": "Brand new"})
    ),
    "sheets:campaign_join": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        # Anyone with the code joins; members are told they are in already.
        post=Rule(
            who(outsider=OK, player=SAME, owner=SAME, gm=SAME, other_gm=OK),
            body=lambda w: {"code": w.campaign.join_code},
        ),
    ),
    "sheets:campaign_detail": entry(campaign, get=Rule(MEMBERS)),
    "sheets:campaign_edit": entry(
        campaign, get=Rule(GM), post=Rule(GM, body={"name": "Renamed", "description": ""})
    ),
    "sheets:campaign_delete": entry(campaign, get=Rule(GM), post=Rule(GM)),
    # The GM is told to delete the campaign instead.
    "sheets:campaign_leave": entry(campaign, post=Rule(who(player=OK, owner=OK, gm=SAME))),
    "sheets:campaign_rest": entry(campaign, post=Rule(GM)),
    "sheets:campaign_regenerate_code": entry(campaign, post=Rule(GM)),
    "sheets:campaign_remove_player": entry(
        lambda w: {"pk": w.campaign.pk, "user_id": w.player.pk}, post=Rule(GM)
    ),
    # --- Characters (pages) -----------------------------------------------------------------
    "sheets:character_create": entry(
        campaign_pk,
        get=Rule(MEMBERS),
        post=Rule(MEMBERS, body={"name": "Newcomer", "archetype": "", **FIGHTER}),
    ),
    "sheets:character_wizard": entry(
        campaign_pk, get=Rule(MEMBERS), post=Rule(MEMBERS, body=WIZARD_BUILD)
    ),
    "sheets:character_import": entry(
        campaign_pk,
        get=Rule(MEMBERS),
        post=Rule(MEMBERS, body={"text": json.dumps({"name": "Imported", **FIGHTER})}),
    ),
    "sheets:character_detail": entry(ysolde, get=Rule(MEMBERS)),
    "sheets:character_print": entry(ysolde, get=Rule(MEMBERS)),
    "sheets:character_export": entry(ysolde, get=Rule(MEMBERS)),
    "sheets:character_rest": entry(ysolde, post=Rule(OWNER_OR_GM)),
    # The NPC's sheet is the GM's alone (docs/security.md): players get the 404 of a missing id.
    "sheets:character_reveal": entry(
        lambda w: {"pk": w.npc.pk},
        post=Rule(who(player=404, owner=404, gm=OK), body={"revealed": "1"}),
    ),
    "sheets:character_reserve": entry(
        ysolde, post=Rule(OWNER_OR_GM, body={"mode": "roll", "roll": "50"})
    ),
    "sheets:character_buy_raise": entry(ysolde, post=Rule(OWNER_OR_GM, body={"aptitude": "SKL"})),
    "sheets:character_edit_field": entry(
        ysolde,
        post=Rule(OWNER_OR_GM, body={"field": "notes", "value": "Edited", "original": ""}),
    ),
    "sheets:character_add_row": entry(
        lambda w: {"pk": w.ysolde.pk, "kind": "discipline"},
        post=Rule(
            OWNER_OR_GM,
            body={
                "discipline-name": "Dancing",
                "discipline-level": "1",
                "discipline-aptitude": "SPD",
            },
        ),
    ),
    "sheets:character_delete_row": entry(
        lambda w: {"pk": w.ysolde.pk, "kind": "discipline", "row_id": w.discipline()},
        post=Rule(OWNER_OR_GM),
    ),
    "sheets:character_wound": entry(
        lambda w: {"pk": w.ysolde.pk, "zone_id": w.zone(w.ysolde)},
        post=Rule(OWNER_OR_GM, body={"delta": "1"}),
    ),
    "sheets:character_delete": entry(ysolde, get=Rule(OWNER_OR_GM), post=Rule(OWNER_OR_GM)),
    # --- Encounters (pages) -----------------------------------------------------------------
    "combat:encounter_list": entry(
        campaign_pk, get=Rule(MEMBERS), post=Rule(GM, body={"name": "Bridge"})
    ),
    "combat:encounter_detail": entry(encounter, get=Rule(MEMBERS)),
    "combat:encounter_start": entry(encounter, post=Rule(GM, setup=preparing_encounter)),
    "combat:encounter_initiative": entry(encounter, post=Rule(GM)),
    # Whoever is acting (Ysolde's player) passes the turn, or the GM.
    "combat:encounter_next_turn": entry(encounter, post=Rule(OWNER_OR_GM)),
    "combat:encounter_set_turn": entry(
        lambda w: {"pk": w.encounter.pk, "participant_pk": w.t.pk}, post=Rule(GM)
    ),
    "combat:encounter_finish": entry(encounter, post=Rule(GM)),
    "combat:encounter_undo": entry(encounter, post=Rule(GM)),
    "combat:zone_adjust": entry(
        encounter,
        post=Rule(GM, body=lambda w: {"zone": w.zone(w.ysolde), "amount": "1"}),
    ),
    "combat:participant_add": entry(
        encounter, post=Rule(GM, body=lambda w: {"characters": w.bram.pk})
    ),
    "combat:npc_copies_add": entry(
        encounter, post=Rule(GM, body=lambda w: {"npc": w.npc.pk, "count": "1"})
    ),
    "combat:participant_update": entry(ysolde_in_fight, post=Rule(GM, body={"on_alert": "1"})),
    "combat:participant_stamina": entry(
        ysolde_in_fight, post=Rule(OWNER_OR_GM, body={"roll": "50"}, setup=stamina_due_in_fight)
    ),
    "combat:condition_add": entry(
        ysolde_in_fight,
        post=Rule(
            GM, body={"condition": "other", "label": "Blessed", "duration": "rounds", "rounds": "2"}
        ),
    ),
    "combat:condition_remove": entry(
        ysolde_in_fight, post=Rule(GM, body={"key": "prone"}, setup=ysolde_prone_in_fight)
    ),
    "combat:record_markdown": entry(encounter, get=Rule(MEMBERS)),
    "combat:record_json": entry(encounter, get=Rule(MEMBERS)),
    "combat:attack_declare": entry(
        encounter,
        post=Rule(
            OWNER_OR_GM,
            body=lambda w: {
                "attacker": w.y.pk,
                "target_zone": f"{w.t.pk}:{w.zone(w.t.character)}",
                "weapon": w.sword(),
                "action": "mighty",
            },
        ),
    ),
    # The target's player defends (or the GM).
    "combat:attack_defense": entry(
        no_such_object,
        post=Rule(OWNER_OR_GM, body={"defense": "dodge"}, setup=attack_on_ysolde),
    ),
    # The attacker's player rolls and calls off (or the GM).
    "combat:attack_roll": entry(
        no_such_object, post=Rule(OWNER_OR_GM, body={"roll": "43"}, setup=defended_attack)
    ),
    "combat:attack_cancel": entry(no_such_object, post=Rule(OWNER_OR_GM, setup=open_attack)),
    # Fate is spent by the character's own player: not even the GM spends Ysolde's.
    "combat:roll_fate": entry(
        no_such_object,
        post=Rule(
            who(player=403, owner=OK, gm=403),
            body=lambda w: {"spender": w.y.pk, "action": "revoke"},
            setup=ysolde_rolled,
        ),
    ),
    # An event stream cannot follow a redirect to the login page: 403.
    "live:encounter_events": entry(
        encounter, get=Rule(who(anonymous=403, player=OK, owner=OK, gm=OK))
    ),
    "combat:encounter_timer": entry(encounter, post=Rule(GM, body={"seconds": "60"})),
    # The campaign's feed for checks: its GM and players (each hears only their own news).
    "live:campaign_events": entry(
        campaign, get=Rule(who(anonymous=403, player=OK, owner=OK, gm=OK))
    ),
    # --- The table display: the GM manages its link; the link alone opens the display --------
    "display:link_make": entry(campaign, post=Rule(GM)),
    "display:link_revoke": entry(campaign, post=Rule(GM, setup=display_link)),
    # Anyone holding the secret, logged in or not; without it, 404 (no_such_display).
    "display:page": entry(no_such_display, get=Rule(PUBLIC, setup=display_secret)),
    "display:events": entry(no_such_display_events, get=Rule(PUBLIC, setup=display_secret)),
    # --- Webhooks: the GM's alone, even to look (secrets, bodies sent) -------------------------
    "integrations:webhook_list": entry(
        campaign, get=Rule(GM), post=Rule(GM, body={**HOOK, "events": "roll.resolved"})
    ),
    "integrations:webhook_detail": entry(
        no_such_webhook,
        get=Rule(GM, setup=webhook),
        post=Rule(GM, body={**HOOK, "events": "turn.passed"}, setup=webhook),
    ),
    "integrations:webhook_toggle": entry(no_such_webhook, post=Rule(GM, setup=webhook)),
    "integrations:webhook_rotate": entry(no_such_webhook, post=Rule(GM, setup=webhook)),
    "integrations:webhook_delete": entry(
        no_such_webhook, get=Rule(GM, setup=webhook), post=Rule(GM, setup=webhook)
    ),
    "integrations:delivery_detail": entry(
        no_such_delivery,
        get=Rule(GM, setup=webhook_delivery),
        post=Rule(GM, setup=webhook_delivery),
    ),
    "api:webhook-list": entry(campaign_pk, get=Rule(GM), post=Rule(GM, body=HOOK)),
    "api:webhook-detail": entry(
        no_such_webhook,
        get=Rule(GM, setup=webhook),
        put=Rule(GM, body={**HOOK, "events": ["turn.passed"]}, setup=webhook),
        patch=Rule(GM, body={"active": False}, setup=webhook),
        delete=Rule(GM, setup=webhook),
    ),
    "api:webhook-rotate-secret": entry(no_such_webhook, post=Rule(GM, setup=webhook)),
    "api:webhook-deliveries": entry(no_such_webhook, get=Rule(GM, setup=webhook)),
    "api:webhook-send-again": entry(no_such_delivery, post=Rule(GM, setup=webhook_delivery)),
    # --- The GM's preparation (prep): their own library, their prepared encounters -------------
    "prep:library": entry(nowhere, get=Rule(LOGGED_IN)),
    "prep:starter_set": entry(nowhere, post=Rule(LOGGED_IN)),
    "prep:npc_create": entry(nowhere, get=Rule(LOGGED_IN), post=Rule(LOGGED_IN, body=NPC_FORM)),
    "prep:npc_import": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        post=Rule(LOGGED_IN, body={"text": json.dumps({"name": "Imported", **FIGHTER})}),
    ),
    "prep:npc_edit": entry(
        no_such_object,
        get=Rule(GM_ALONE, setup=library_npc),
        post=Rule(GM_ALONE, body=NPC_FORM, setup=library_npc),
    ),
    "prep:npc_export": entry(no_such_object, get=Rule(GM_ALONE, setup=library_npc)),
    "prep:npc_duplicate": entry(no_such_object, post=Rule(GM_ALONE, setup=library_npc)),
    "prep:npc_delete": entry(no_such_object, post=Rule(GM_ALONE, setup=library_npc)),
    "prep:prepared_list": entry(
        campaign_pk, get=Rule(GM_ALONE), post=Rule(GM_ALONE, body={"name": "Wolves"})
    ),
    "prep:prepared_detail": entry(
        no_such_object,
        get=Rule(GM_ALONE, setup=prepared_encounter),
        post=Rule(GM_ALONE, body={"name": "Renamed"}, setup=prepared_encounter),
    ),
    "prep:prepared_matchups": entry(no_such_object, get=Rule(GM_ALONE, setup=prepared_encounter)),
    "prep:prepared_forecast": entry(no_such_object, get=Rule(GM_ALONE, setup=prepared_encounter)),
    "prep:prepared_start": entry(no_such_object, post=Rule(GM_ALONE, setup=prepared_encounter)),
    "prep:prepared_delete": entry(no_such_object, post=Rule(GM_ALONE, setup=prepared_encounter)),
    "prep:group_add": entry(
        no_such_object,
        post=Rule(
            GM_ALONE,
            body=lambda w: {"npc": _gm_npc(w), "count": "3"},
            setup=prepared_encounter,
        ),
    ),
    "prep:group_delete": entry(no_such_object, post=Rule(GM_ALONE, setup=prepared_group)),
    # The encounter's players may look at the fight, not add to it (403).
    # The fight's players may look at it, not at the NPCs' numbers its forecast gives away.
    "prep:encounter_forecast": entry(encounter, get=Rule(GM_ALONE)),
    "prep:encounter_add": entry(
        encounter,
        get=Rule(GM, setup=library_ready),
        post=Rule(GM, body=lambda w: {f"count-{_gm_npc(w)}": "2"}, setup=library_ready),
    ),
    "api:library-list": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        post=Rule(LOGGED_IN, body={"name": "Imported", **FIGHTER}),
    ),
    "api:library-detail": entry(
        no_such_object,
        get=Rule(GM_ALONE, setup=library_npc),
        put=Rule(GM_ALONE, body={"name": "Renamed", **FIGHTER}, setup=library_npc),
        patch=Rule(GM_ALONE, body={"name": "Renamed"}, setup=library_npc),
        delete=Rule(GM_ALONE, setup=library_npc),
    ),
    "api:library-duplicate": entry(no_such_object, post=Rule(GM_ALONE, setup=library_npc)),
    "api:library-starter-set": entry(nowhere, post=Rule(LOGGED_IN)),
    "api:prepared-list": entry(
        campaign_pk, get=Rule(GM_ALONE), post=Rule(GM_ALONE, body={"name": "Wolves"})
    ),
    "api:prepared-encounter-detail": entry(
        no_such_object,
        get=Rule(GM_ALONE, setup=prepared_encounter),
        put=Rule(GM_ALONE, body={"name": "Renamed"}, setup=prepared_encounter),
        patch=Rule(GM_ALONE, body={"notes": "at dusk"}, setup=prepared_encounter),
        delete=Rule(GM_ALONE, setup=prepared_encounter),
    ),
    "api:prepared-encounter-start": entry(
        no_such_object, post=Rule(GM_ALONE, setup=prepared_encounter)
    ),
    "api:prepared-encounter-matchups": entry(
        no_such_object, get=Rule(GM_ALONE, setup=prepared_encounter)
    ),
    "api:prepared-encounter-forecast": entry(
        no_such_object, get=Rule(GM_ALONE, setup=prepared_encounter)
    ),
    "api:encounter-forecast-list": entry(
        lambda w: {"encounter_pk": w.encounter.pk}, get=Rule(GM_ALONE)
    ),
    "api:encounter-library-list": entry(
        lambda w: {"encounter_pk": w.encounter.pk},
        post=Rule(
            GM,
            body=lambda w: {"picks": [{"npc": _gm_npc(w), "count": 2}], "hidden": True},
            setup=library_ready,
        ),
    ),
    # --- API tokens (API): only ever one's own ----------------------------------------------
    "api:token-list": entry(
        nowhere, get=Rule(LOGGED_IN), post=Rule(LOGGED_IN, body={"name": "Discord bot"})
    ),
    "api:token-detail": entry(
        lambda w: {"pk": w.owner_token.pk},
        # Only the token's own user finds it (the owner's token may revoke itself).
        delete=Rule(who(player=404, owner=OK, gm=404)),
    ),
    # --- Campaigns (API) --------------------------------------------------------------------
    "api:campaign-list": entry(
        nowhere, get=Rule(LOGGED_IN), post=Rule(LOGGED_IN, body={"name": "Brand new"})
    ),
    "api:campaign-detail": entry(
        campaign,
        get=Rule(MEMBERS),
        put=Rule(GM, body={"name": "Renamed", "description": ""}),
        patch=Rule(GM, body={"name": "Renamed"}),
        delete=Rule(GM),
    ),
    "api:campaign-join": entry(
        nowhere,
        post=Rule(
            who(outsider=OK, player=SAME, owner=SAME, gm=SAME, other_gm=OK),
            body=lambda w: {"code": w.campaign.join_code},
        ),
    ),
    "api:campaign-regenerate-code": entry(campaign, post=Rule(GM)),
    "api:campaign-rest": entry(campaign, post=Rule(GM)),
    "api:campaign-remove-player": entry(
        campaign, post=Rule(GM, body=lambda w: {"user_id": w.player.pk})
    ),
    # --- Characters (API) -------------------------------------------------------------------
    "api:character-list": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        # Not a campaign of theirs: the campaign field is refused (400), nothing created.
        post=Rule(
            who(outsider=400, player=OK, owner=OK, gm=OK, other_gm=400),
            body=lambda w: {"campaign": w.campaign.pk, "name": "Newcomer"},
        ),
    ),
    "api:character-detail": entry(
        ysolde,
        get=Rule(MEMBERS),
        put=Rule(OWNER_OR_GM, body=lambda w: {"campaign": w.campaign.pk, "name": "Ysolde II"}),
        patch=Rule(OWNER_OR_GM, body={"notes": "Edited"}),
        delete=Rule(OWNER_OR_GM),
    ),
    "api:character-rest": entry(ysolde, post=Rule(OWNER_OR_GM)),
    "api:character-buy-raise": entry(ysolde, post=Rule(OWNER_OR_GM, body={"aptitude": "SKL"})),
    "api:character-reserve-roll": entry(ysolde, post=Rule(OWNER_OR_GM, body={"roll": 50})),
    "api:character-reserve-call": entry(
        ysolde, post=Rule(OWNER_OR_GM, body={"keep_reserve": False, "roll": 50})
    ),
    "api:discipline-list": entry(
        ysolde_rows,
        get=Rule(MEMBERS),
        post=Rule(OWNER_OR_GM, body={"name": "Dancing", "level": 1, "aptitude": "SPD"}),
    ),
    "api:discipline-detail": entry(
        lambda w: {"character_pk": w.ysolde.pk, "pk": w.discipline()},
        get=Rule(MEMBERS),
        put=Rule(OWNER_OR_GM, body={"name": "Renamed", "level": 2, "aptitude": "SKL"}),
        patch=Rule(OWNER_OR_GM, body={"level": 1}),
        delete=Rule(OWNER_OR_GM),
    ),
    "api:weapon-list": entry(
        ysolde_rows,
        get=Rule(MEMBERS),
        post=Rule(OWNER_OR_GM, body={"name": "Knife", "category": "I", "dmg": 1, "dmg_max": 1}),
    ),
    "api:weapon-detail": entry(
        lambda w: {"character_pk": w.ysolde.pk, "pk": w.sword()},
        get=Rule(MEMBERS),
        put=Rule(
            OWNER_OR_GM, body={"name": "Old Sword", "category": "III", "dmg": 3, "dmg_max": 4}
        ),
        patch=Rule(OWNER_OR_GM, body={"bonus": 1}),
        delete=Rule(OWNER_OR_GM),
    ),
    "api:zone-list": entry(
        ysolde_rows, get=Rule(MEMBERS), post=Rule(OWNER_OR_GM, body={"name": "tail"})
    ),
    "api:zone-detail": entry(
        lambda w: {"character_pk": w.ysolde.pk, "pk": w.zone(w.ysolde)},
        get=Rule(MEMBERS),
        put=Rule(OWNER_OR_GM, body={"name": "chest", "arm": 1, "arm_max": 2}),
        patch=Rule(OWNER_OR_GM, body={"wounds": 1}),
        delete=Rule(OWNER_OR_GM),
    ),
    # --- Encounters (API) -------------------------------------------------------------------
    "api:encounter-list": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        post=Rule(
            who(outsider=400, player=403, owner=403, gm=OK, other_gm=400),
            body=lambda w: {"campaign": w.campaign.pk, "name": "Bridge"},
        ),
    ),
    "api:encounter-detail": entry(
        encounter,
        get=Rule(MEMBERS),
        put=Rule(GM, body=lambda w: {"campaign": w.campaign.pk, "name": "Renamed"}),
        patch=Rule(GM, body={"name": "Renamed"}),
        delete=Rule(GM, setup=preparing_encounter),  # a running fight is not deleted (409)
    ),
    "api:encounter-participants": entry(
        encounter,
        get=Rule(MEMBERS),
        post=Rule(GM, body=lambda w: {"characters": [w.bram.pk]}),
    ),
    "api:encounter-start": entry(encounter, post=Rule(GM, setup=preparing_encounter)),
    "api:encounter-initiative": entry(encounter, post=Rule(GM)),
    "api:encounter-next-turn": entry(encounter, post=Rule(OWNER_OR_GM)),
    "api:encounter-undo": entry(encounter, post=Rule(GM)),
    "api:encounter-finish": entry(encounter, post=Rule(GM)),
    "api:encounter-adjust": entry(
        encounter, post=Rule(GM, body=lambda w: {"zone": w.zone(w.ysolde), "amount": 1})
    ),
    "api:encounter-attacks": entry(
        encounter,
        post=Rule(
            OWNER_OR_GM,
            body=lambda w: {
                "attacker": w.y.pk,
                "target": w.t.pk,
                "zone": w.zone(w.t.character),
                "weapon": w.sword(),
                "action": "mighty",
            },
        ),
    ),
    # One call plays both sides (the defense is the target's controller's): Ysolde's owner
    # does not control the GM's thug.
    "api:encounter-strike": entry(
        encounter,
        post=Rule(
            GM,
            body=lambda w: {
                "attacker": w.y.pk,
                "target": w.t.pk,
                "zone": w.zone(w.t.character),
                "weapon": w.sword(),
                "action": "mighty",
                "defense": "dodge",
                "roll": 43,
            },
        ),
    ),
    "api:encounter-events": entry(encounter, get=Rule(MEMBERS)),
    "api:participant-detail": entry(participant, get=Rule(MEMBERS)),
    "api:participant-update-state": entry(participant, post=Rule(GM, body={"on_alert": True})),
    "api:participant-stamina": entry(
        participant, post=Rule(OWNER_OR_GM, body={"roll": 50}, setup=stamina_due)
    ),
    "api:condition-list": entry(
        ysolde_conditions,
        get=Rule(MEMBERS),
        post=Rule(GM, body={"name": "Blessed", "rounds": 2}),
    ),
    "api:condition-remove": entry(
        ysolde_conditions, post=Rule(GM, body={"key": "prone"}, setup=ysolde_prone)
    ),
    "api:record-list": entry(encounter_record, get=Rule(MEMBERS)),
    "api:record-markdown": entry(encounter_record, get=Rule(MEMBERS)),
    "api:attack-detail": entry(no_such_object, get=Rule(MEMBERS, setup=open_attack)),
    "api:attack-defense": entry(
        no_such_object,
        post=Rule(OWNER_OR_GM, body={"defense": "dodge"}, setup=attack_on_ysolde),
    ),
    "api:attack-roll": entry(
        no_such_object, post=Rule(OWNER_OR_GM, body={"roll": 43}, setup=defended_attack)
    ),
    "api:attack-cancel": entry(no_such_object, post=Rule(OWNER_OR_GM, setup=open_attack)),
    "api:roll-detail": entry(no_such_object, get=Rule(MEMBERS, setup=ysolde_rolled)),
    "api:roll-fate": entry(
        no_such_object,
        post=Rule(
            who(player=403, owner=OK, gm=403),
            body=lambda w: {"spender": w.y.pk, "action": "revoke"},
            setup=ysolde_rolled,
        ),
    ),
    # --- Checks outside combat: players roll for their own, the GM for all and alone calls ---
    "checks:check_roll": entry(
        ysolde,
        get=Rule(OWNER_OR_GM),
        post=Rule(OWNER_OR_GM, body={**CHECK_TARGET, "against": "Moderate", "roll": "50"}),
    ),
    "checks:resource_change": entry(
        ysolde,
        post=Rule(OWNER_OR_GM, body={"pool": "mana", "amount": "1", "direction": "spend"}),
    ),
    "checks:check_detail": entry(no_such_object, get=Rule(MEMBERS, setup=ysolde_checked)),
    "checks:check_fate": entry(
        no_such_object,
        post=Rule(
            OWNER_OR_GM,
            body=lambda w: {"spender": w.ysolde.pk, "action": "revoke"},
            setup=ysolde_checked,
        ),
    ),
    "checks:check_reveal": entry(
        no_such_object,
        post=Rule(who(player=404, owner=403, gm=OK), setup=ysolde_secret_check),
    ),
    "checks:campaign_checks": entry(campaign, get=Rule(MEMBERS)),
    "checks:campaign_undo": entry(campaign, post=Rule(GM, setup=a_check_to_undo)),
    "checks:call_create": entry(
        campaign,
        post=Rule(GM, body={"everyone": "1", **CHECK_TARGET, "against": "Moderate"}),
    ),
    "checks:prompts": entry(campaign, get=Rule(MEMBERS)),
    # A call's answers are the GM's; its players know it exists (403), as on the API.
    "checks:call_detail": entry(no_such_object, get=Rule(GM, setup=check_call)),
    "checks:call_close": entry(no_such_object, post=Rule(GM, setup=check_call)),
    "checks:request_answer": entry(
        no_such_object,
        get=Rule(OWNER_OR_GM, setup=check_request),
        post=Rule(OWNER_OR_GM, body={"roll": "50"}, setup=check_request),
    ),
    "api:character-check-list": entry(
        ysolde_pk, post=Rule(OWNER_OR_GM, body={**CHECK_TARGET, "roll": 50})
    ),
    "api:resource-list": entry(
        ysolde_pk, post=Rule(OWNER_OR_GM, body={"pool": "mana", "amount": -1})
    ),
    "api:check-detail": entry(no_such_object, get=Rule(MEMBERS, setup=ysolde_checked)),
    "api:check-fate": entry(
        no_such_object,
        post=Rule(
            OWNER_OR_GM,
            body=lambda w: {"spender": w.ysolde.pk, "action": "revoke"},
            setup=ysolde_checked,
        ),
    ),
    "api:check-reveal": entry(
        no_such_object,
        post=Rule(who(player=404, owner=403, gm=OK), setup=ysolde_secret_check),
    ),
    "api:campaign-check-list": entry(campaign_pk, get=Rule(MEMBERS)),
    "api:campaign-check-undo": entry(campaign_pk, post=Rule(GM, setup=a_check_to_undo)),
    "api:check-call-list": entry(
        nowhere,
        get=Rule(LOGGED_IN),
        post=Rule(
            who(outsider=404, player=403, owner=403, gm=OK, other_gm=404),
            body=lambda w: {"campaign": w.campaign.pk, "characters": [w.ysolde.pk], **CHECK_TARGET},
        ),
    ),
    "api:check-call-detail": entry(no_such_object, get=Rule(GM, setup=check_call)),
    "api:check-request-list": entry(nowhere, get=Rule(LOGGED_IN)),
    "api:check-request-answer": entry(
        no_such_object, post=Rule(OWNER_OR_GM, body={"roll": 50}, setup=check_request)
    ),
    # --- Public: the API's schema and docs, the rules API, the dice pages ---------------------
    "api:schema": entry(nowhere, get=Rule(PUBLIC)),
    "api:docs": entry(nowhere, get=Rule(PUBLIC)),
    **{
        f"api:{name}": entry(nowhere, **{method: Rule(PUBLIC_SAME, body=body)})
        for name, (method, body) in RULES.items()
    },
    **{
        f"dice:{name}": entry(nowhere, get=Rule(PUBLIC))
        for name in ("index", "omg", "ogs", "okrpg", "ore", "sds")
    },
    # --- A campaign's dice pages: members roll, and the roll goes to the campaign's log --------
    "dice:campaign_index": entry(campaign_pk, get=Rule(MEMBERS)),
    **{
        f"dice:campaign_{name}": entry(
            campaign_pk, get=Rule(MEMBERS), post=Rule(MEMBERS, body={"action": "roll"})
        )
        for name in ("omg", "ogs", "okrpg", "ore", "sds")
    },
}

# --- Running a cell ---------------------------------------------------------------------------


def is_api(name: str) -> bool:
    return name.startswith("api:")


def expected(name: str, rule: Rule, role: str) -> Outcome:
    if role.endswith("_token"):
        # The API authenticates the token as its user; pages ignore the header.
        role = role.removesuffix("_token") if is_api(name) else "anonymous"
    outcome = rule.who[role]
    if outcome == ANON:
        return 401 if is_api(name) else LOGIN
    return outcome


def send(w: World, role: str, method: str, url: str, data: Mapping[str, Any], api: bool) -> Any:
    client = Client()
    headers = {}
    if role in w.sessions:
        client.cookies[settings.SESSION_COOKIE_NAME] = w.sessions[role]
    if role in w.keys:
        headers["Authorization"] = f"Token {w.keys[role]}"
    send = getattr(client, method.lower())
    if method == "GET":
        return send(url, data, headers=headers)
    if api:
        return send(url, json.dumps(data), content_type="application/json", headers=headers)
    if method == "POST":
        return send(url, data, headers=headers)
    return send(url, headers=headers)


def close_stream(response: Any) -> None:
    """The live feed: its headers are the answer. Closing a response sends request_finished,
    whose close_old_connections would close the test's connection in the middle of its
    transaction (PostgreSQL); the test client holds it back the same way."""
    request_finished.disconnect(close_old_connections)
    try:
        response.close()
    finally:
        request_finished.connect(close_old_connections)


def verdict(outcome: Outcome, method: str, response: Any, changed: list[str]) -> str | None:
    """None when the response is the expected outcome, else what went wrong."""
    status = response.status_code
    location = response.get("Location", "")
    to_login = status == 302 and location.startswith(reverse("login") + "?next=")
    passed = 200 <= status < 400 and not to_login
    if outcome == OK:
        good = passed and (bool(changed) if method != "GET" else not changed)
    elif outcome == SAME:
        good = passed and not changed
    elif outcome == LOGIN:
        good = to_login and not changed
    else:
        good = status == outcome and not changed
    if good:
        return None
    where = f" -> {location}" if location else ""
    return f"expected {outcome}, got {status}{where}, changed {changed or 'nothing'}"


def tokens_just_used() -> None:
    """A token request writes last_used_at when it is over a minute old: the world is
    shared by every route's test (and a slow machine takes longer than that over them), so each
    cell starts with the tokens just used, and a refused request writes nothing."""
    ApiToken.objects.update(last_used_at=timezone.now())


def run_cell(
    w: World,
    name: str,
    method: str,
    role: str,
    entry_: Entry | None = None,
    made: dict[str, Any] | None = None,
) -> str | None:
    """One cell; ``made`` is what the rule's setup made, when the caller made it once for
    every role (see ``every_role``), else the cell makes it itself."""
    entry_ = entry_ or MATRIX[name]
    rule = entry_.methods[method]
    outcome = expected(name, rule, role)
    with transaction.atomic():
        try:
            cache.clear()  # throttles and presence start afresh in every cell
            tokens_just_used()
            if made is None:
                made = rule.setup(w) if rule.setup else {}
            kwargs = {**entry_.at(w), **made}
            url = reverse(name, kwargs=kwargs)
            before = fingerprint()
            try:
                response = send(w, role, method, url, rule.data(w), is_api(name))
            except Exception as exc:  # a 500 is a finding like any other wrong answer
                return f"expected {outcome}, raised {exc!r}"
            if response.streaming:
                close_stream(response)
            problem = verdict(outcome, method, response, changed_tables(before, fingerprint()))
            if problem is None and outcome == 404:
                problem = looks_missing(w, name, method, role, kwargs, rule, response)
            return problem
        finally:
            transaction.set_rollback(True)


GHOST = 999_999


def looks_missing(
    w: World,
    name: str,
    method: str,
    role: str,
    kwargs: dict[str, Any],
    rule: Rule,
    response: Any,
) -> str | None:
    """A 404 for an object you may not see must be the 404 of an object that does not exist,
    byte for byte: nobody learns that someone else's campaign or sheet is there."""
    ghost = {k: GHOST if isinstance(v, int) else v for k, v in kwargs.items()}
    other = send(w, role, method, reverse(name, kwargs=ghost), rule.data(w), is_api(name))
    if (other.status_code, other.content) == (response.status_code, response.content):
        return None
    return f"a 404 unlike that of a missing object: {response.content[:200]!r}"


def probe_unlisted(w: World, name: str, method: str) -> str | None:
    """A method the entry does not list: the API answers 405; a page answers 405 or treats
    it as a GET (Django function views), but never changes anything."""
    entry_ = MATRIX[name]
    rule = next(iter(entry_.methods.values()))
    role = "gm_token" if is_api(name) else "gm"
    with transaction.atomic():
        try:
            tokens_just_used()
            kwargs = {**entry_.at(w), **(rule.setup(w) if rule.setup else {})}
            url = reverse(name, kwargs=kwargs)
            before = fingerprint()
            response = send(w, role, method, url, {}, is_api(name))
            if response.streaming:
                close_stream(response)
            changed = changed_tables(before, fingerprint())
        finally:
            transaction.set_rollback(True)
    status = response.status_code
    if status == 405 or (not is_api(name) and method != "GET" and status < 500 and not changed):
        return None
    return f"{method} is not in the matrix but answered {status}, changed {changed or 'nothing'}"


# --- Tests ------------------------------------------------------------------------------------


def url_patterns() -> list[tuple[str | None, str, URLPattern]]:
    """(name, route, pattern) of every URL pattern outside Django's admin, named or not."""
    found: list[tuple[str | None, str, URLPattern]] = []

    def walk(patterns: list[Any], prefix: str, namespace: str) -> None:
        for item in patterns:
            if isinstance(item, URLResolver):
                ns = item.namespace or ""
                full = f"{namespace}:{ns}" if namespace and ns else (ns or namespace)
                if full not in SKIPPED_NAMESPACES:
                    walk(item.url_patterns, prefix + str(item.pattern), full)
            elif isinstance(item, URLPattern):
                name = item.name and (f"{namespace}:{item.name}" if namespace else item.name)
                found.append((name, prefix + str(item.pattern), item))

    walk(get_resolver().url_patterns, "", "")
    return found


def test_it_has_an_entry_for_every_url():
    missing = sorted(r.name for r in routes() if r.name not in MATRIX)
    assert not missing, (
        "URL patterns without an entry in the authorization matrix "
        f"(tests/security/test_authz_matrix.py MATRIX): {missing}"
    )
    unnamed = [route for name, route, _ in url_patterns() if not name]
    assert not unnamed, f"URL patterns without a name cannot be in the matrix: {unnamed}"
    stale = sorted(set(MATRIX) - {r.name for r in routes()})
    assert not stale, f"Matrix entries for URLs that no longer exist: {stale}"


def test_it_names_a_new_url_that_has_no_entry(settings):
    """The routes come from the URLconf itself: a page added there, and nowhere else, is
    named by the check above."""
    from types import ModuleType

    from django.http import HttpResponse
    from django.urls import include, path

    def brand_new(request: Any) -> HttpResponse:
        return HttpResponse()

    urls = import_module(settings.ROOT_URLCONF)
    extra = [path("brand-new/", brand_new, name="brand_new"), path("", include(urls))]
    conf = ModuleType("urls_with_a_new_route")
    conf.urlpatterns = extra  # type: ignore[attr-defined]  # a URLconf is any module with it
    settings.ROOT_URLCONF = conf
    assert [r.name for r in routes() if r.name not in MATRIX] == ["brand_new"]


def test_it_lists_exactly_the_methods_each_api_view_accepts():
    """DRF views say which methods they take: the matrix must list exactly those. (Function
    views cannot say; the walk below probes their unlisted methods instead.)"""
    wrong = {}
    for name, _, pattern in url_patterns():
        if not (name and is_api(name)):
            continue
        view = pattern.callback
        if hasattr(view, "actions"):  # a viewset's route: its method -> action map
            # DRF 3.16+ maps HEAD to the GET action itself; HEAD is answered as GET either way
            # (and probed with GET below), so it is not a method of its own here.
            accepted = {method.upper() for method in view.actions} - {"HEAD"}
        else:
            accepted = {m for m in METHODS if hasattr(view.cls, m.lower())}  # type: ignore[attr-defined]  # DRF's as_view
        listed = set(MATRIX[name].methods)
        if accepted != listed:
            wrong[name] = {"accepted": sorted(accepted), "listed": sorted(listed)}
    assert not wrong


@pytest.fixture(scope="class")
def shared_world(django_db_setup: None, django_db_blocker: Any) -> Iterator[World]:
    """One world for every route's test: built once (it was a third of the matrix's time) in
    a transaction rolled back at the end. Each test runs in a savepoint inside it, and each
    cell in a savepoint inside that, so every cell still finds the same table."""
    with django_db_blocker.unblock(), transaction.atomic():
        world = build_world()
        yield world
        transaction.set_rollback(True)


def every_role(w: World, name: str, method: str) -> list[tuple[str, str | None]]:
    """(role, problem) of each role's cell. What the rule's setup makes (an NPC in the library,
    a fight waiting for a defense) is made once for all the roles, in a savepoint around their
    cells and rolled back after them; each cell still runs in its own savepoint, so what one
    role's request does (a delete, a roll) is gone before the next role's. Made again for each
    cell, it was most of the time of the routes that have one."""
    rule = MATRIX[name].methods[method]
    if rule.setup is None:
        return [(role, run_cell(w, name, method, role)) for role in ROLES]
    with transaction.atomic():
        try:
            made = rule.setup(w)
            return [(role, run_cell(w, name, method, role, made=made)) for role in ROLES]
        finally:
            transaction.set_rollback(True)


class TestEveryRoute:
    @pytest.mark.parametrize("name", sorted(MATRIX))
    def test_it_answers_every_role_as_the_matrix_says(self, name, shared_world):
        w = shared_world
        failures = []
        for method in MATRIX[name].methods:
            for role, problem in every_role(w, name, method):
                if problem:
                    failures.append(f"{method} as {role}: {problem}")
        for method in METHODS:
            if method not in MATRIX[name].methods:
                problem = probe_unlisted(w, name, method)
                if problem:
                    failures.append(problem)
        assert not failures, "\n".join([name, *failures])


def test_it_keeps_django_admin_to_staff():
    """The admin is Django's own and not in the matrix: nobody at the table is staff."""
    w = build_world()
    for role in ROLES:
        response = send(w, role, "GET", reverse("admin:index"), {}, api=False)
        assert response.status_code == 302, role
        assert response["Location"].startswith(reverse("admin:login")), role


def test_it_has_a_sizeable_matrix():
    """The floors docs/security.md states, so its figures hold as routes are added."""
    cells = sum(len(e.methods) for e in MATRIX.values()) * len(ROLES)
    assert len(MATRIX) > 200
    assert cells > 2000


# --- Variations on the table ------------------------------------------------------------------

#: What a character's player does with their sheet, page and API.
OWN_SHEET = [
    ("sheets:character_detail", "GET"),
    ("sheets:character_export", "GET"),
    ("sheets:character_edit_field", "POST"),
    ("sheets:character_wound", "POST"),
    ("api:character-detail", "GET"),
    ("api:character-detail", "PATCH"),
    ("api:zone-list", "GET"),
    ("api:weapon-detail", "PATCH"),
]


@pytest.mark.parametrize(("name", "method"), OWN_SHEET)
def test_it_leaves_a_character_the_gm_hides_in_a_fight_to_its_own_player(name, method):
    """The GM may hide anyone's numbers in a fight ("hide numbers" on the encounter page):
    other players lose sight of the sheet, its own player keeps it, as on the encounter page
    (combat.access.hidden_ids)."""
    w = build_world()
    combat.update_participant(participant=_p(w.y), hidden=True, actor=w.gm)
    problems = {role: run_cell(w, name, method, role) for role in ("owner", "owner_token", "gm")}
    assert problems == dict.fromkeys(problems)
    if method == "GET":
        url = reverse(name, kwargs=MATRIX[name].at(w))
        assert send(w, "player", "GET", url, {}, is_api(name)).status_code == 404


FOREIGN_CAMPAIGN = [
    pytest.param(name, method, role, at, body, id=f"{name}-{method}-{role}")
    # (route, method, role, the URL's arguments, the body without its campaign)
    for name, method, role, at, body in [
        ("api:character-list", "POST", "outsider", nowhere, {"name": "Spy"}),
        ("api:encounter-list", "POST", "outsider", nowhere, {"name": "Spy"}),
        ("api:encounter-list", "POST", "player", nowhere, {"name": "Spy"}),
        ("api:character-detail", "PUT", "gm_token", ysolde, {"name": "Moved"}),
        ("api:encounter-detail", "PUT", "gm_token", encounter, {"name": "Moved"}),
    ]
]


@pytest.mark.parametrize(("name", "method", "role", "at", "body"), FOREIGN_CAMPAIGN)
def test_it_refuses_someone_elses_campaign_in_a_body_as_if_it_did_not_exist(
    name, method, role, at, body
):
    """A campaign id in a body that is not one of yours gets the answer of an id that does
    not exist: the refusal does not tell that the other campaign is there."""
    w = build_world()
    url = reverse(name, kwargs=at(w))
    before = fingerprint()
    theirs = send(w, role, method, url, {**body, "campaign": w.elsewhere.pk}, api=True)
    missing = send(w, role, method, url, {**body, "campaign": GHOST}, api=True)
    assert theirs.status_code == missing.status_code == 400
    assert theirs.content.replace(str(w.elsewhere.pk).encode(), b"<id>") == (
        missing.content.replace(str(GHOST).encode(), b"<id>")
    )
    assert fingerprint() == before


#: The rules API endpoints that also put the roll into a campaign's roll log when the body
#: names the campaign: its members only; anyone else (anonymous callers too) gets 404 and
#: nothing is rolled.
ROLL_LOGGING = (
    "rules_omg_check",
    "rules_omg_strike",
    "rules_ogs_check",
    "rules_ogs_open",
    "rules_ore_roll",
    "rules_ore_multiple",
    "rules_sds_check",
    "rules_okrpg_tide",
)


@pytest.mark.parametrize("name", ROLL_LOGGING)
def test_it_logs_a_rules_api_roll_only_in_a_campaign_of_yours(name):
    w = build_world()
    _, body = RULES[name]
    logged = Entry(
        nowhere,
        {
            "POST": Rule(
                who(anonymous=404, player=OK, owner=OK, gm=OK),
                body=lambda w: {**body, "campaign": w.campaign.pk, "note": "for the log"},
            )
        },
    )
    problems = {role: run_cell(w, f"api:{name}", "POST", role, logged) for role in ROLES}
    assert problems == dict.fromkeys(ROLES)
    # Someone else's campaign is refused like one that does not exist.
    url = reverse(f"api:{name}")
    theirs = send(w, "owner", "POST", url, {**body, "campaign": w.elsewhere.pk}, api=True)
    missing = send(w, "owner", "POST", url, {**body, "campaign": GHOST}, api=True)
    assert (theirs.status_code, theirs.content) == (missing.status_code, missing.content)
    assert theirs.status_code == 404


@pytest.mark.django_db(transaction=True)
def test_it_stops_the_live_feed_of_a_player_removed_from_the_campaign():
    w = build_world()
    encounter, _ = combat.create_encounter(campaign=w.campaign, name="Bridge", actor=w.gm)
    combat.add_participants(encounter=encounter, characters=[w.ysolde], actor=w.gm)
    url = reverse("live:encounter_events", args=[encounter.pk])

    async def scenario() -> str:
        client = AsyncClient()
        await client.aforce_login(w.player)
        response = await client.get(url)
        chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
        assert (await anext(chunks)).startswith(b"event: hello")
        await sync_to_async(remove_player)(user=w.gm, campaign=w.campaign, user_id=w.player.pk)
        await sync_to_async(combat.start_encounter)(encounter=encounter, actor=w.gm)
        try:
            after = (await asyncio.wait_for(anext(chunks), 3)).decode()
        except (StopAsyncIteration, TimeoutError):
            after = ""  # the stream ended, or stays silent
        await chunks.aclose()
        return after

    after = async_to_sync(scenario)()
    assert "event: entry" not in after and "event: tracker" not in after
    assert after.startswith("event: gone")  # the page is told to stop following
