"""Every URL of the project, with real ids from the demo table, for the security walks."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from combat import display
from combat import services as combat_services
from combat.models import CombatLogEntry
from integrations.models import WebhookDelivery, WebhookEndpoint
from sheets.models import ApiToken, Campaign
from tests.fight_steps import declare_and_defend

#: Django's admin is Django's own (and staff only): it is not walked.
SKIPPED_NAMESPACES = ("admin",)


@dataclass(frozen=True)
class Route:
    name: str  # "namespace:name"
    pattern: str
    kwargs: tuple[str, ...]

    @property
    def is_api(self) -> bool:
        return self.pattern.startswith("api/")


def routes() -> list[Route]:
    """Every named URL pattern once (the API's ``.json`` format twins left out)."""
    found: dict[str, Route] = {}

    def walk(patterns: list[Any], prefix: str, namespace: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                ns = entry.namespace or ""
                full = f"{namespace}:{ns}" if namespace and ns else (ns or namespace)
                if full in SKIPPED_NAMESPACES:
                    continue
                walk(entry.url_patterns, prefix + str(entry.pattern), full)
            elif isinstance(entry, URLPattern) and entry.name:
                name = f"{namespace}:{entry.name}" if namespace else entry.name
                kwargs = tuple(entry.pattern.regex.groupindex)
                if "format" in kwargs or name in found:
                    continue
                found[name] = Route(name, prefix + str(entry.pattern), kwargs)

    walk(get_resolver().url_patterns, "", "")
    return sorted(found.values(), key=lambda r: r.name)


@dataclass
class DemoTable:
    """``manage.py demo`` plus an encounter: the GM, players, a campaign, characters."""

    gm: Any
    alice: Any
    bob: Any
    campaign: Campaign
    character: Any
    encounter: Any
    ids: dict[str, int] = field(default_factory=dict)
    display_secret: str = ""

    def url(self, route: Route) -> str:
        return reverse(route.name, kwargs={k: self.value(route, k) for k in route.kwargs})

    def value(self, route: Route, kwarg: str) -> Any:
        name = route.name.split(":")[-1]
        if kwarg == "kind":
            return "discipline"
        if kwarg == "secret":  # the table display, opened by its link's secret
            return self.display_secret
        if kwarg in ("campaign_pk",):
            return self.campaign.pk
        if kwarg == "character_pk":
            return self.character.pk
        if kwarg == "user_id":
            return self.alice.pk
        if kwarg == "row_id":
            return self.ids["discipline"]
        if kwarg == "zone_id":
            return self.ids["zone"]
        if kwarg == "participant_pk":
            return self.ids["participant"]
        if kwarg == "encounter_pk":
            return self.ids["encounter"]
        if kwarg == "delivery_pk":
            return self.ids["delivery"]
        if name == "webhook_list":
            return self.ids["campaign"]
        # pk: the object the route is about.
        for prefix, key in (
            ("check_roll", "character"),  # checks outside combat
            ("resource_change", "character"),
            ("check_", "check"),
            ("call_create", "campaign"),
            ("call_", "call"),
            ("prompts", "campaign"),
            ("request_", "request"),
            ("campaign", "campaign"),
            ("token", "token"),
            ("character", "character"),
            ("discipline", "discipline"),
            ("weapon", "weapon"),
            ("zone-", "zone"),
            ("encounter", "encounter"),
            ("events", "encounter"),  # the table display's feed of a fight
            ("participant", "encounter"),
            ("npc_copies", "encounter"),
            ("zone_adjust", "encounter"),
            ("attack_declare", "encounter"),
            ("condition_", "encounter"),
            ("record_", "encounter"),
            ("webhook", "webhook"),
            ("delivery", "webhook"),
            ("npc_", "npc"),
            ("library-", "npc"),
            ("group_delete", "group"),
            ("group_add", "prepared"),
            ("prepared", "prepared"),
        ):
            if name.startswith(prefix):
                return self.ids[key]
        # Attacks and rolls need a fight in progress; an id that does not exist is enough for
        # the walks (CSRF is refused before the view runs; they take no GET).
        return 999_999


def demo_table() -> DemoTable:
    call_command("demo", stdout=_Discard())
    users = get_user_model().objects.in_bulk(["gm", "alice", "bob"], field_name="username")
    campaign = Campaign.objects.get(gm=users["gm"])
    character = campaign.characters.get(name="Ysolde Varr")
    encounter, _ = combat_services.create_encounter(
        campaign=campaign, name="Ambush at the gate", actor=users["gm"]
    )
    combat_services.add_participants(
        encounter=encounter, characters=list(campaign.characters.all()), actor=users["gm"]
    )
    combat_services.start_encounter(encounter=encounter, actor=users["gm"], rng=random.Random(7))
    token, _ = ApiToken.objects.create_token(user=users["gm"], name="walk")
    hook = WebhookEndpoint.objects.create(
        campaign=campaign, url="http://127.0.0.1:9/hook", events=["roll.resolved"]
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=hook, event_type="roll.resolved", webhook_id="msg_walk", payload={"a": 1}
    )
    from prep import services as prep_services
    from prep.models import PreparedEncounter

    npc = prep_services.add_starter_set(owner=users["gm"])[0]
    prepared = PreparedEncounter.objects.create(campaign=campaign, name="Ford")
    group = prepared.groups.create(npc=npc, count=2)
    from checks import services as checks_services

    target = checks_services.parse_target(kind="aptitude", aptitude="SKL", against="Moderate")
    check = checks_services.roll_check(
        user=users["gm"], character=character, target=target, rng=random.Random(7)
    )
    call = checks_services.call_checks(
        user=users["gm"], campaign=campaign, characters=[character], target=target
    )
    ids = {
        "check": check.pk,
        "call": call.pk,
        "request": call.requests.get().pk,
        "npc": npc.pk,
        "prepared": prepared.pk,
        "group": group.pk,
        "campaign": campaign.pk,
        "character": character.pk,
        "discipline": character.disciplines.first().pk,
        "weapon": character.weapons.first().pk,
        "zone": character.zones.first().pk,
        "token": token.pk,
        "encounter": encounter.pk,
        "participant": encounter.participants.first().pk,
        "webhook": hook.pk,
        "delivery": delivery.pk,
    }
    return DemoTable(
        gm=users["gm"],
        alice=users["alice"],
        bob=users["bob"],
        campaign=campaign,
        character=character,
        encounter=encounter,
        ids=ids,
        display_secret=display.make_link(campaign=campaign, actor=users["gm"]).secret,
    )


def snapshot() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (sessions, and the list of who is logged in with which, aside),
    to prove that a request changed nothing."""
    return {
        model._meta.label: sorted(model._default_manager.values_list(), key=repr)
        for model in apps.get_models()
        if model._meta.label not in ("sessions.Session", "sheets.LoginSession")
    }


# --- What the walks send ---------------------------------------------------------------------

#: Pages that stream or download instead of rendering HTML (checked elsewhere).
NOT_HTML = {
    "live:encounter_events",
    "live:campaign_events",
    "display:events",
    "sheets:character_export",
    "logout",
    "healthz",
}


def get_pages(demo: DemoTable) -> list[tuple[str, Any]]:
    """Every page a GM can GET, rendered with the demo table."""
    client = Client()
    client.force_login(demo.gm)
    pages = []
    for route in routes():
        if route.is_api and route.name != "api:docs" or route.name in NOT_HTML:
            continue
        url = demo.url(route)
        response = client.get(url)
        if response.status_code == 405:  # POST-only
            continue
        assert response.status_code in (200, 302), (url, response.status_code)
        pages.append((url, response))
    anonymous = Client()
    for url in ("/", "/accounts/login/", "/signup/", "/dice/", "/dice/omg/"):
        pages.append((f"{url} (anonymous)", anonymous.get(url)))
    return pages


def api_ids(demo: DemoTable) -> dict[str, int]:
    encounter = demo.encounter
    attacker, target = encounter.participants.order_by("pk")[:2]
    gm = demo.gm
    # One resolved attack (for its roll) and one still waiting for its defense.
    zone = target.character.zones.first()
    resolved = declare_and_defend(
        encounter,
        attacker,
        target,
        action="fast",
        zone=zone,
        weapon=None,
        actor=gm,
        defender=gm,
        defense="dodge",
    )
    combat_services.resolve(declaration=resolved, actor=gm, rng=random.Random(3))
    pending, _ = combat_services.declare_attack(
        encounter=encounter, attacker=attacker, target=target, action="fast", zone=zone, actor=gm
    )
    roll = CombatLogEntry.objects.filter(encounter=encounter, roll__isnull=False).latest("seq")
    return {
        **demo.ids,
        "attack": pending.pk,
        "roll": roll.pk,
        "library": demo.ids["npc"],
        "disciplines": demo.ids["discipline"],
        "weapons": demo.ids["weapon"],
        "zones": demo.ids["zone"],
        "webhooks": demo.ids["webhook"],
        "deliveries": demo.ids["delivery"],
        "check-request": demo.ids["request"],
        "check-call": demo.ids["call"],
    }


def fill(path: str, ids: dict[str, int]) -> str:
    """The path with real ids: ``{x_pk}`` names its object, ``{id}`` is that of the segment
    before it (``/api/characters/{character_pk}/weapons/{id}/``: a weapon)."""
    parts = path.strip("/").split("/")
    out = []
    for index, part in enumerate(parts):
        if part.startswith("{"):
            name = part.strip("{}")
            if name == "id":
                noun = parts[index - 1].removesuffix("s")
                key = {"librarie": "library", "prepare": "prepared"}.get(noun, noun)
                part = str(ids.get(key) or ids[parts[index - 1]])
            else:
                part = str(ids[name.removesuffix("_pk")])
        out.append(part)
    return "/" + "/".join(out) + "/"


class _Discard:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
