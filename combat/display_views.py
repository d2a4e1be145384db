"""The table display's pages: the GM makes and revokes its link (campaign page), and the
display itself, opened by its secret link without logging in (combat/display.py)."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from combat import display
from combat.live import broadcast, stream
from combat.models import DisplayLink, Encounter
from combat.tracker import load_state
from config.throttling import client_ident, over_limit
from live.streams import give_back_connections
from sheets.access import get_campaign_for_user
from sheets.http import AuthedRequest, HtmxRequest
from sheets.models import Campaign
from sheets.qr import qr_code

#: Requests for display pages and streams, per client address: a TV reloading between fights
#: and reconnecting its stream stays far below; guessing secrets at this rate gets nowhere.
RATE = 60
RATE_WINDOW = 60
SECTION = "combat/_display_link.html"


def section_context(request: HttpRequest, campaign: Campaign) -> dict[str, object]:
    """The GM's part of the campaign page about the table display: its link and QR code."""
    link = DisplayLink.objects.filter(campaign=campaign).first()
    url = request.build_absolute_uri(reverse("display:page", args=[link.secret])) if link else ""
    return {"campaign": campaign, "display_url": url, "display_qr": qr_code(url) if url else None}


def _gm_answer(request: HtmxRequest, campaign: Campaign, message: str) -> HttpResponse:
    if request.htmx:
        return render(request, SECTION, section_context(request, campaign))
    messages.success(request, message)
    return redirect(campaign)


@login_required
@require_POST
def display_link_make(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    display.make_link(campaign=campaign, actor=request.user)
    return _gm_answer(request, campaign, "New display link made; any older one stopped working.")


@login_required
@require_POST
def display_link_revoke(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    display.revoke_link(campaign=campaign, actor=request.user)
    return _gm_answer(request, campaign, "The table display is turned off.")


def _private[R: HttpResponseBase](response: R) -> R:
    # The secret is in the URL: never indexed, cached or sent on as a referrer.
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


def _too_many(request: HttpRequest) -> HttpResponse | None:
    wait = over_limit(f"display:{client_ident(request)}", RATE, RATE_WINDOW)
    if wait is None:
        return None
    response = HttpResponse("Too many requests.", status=429, content_type="text/plain")
    response["Retry-After"] = str(max(1, int(wait) + 1))
    return _private(response)


def _turned_off(request: HttpRequest) -> HttpResponse:
    """The same answer for a revoked link and one that never was: nothing to tell them apart."""
    return _private(render(request, "combat/display.html", {"turned_off": True}, status=404))


@require_GET
def display_page(request: HttpRequest, secret: str) -> HttpResponse:
    if (refused := _too_many(request)) is not None:
        return refused
    link = display.link_for_secret(secret)
    if link is None:
        return _turned_off(request)
    encounter = display.current_fight(link.campaign)
    context: dict[str, object] = {
        "campaign": link.campaign,
        "idle_seconds": settings.DISPLAY_IDLE_SECONDS,
    }
    if encounter is not None:
        context |= display.board_context(load_state(encounter))
        context |= {
            "events_url": reverse("display:events", args=[secret, encounter.pk]),
            "latest_id": broadcast.latest_entry_id(encounter),
        }
    return _private(render(request, "combat/display.html", context))


def _open(request: HttpRequest, secret: str, pk: int) -> tuple[DisplayLink, Encounter] | None:
    try:
        link = display.link_for_secret(secret)
        if link is None:
            return None
        encounter = (
            Encounter.objects.filter(campaign=link.campaign, pk=pk)
            .select_related("campaign")
            .first()
        )
        return (link, encounter) if encounter is not None else None
    finally:
        give_back_connections()


async def display_events(request: HttpRequest, secret: str, pk: int) -> HttpResponseBase:
    """The display's live feed: one more viewer of the fight's broadcaster."""
    if request.method != "GET":
        return HttpResponse(status=405, headers={"Allow": "GET"})
    if (refused := await sync_to_async(_too_many)(request)) is not None:
        return refused
    opened = await sync_to_async(_open)(request, secret, pk)
    if opened is None:
        # The turned-off page, private as the page's: a 404 raised here would be Django's, with
        # none of the headers that keep the secret in its URL out of caches and indexes.
        return await sync_to_async(_turned_off)(request)
    link, encounter = opened
    after = stream.last_seen(request)
    viewer = display.DisplayViewer(link)
    # The feed serves any viewer with a user's few attributes; it is annotated for a user.
    return _private(await stream.stream_response(encounter, viewer, after))  # type: ignore[arg-type]  # see the comment above
