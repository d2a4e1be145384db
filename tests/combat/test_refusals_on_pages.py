"""The htmx helper for the tracker's actions (combat.views.respond): a service's refusal
(sheets.refusals) is the tracker with the refusal's status and reason for htmx, and a redirect
with the reason in the messages for a plain form; the turn timer answers through it too."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import Http404
from django.test import RequestFactory
from django.urls import reverse

from combat.models import Participant
from combat.views import respond
from sheets.refusals import NotFound

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
NOT_DUE = "No Stamina test is due for Ysolde"
BAD_SECONDS = "Seconds per turn: a whole number (empty: no timer)."


def stamina_url(fight: Any) -> str:
    return reverse("combat:participant_stamina", args=(fight.encounter.pk, fight.ysolde.pk))


def timer_url(fight: Any) -> str:
    return reverse("combat:encounter_timer", args=[fight.encounter.pk])


def test_it_answers_a_conflict_409_with_the_tracker_and_the_reason(fight, client_for):
    assert not Participant.objects.get(pk=fight.ysolde.pk).stamina_due
    response = client_for(fight.table.gm).post(stamina_url(fight), {"roll": "35"}, **HX)
    assert response.status_code == 409
    assert NOT_DUE in response.text
    assert 'id="tracker"' in response.text


def test_it_answers_a_refusal_422_with_the_tracker_and_the_reason(fight, client_for):
    response = client_for(fight.table.gm).post(timer_url(fight), {"seconds": "soon"}, **HX)
    assert response.status_code == 422
    assert BAD_SECONDS in response.text
    assert 'id="tracker"' in response.text


@pytest.mark.parametrize(
    ("url", "body", "reason"),
    [(stamina_url, {"roll": "35"}, NOT_DUE), (timer_url, {"seconds": "soon"}, BAD_SECONDS)],
    ids=["conflict", "refused"],
)
def test_it_redirects_a_plain_form_with_the_reason_in_the_messages(
    fight, client_for, url, body, reason
):
    gm = client_for(fight.table.gm)
    response = gm.post(url(fight), body)
    assert response.status_code == 302
    assert response["Location"] == fight.encounter.get_absolute_url()
    assert reason in gm.get(response["Location"]).text


def test_it_answers_not_found_with_the_pages_404(fight):
    request = RequestFactory().post("/")
    request.user = fight.table.gm

    def vanished() -> None:
        raise NotFound("That attack was deleted meanwhile.")

    with pytest.raises(Http404, match="deleted meanwhile"):
        respond(request, fight.encounter, vanished)  # type: ignore[arg-type]


def test_it_sets_the_timer_through_the_same_helper(fight, client_for):
    response = client_for(fight.table.gm).post(timer_url(fight), {"seconds": "45"}, **HX)
    assert response.status_code == 200
    fight.encounter.refresh_from_db()
    assert fight.encounter.turn_seconds == 45
