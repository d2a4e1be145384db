"""The whole timing of a disarm (seed 000, "Tactical Maneuver": "spends next rd. retrieving
weapon"; docs/rules.md, "Disarm"): the weapon is out of hand from the roll that disarms until
the condition ends; what was declared with it goes on without it; no new strike, maneuver or
counterattack may name a weapon meanwhile; defenses are unchanged; undo and Fate give it back.

Numbers from the sheets in tests/factories.py: the thug's mighty strike with his hatchet is
PRO 50 + 5 x (VGR 4 + Axe 2) = 80, unarmed (no weapon discipline) 70; Ysolde's disarm is
50 + 5 x (SKL 4 + Melee 2) = 80 against the thug's dodge 5 x (SPD 2 + Melee 1) = 15."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from combat import services
from combat.models import CombatLogEntry, Declaration, Participant
from tests.fight_steps import declare, declare_and_defend, strike

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def api_for(api_for):
    def make(user):
        client = api_for(user)
        client.default_format = "json"
        return client

    return make


def _disarm(fight, attacker, target):
    """``attacker`` disarms ``target`` (declared by the GM, out of turn when need be), who
    dodges: 43 succeeds at 80v15 (Ysolde) and at 70v25 (the thug)."""
    gm = fight.table.gm
    entry = strike(
        fight.encounter,
        attacker,
        target,
        action="disarm",
        zone=None,
        weapon=None,
        actor=gm,
        defender=gm,
        defense="dodge",
        roll=43,
    )
    fight.refresh()
    return entry


def _thugs_mighty_strike(fight, weapon=True):
    return declare(
        fight.encounter,
        fight.thug,
        fight.ysolde,
        weapon=fight.weapon(fight.thug) if weapon else None,
        actor=fight.table.gm,
    )


def _odds(decl_pk):
    decl = Declaration.objects.select_related(
        "attacker__character", "target__character", "zone", "weapon", "encounter"
    ).get(pk=decl_pk)
    return services.declaration_odds(decl)


def test_it_resolves_an_attack_declared_before_the_disarm_without_the_weapon(fight):
    """Declared with the hatchet, disarmed before the roll: the roll is made with no weapon
    (DMG 0, no Axe discipline: an undisciplined mighty strike, which does not double)."""
    decl = _thugs_mighty_strike(fight)
    assert _odds(decl.pk)["dodge"]["pvd"] == "80v25"
    entry = _disarm(fight, fight.ysolde, fight.thug)
    assert "disarmed" in fight.thug.conditions
    assert "attack already declared goes on without Hatchet" in entry.text
    assert _odds(decl.pk)["dodge"]["pvd"] == "70v25"

    services.declare_defense(declaration=decl, defense="dodge", actor=fight.table.player)
    rolled = services.resolve(declaration=decl, roll=54, actor=fight.table.gm)
    # SUM 5 + 4 = 9, no weapon, no doubling, ARM 2: 7, halved by the dodge: 3. With the
    # hatchet it would have been (9 + 4) x 2 - 2 = 24, halved: 12.
    assert rolled.payload["result"]["pro"] == 70
    assert [h["damage"] for h in rolled.payload["result"]["hits"]] == [3]
    assert "without Hatchet (disarmed)" in rolled.text
    # The weapon is not in hand: nothing about it is read or worn.
    assert fight.weapon(fight.thug).dmg == 4


def test_a_weapon_out_of_hand_is_not_worn_by_a_block(fight):
    """A block wears the attacker's weapon on a dramatic failure: not one the attacker no
    longer holds. Ysolde blocks at 5 x (VGR 5 + Melee 2) = 35; 22 is a dramatic failure."""
    decl = _thugs_mighty_strike(fight)
    _disarm(fight, fight.ysolde, fight.thug)
    services.declare_defense(declaration=decl, defense="block", actor=fight.table.player)
    rolled = services.resolve(declaration=decl, roll=22, actor=fight.table.gm)
    assert rolled.payload["result"]["degree"] == "dramatic_failure"
    assert fight.weapon(fight.thug).dmg == 4
    assert "loses 1 DMG" not in rolled.text


def test_the_page_says_an_open_attack_goes_on_without_the_weapon(fight, client_for):
    _thugs_mighty_strike(fight)
    gm = client_for(fight.table.gm)
    page = gm.get(fight.encounter.get_absolute_url()).text
    assert "with Hatchet." in page and "80v25" in page
    _disarm(fight, fight.ysolde, fight.thug)
    page = gm.get(fight.encounter.get_absolute_url()).text
    assert "with Hatchet (disarmed: made without it)." in page
    assert "70v25" in page and "80v25" not in page  # the odds shown are the unarmed ones


def test_it_keeps_the_weapon_for_an_attack_when_the_disarm_fails(fight):
    decl = _thugs_mighty_strike(fight)
    gm = fight.table.gm
    # Above 80: a miss.
    strike(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="disarm",
        zone=None,
        weapon=None,
        actor=gm,
        defender=gm,
        defense="dodge",
        roll=90,
    )
    fight.refresh()
    assert fight.thug.conditions == {}
    assert _odds(decl.pk)["dodge"]["pvd"] == "80v25"


@pytest.mark.parametrize(
    ("action", "zone"), [("fast", True), ("mighty", True), ("stun", True), ("grapple", False)]
)
def test_the_api_refuses_a_weapon_to_a_disarmed_fighter(fight, api_for, action, zone):
    _disarm(fight, fight.ysolde, fight.thug)
    gm = api_for(fight.table.gm)
    body = {"attacker": fight.thug.pk, "target": fight.ysolde.pk, "action": action}
    if zone:
        body["zone"] = fight.zone(fight.ysolde, "chest").pk
    before = CombatLogEntry.objects.count()
    for url, extra in (("attacks", {}), ("strike", {"defense": "dodge", "roll": 50})):
        armed = gm.post(
            f"/api/encounters/{fight.encounter.pk}/{url}/",
            {**body, **extra, "weapon": fight.weapon(fight.thug).pk},
        )
        assert armed.status_code == 400, armed.json()
        assert list(armed.json()) == ["weapon"]
        assert "disarmed" in str(armed.json()["weapon"])
    assert CombatLogEntry.objects.count() == before
    # Unarmed is still open to them in the round of the disarm.
    unarmed = gm.post(f"/api/encounters/{fight.encounter.pk}/attacks/", body)
    assert unarmed.status_code == 201, unarmed.json()
    assert unarmed.json()["weapon"] is None


def test_the_services_refuse_a_weapon_named_by_id_or_row(fight):
    _disarm(fight, fight.ysolde, fight.thug)
    for weapon in (fight.weapon(fight.thug), fight.weapon(fight.thug).pk):
        with pytest.raises(services.CombatError, match="disarmed") as refused:
            services.declare_attack(
                encounter=fight.encounter.pk if isinstance(weapon, int) else fight.encounter,
                attacker=fight.thug.pk,
                target=fight.ysolde.pk,
                action="precise",
                zone=fight.zone(fight.ysolde, "chest").pk,
                weapon=weapon,
                actor=fight.table.gm,
            )
        assert refused.value.fields == ("weapon",)
    assert not Declaration.objects.filter(attacker=fight.thug, action="precise").exists()


def test_the_page_offers_no_weapon_to_a_disarmed_fighter_and_refuses_one(fight, client_for):
    _disarm(fight, fight.ysolde, fight.thug)
    gm = client_for(fight.table.gm)
    page = gm.get(fight.encounter.get_absolute_url(), {"attacker": fight.thug.pk})
    form = re.search(r'<form[^>]*data-testid="declare-form".*?</form>', page.content.decode(), re.S)
    weapons = re.search(r'<select name="weapon".*?</select>', form.group(0), re.S).group(0)
    assert re.findall(r'<option value="([^"]*)"', weapons) == [""]
    assert "Disarmed" in form.group(0)
    # A weapon sent anyway (an old form, a second tab) is refused, with or without htmx.
    post = {
        "attacker": fight.thug.pk,
        "target_zone": f"{fight.ysolde.pk}:{fight.zone(fight.ysolde, 'chest').pk}",
        "weapon": fight.weapon(fight.thug).pk,
        "action": "fast",
    }
    url = reverse("combat:attack_declare", args=[fight.encounter.pk])
    refused = gm.post(url, post, **HX)
    assert refused.status_code == 422
    assert "disarmed" in refused.content.decode()
    plain = gm.post(url, post, follow=True)
    assert "disarmed" in plain.content.decode()
    assert not Declaration.objects.filter(attacker=fight.thug).exists()


def test_a_disarmed_fighter_defends_as_usual_and_counterattacks_unarmed(fight, api_for):
    """No defense of the seed uses a weapon (DIF = APT + Melee Combat): a disarmed Ysolde
    parries at 5 x (SKL 4 + Melee 2) = 30 as before and earns her counterattack, which she
    makes without her sword."""
    _disarm(fight, fight.thug, fight.ysolde)
    assert "disarmed" in fight.ysolde.conditions
    strike = _strike_at_ysolde(fight)
    player = api_for(fight.table.player)
    defended = player.post(f"/api/attacks/{strike.pk}/defense/", {"defense": "parry"})
    assert defended.status_code == 200, defended.json()
    # The thug's precise strike: 50 + 5 x (SKL 3 + Axe 2) = 75.
    assert _odds(strike.pk)["parry"]["pvd"] == "75v30"
    services.resolve(declaration=strike, roll=95, actor=fight.table.gm)  # a miss
    fight.refresh()
    assert fight.ysolde.counterattacks == 1

    body = {
        "attacker": fight.ysolde.pk,
        "target": fight.thug.pk,
        "action": "precise",
        "zone": fight.zone(fight.thug, "chest").pk,
        "counterattack": True,
    }
    url = f"/api/encounters/{fight.encounter.pk}/attacks/"
    armed = player.post(url, {**body, "weapon": fight.weapon(fight.ysolde).pk})
    assert armed.status_code == 400 and list(armed.json()) == ["weapon"]
    fight.refresh()
    assert fight.ysolde.counterattacks == 1  # not spent by the refusal
    unarmed = player.post(url, body)
    assert unarmed.status_code == 201, unarmed.json()
    # SKL 4 alone: 70 (her Swordsmanship needs the sword).
    assert unarmed.json()["odds"]["dodge"]["pro"] == 70


def _strike_at_ysolde(fight):
    return declare(
        fight.encounter, fight.thug, fight.ysolde, action="precise", actor=fight.table.gm
    )


def _declares_with_her_sword(fight):
    decl = declare(fight.encounter, fight.ysolde, fight.thug, action="fast", actor=fight.table.gm)
    services.cancel_declaration(declaration=decl, actor=fight.table.gm)


def test_the_weapon_comes_back_when_the_round_after_the_disarm_ends(fight):
    gm = fight.table.gm
    _disarm(fight, fight.thug, fight.ysolde)  # round 1, Ysolde's turn
    services.next_turn(encounter=fight.encounter, actor=gm)  # the thug
    services.next_turn(encounter=fight.encounter, actor=gm)  # round 2: she is busy, skipped
    fight.refresh()
    assert fight.encounter.round == 2 and fight.ysolde.busy
    with pytest.raises(services.CombatError, match="cannot act while disarmed"):
        _declares_with_her_sword(fight)
    services.next_turn(encounter=fight.encounter, actor=gm)  # round 3: retrieved
    fight.refresh()
    assert fight.encounter.round == 3 and fight.ysolde.conditions == {}
    _declares_with_her_sword(fight)


def test_the_weapon_comes_back_when_the_gm_removes_the_condition(fight):
    _disarm(fight, fight.thug, fight.ysolde)
    with pytest.raises(services.CombatError, match="disarmed"):
        _declares_with_her_sword(fight)
    services.remove_condition(participant=fight.ysolde, key="disarmed", actor=fight.table.gm)
    _declares_with_her_sword(fight)


def test_a_disarm_the_gm_adds_by_hand_takes_the_weapon_too(fight):
    decl = _thugs_mighty_strike(fight)
    services.add_condition(participant=fight.thug, name="disarmed", actor=fight.table.gm)
    assert _odds(decl.pk)["dodge"]["pvd"] == "70v25"
    services.cancel_declaration(declaration=decl, actor=fight.table.gm)
    with pytest.raises(services.CombatError, match="disarmed"):
        _thugs_mighty_strike(fight)


def test_the_weapon_is_back_in_the_next_fight(fight):
    """The condition belongs to the fight; the sheet's weapon is never touched."""
    _disarm(fight, fight.thug, fight.ysolde)
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    with pytest.raises(services.CombatError, match="not running"):
        _declares_with_her_sword(fight)
    encounter, _ = services.create_encounter(
        campaign=fight.table.campaign, name="Rematch", actor=fight.table.gm
    )
    services.add_participants(
        encounter=encounter,
        characters=[fight.ysolde.character, fight.npc],
        actor=fight.table.gm,
    )
    services.start_encounter(encounter=encounter, actor=fight.table.gm)
    ysolde = Participant.objects.get(encounter=encounter, character=fight.ysolde.character)
    thug = Participant.objects.get(encounter=encounter, character=fight.npc)
    assert ysolde.conditions == {}
    services.declare_attack(
        encounter=encounter,
        attacker=ysolde,
        target=thug,
        action="fast",
        zone=fight.npc.zones.get(name="chest"),
        weapon=fight.weapon(fight.ysolde),
        actor=fight.table.player,
    )


