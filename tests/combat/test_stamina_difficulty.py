"""The Stamina test against the GM's DIF (docs/rules.md, "Wounds and healing": the GM sets
it, Moderate 20 by default), through the services, the API and the tracker page. Ysolde's STM is
NRV 3 + VGR 5 = 8: PRO 90."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.urls import reverse

from combat import services
from combat.models import CombatLogEntry, Participant

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
CATEGORIES = [
    ("Casual", 10),
    ("Moderate", 20),
    ("Ambitious", 30),
    ("Formidable", 40),
    ("Supreme", 50),
]


def due(fight: Any) -> None:
    Participant.objects.filter(pk=fight.ysolde.pk).update(stamina_due=True)


def api_url(fight: Any) -> str:
    return f"/api/participants/{fight.ysolde.pk}/stamina/"


def page_url(fight: Any) -> str:
    return reverse("combat:participant_stamina", args=(fight.encounter.pk, fight.ysolde.pk))


def logged() -> list[CombatLogEntry]:
    return list(CombatLogEntry.objects.filter(kind="stamina"))


def still_due(fight: Any) -> bool:
    return Participant.objects.get(pk=fight.ysolde.pk).stamina_due


@pytest.mark.parametrize(("name", "dif"), CATEGORIES)
def test_it_tests_stamina_at_each_difficulty_category_through_the_api(fight, api_for, name, dif):
    due(fight)
    response = api_for(fight.table.gm).post(
        api_url(fight), {"roll": 35, "difficulty": dif}, format="json"
    )
    assert response.status_code == 200
    (entry,) = logged()
    assert (entry.payload["result"]["pro"], entry.payload["result"]["dif"]) == (90, dif)
    assert f"Stamina test against {name} {dif}, 90v{dif}, rolled 35" in entry.text
    assert f"against {name} {dif}" in entry.payload["public_text"]
    conscious = dif < 35
    assert (Participant.objects.get(pk=fight.ysolde.pk).state == "active") is conscious


@pytest.mark.parametrize(("name", "dif"), CATEGORIES)
def test_it_tests_stamina_at_each_difficulty_category_through_the_page(
    fight, client_for, name, dif
):
    due(fight)
    gm = client_for(fight.table.gm)
    response = gm.post(page_url(fight), {"roll": "35", "difficulty": str(dif)}, **HX)
    assert response.status_code == 200
    (entry,) = logged()
    assert entry.payload["result"]["dif"] == dif
    assert f"Stamina test against {name} {dif}, 90v{dif}" in entry.text
    assert f"Stamina test against {name} {dif}" in response.content.decode()


def test_it_takes_moderate_20_when_no_difficulty_is_given(fight, api_for, client_for):
    player_api, gm_api = api_for(fight.table.player), api_for(fight.table.gm)
    due(fight)
    assert player_api.post(api_url(fight), {"roll": 35}, format="json").status_code == 200
    due(fight)
    body = {"roll": 35, "difficulty": None}
    assert gm_api.post(api_url(fight), body, format="json").status_code == 200
    due(fight)
    page = client_for(fight.table.player).post(page_url(fight), {"roll": "35"}, **HX)
    assert page.status_code == 200
    assert [e.payload["result"]["dif"] for e in logged()] == [20, 20, 20]
    assert all("against Moderate 20" in e.text for e in logged())


def test_it_takes_any_dif_from_5_to_50_the_typed_number_over_the_category(
    fight, api_for, client_for
):
    due(fight)
    body: dict[str, Any] = {"roll": 35, "difficulty": 25}
    assert api_for(fight.table.gm).post(api_url(fight), body, format="json").status_code == 200
    due(fight)
    gm = client_for(fight.table.gm)
    body = {"roll": "35", "difficulty": "20", "difficulty_number": "45"}
    assert gm.post(page_url(fight), body, **HX).status_code == 200
    first, second = logged()
    assert "against DIF 25, 90v25" in first.text
    assert "against DIF 45, 90v45, rolled 35: is knocked out" in second.text


@pytest.mark.parametrize("bad", [4, 51, 0, -20, 1000, "30", True, 30.5, [30]])
def test_it_answers_400_naming_difficulty_to_a_bad_one_on_the_api(fight, api_for, bad):
    due(fight)
    response = api_for(fight.table.gm).post(
        api_url(fight), {"roll": 35, "difficulty": bad}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["difficulty"]
    assert logged() == [] and still_due(fight)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"difficulty": "hard"}, "difficulty must be a whole number"),
        ({"difficulty_number": "2.5"}, "difficulty number must be a whole number"),
        ({"difficulty_number": "60"}, "The difficulty is a whole number from 5 to 50"),
        ({"difficulty": "4"}, "The difficulty is a whole number from 5 to 50"),
    ],
)
def test_it_refuses_a_bad_difficulty_on_the_page_with_a_clear_error(
    fight, client_for, body, message
):
    due(fight)
    gm = client_for(fight.table.gm)
    response = gm.post(page_url(fight), {"roll": "35", **body}, **HX)
    assert response.status_code == 422
    assert message in response.content.decode()
    plain = gm.post(page_url(fight), {"roll": "35", **body}, follow=True)
    assert message in plain.content.decode()
    assert logged() == [] and still_due(fight)


def test_it_leaves_the_difficulty_to_the_gm(fight, api_for, client_for):
    due(fight)
    response = api_for(fight.table.player).post(
        api_url(fight), {"roll": 35, "difficulty": 10}, format="json"
    )
    assert response.status_code == 400
    assert "Only the GM sets the Stamina test's difficulty" in response.json()["difficulty"][0]
    page = client_for(fight.table.player).post(
        page_url(fight), {"roll": "35", "difficulty": "10"}, **HX
    )
    assert page.status_code == 422
    assert "Only the GM sets" in page.content.decode()
    with pytest.raises(services.CombatError, match="Only the GM") as refused:
        services.stamina_check(
            participant=fight.ysolde, roll=35, difficulty=10, actor=fight.table.player
        )
    assert refused.value.fields == ("difficulty",)
    assert logged() == [] and still_due(fight)


def _stamina_form(html: str) -> str:
    return re.search(r"<form[^>]*stamina[^>]*>.*?</form>", html, re.S).group(0)


def test_it_offers_the_gm_the_categories_with_moderate_chosen(fight, client_for):
    due(fight)
    gm = _stamina_form(client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).text)
    options = re.findall(r'<option value="(\d+)"( selected)?>([^<]+)</option>', gm)
    assert options == [
        (str(dif), " selected" if dif == 20 else "", f"{name} {dif}") for name, dif in CATEGORIES
    ]
    assert 'name="difficulty_number" min="5" max="50"' in gm
    player = client_for(fight.table.player).get(fight.encounter.get_absolute_url()).text
    assert 'name="difficulty"' not in _stamina_form(player)


def test_it_documents_the_difficulty_in_the_openapi_schema(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    post = schema["paths"]["/api/participants/{id}/stamina/"]["post"]
    ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    field = body["properties"]["difficulty"]
    assert (field["minimum"], field["maximum"], field["type"]) == (5, 50, ["integer", "null"])
    assert "Moderate 20" in field["description"]
