"""Campaign pages: create, read, edit, delete, join, leave, players, the join code, rest."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from rules.engine import RulesError
from sheets import limits, randomness, services
from sheets.access import get_campaign_for_user
from sheets.forms import CampaignForm, JoinForm
from sheets.http import AuthedRequest
from sheets.ids import parse_id
from sheets.models import Campaign, Character
from sheets.qr import qr_code


@login_required
def campaign_create(request: AuthedRequest) -> HttpResponse:
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        campaign = form.save(commit=False)
        campaign.gm = request.user
        campaign.save()
        messages.success(request, f"Campaign “{campaign.name}” created. Share the join code.")
        return redirect(campaign)
    return render(request, "sheets/campaign_form.html", {"form": form, "campaign": None})


@login_required
def campaign_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk)
    return render(request, "sheets/campaign_detail.html", _campaign_context(request, campaign))


def _campaign_context(request: HttpRequest, campaign: Campaign) -> dict[str, object]:
    characters = list(
        Character.objects.filter(campaign=campaign)
        .visible_to(request.user)
        .select_related("owner", "copied_from")
    )
    join_url = request.build_absolute_uri(
        reverse("sheets:campaign_join") + f"?code={campaign.join_code}"
    )
    return {
        "campaign": campaign,
        "is_gm": campaign.is_gm(request.user),
        "memberships": campaign.memberships.select_related("user"),
        # Copies made for fights keep their own wounds: listed apart from the campaign's cast.
        # So are the sheets made for one fight from the GM's library (prep), which go with it.
        "characters": [c for c in characters if c.copied_from_id is None and not c.fight_only],
        "copies": [c for c in characters if c.copied_from_id is not None or c.fight_only],
        "join_url": join_url,
        # Only the GM's page shows it: the join code is the GM's to share.
        "join_qr": qr_code(join_url) if campaign.is_gm(request.user) else None,
    }


@login_required
def campaign_edit(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    form = CampaignForm(request.POST or None, instance=campaign)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Campaign saved.")
        return redirect(campaign)
    return render(request, "sheets/campaign_form.html", {"form": form, "campaign": campaign})


@login_required
def campaign_delete(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    if request.method == "POST":
        name = campaign.name
        if services.delete_campaign(user=request.user, campaign=campaign):
            messages.success(request, f"Campaign “{name}” deleted.")
        else:
            messages.info(request, f"Campaign “{name}” was already deleted.")
        return redirect("sheets:dashboard")
    return render(request, "sheets/campaign_confirm_delete.html", {"campaign": campaign})


@login_required
@require_POST
def campaign_regenerate_code(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    campaign.regenerate_join_code()
    if request.htmx:
        return render(
            request,
            "sheets/campaign_detail.html#join-code",
            _campaign_context(request, campaign),
        )
    messages.success(request, "New join code generated; the old one no longer works.")
    return redirect(campaign)


@login_required
@require_POST
def campaign_remove_player(request: AuthedRequest, pk: int, user_id: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    if parse_id(str(user_id)) is None:  # past a bigint: no user has it (SQLite overflowed)
        raise Http404("No such player.")
    removed = services.remove_player(user=request.user, campaign=campaign, user_id=user_id)
    if request.htmx:
        return render(
            request, "sheets/campaign_detail.html#players", _campaign_context(request, campaign)
        )
    if removed:
        messages.success(request, "Player removed from the campaign.")
    else:
        messages.info(request, "That player was not in the campaign.")
    return redirect(campaign)


@login_required
@require_POST
def campaign_leave(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk)
    if campaign.is_gm(request.user):
        messages.error(request, "You run this campaign; delete it instead of leaving it.")
        return redirect(campaign)
    services.remove_player(user=request.user, campaign=campaign, user_id=request.user.pk)
    messages.success(request, f"You left “{campaign.name}”.")
    return redirect("sheets:dashboard")


@login_required
def campaign_join(request: AuthedRequest) -> HttpResponse:
    if request.method == "POST":
        form = JoinForm(request.POST)
    else:
        form = JoinForm(initial={"code": request.GET.get("code", "")})
    if request.method == "POST" and form.is_valid():
        try:
            limits.check_join(request, request.user)
        except limits.RateLimited as exc:
            form.add_error("code", str(exc))
            response = render(request, "sheets/campaign_join.html", {"form": form}, status=429)
            response["Retry-After"] = str(exc.wait)
            return response
        try:
            campaign, created = services.join_campaign(
                user=request.user, code=form.cleaned_data["code"]
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                for error in errors:
                    form.add_error(field, error)
        else:
            if created:
                messages.success(request, f"You joined “{campaign.name}”.")
            else:
                messages.info(request, f"You are already in “{campaign.name}”.")
            return redirect(campaign)
    return render(request, "sheets/campaign_join.html", {"form": form})


@login_required
@require_POST
def campaign_rest(request: AuthedRequest, pk: int) -> HttpResponse:
    """The GM's daily rest for every character in the campaign; the changes are listed."""
    campaign = get_campaign_for_user(request, pk, write=True)
    try:
        results = services.rest_campaign(
            user=request.user, campaign=campaign, rng=randomness.server_rng()
        )
    except RulesError as exc:
        messages.error(request, f"No one rested. {exc}")
        return redirect(campaign)
    for character, result in results:
        raised = ", ".join(f"{d} {old}→{new}" for d, (old, new) in result.raised.items())
        apts = ", ".join(f"{a} {old}→{new}" for a, (old, new) in result.aptitudes_raised.items())
        changes = "; ".join(filter(None, [f"ITV {result.itv}", raised, apts]))
        messages.info(request, f"{character.name}: {changes}.")
    if not results:
        messages.info(request, "No characters to rest.")
    return redirect(campaign)