def _snapshot(fight):
    return (
        list(fight.encounter.participants.order_by("pk").values()),
        list(
            Declaration.objects.filter(encounter=fight.encounter)
            .order_by("pk")
            .values("pk", "weapon", "status", "defense")
        ),
    )


def test_undoing_the_disarm_puts_the_weapon_back_in_hand(fight):
    decl = _thugs_mighty_strike(fight)
    services.declare_defense(declaration=decl, defense="dodge", actor=fight.table.player)
    before = _snapshot(fight)
    disarm = declare_and_defend(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="disarm",
        zone=None,
        weapon=None,
        actor=fight.table.player,
        defender=fight.table.gm,
        defense="dodge",
    )
    before_roll = _snapshot(fight)
    services.resolve(declaration=disarm, roll=43, actor=fight.table.player)
    assert _odds(decl.pk)["dodge"]["pvd"] == "70v25"

    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
    assert _snapshot(fight) == before_roll
    assert _odds(decl.pk)["dodge"]["pvd"] == "80v25"
    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)  # the defense
    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)  # the disarm
    after = _snapshot(fight)
    assert after[0] == before[0]
    assert [d for d in after[1] if d["pk"] != disarm.pk] == before[1]
    rolled = services.resolve(declaration=decl, roll=54, actor=fight.table.gm)
    assert rolled.payload["result"]["pro"] == 80
    assert [h["damage"] for h in rolled.payload["result"]["hits"]] == [12]


def test_revoking_the_disarm_with_fate_puts_the_weapon_back_in_hand(fight):
    decl = _thugs_mighty_strike(fight)
    entry = _disarm(fight, fight.ysolde, fight.thug)
    services.spend_fate(
        entry=entry, spender=fight.ysolde, action="revoke", actor=fight.table.player
    )
    fight.refresh()
    assert fight.thug.conditions == {}
    assert _odds(decl.pk)["dodge"]["pvd"] == "80v25"
