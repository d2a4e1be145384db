"""Pages: dashboard, accounts, campaigns, API tokens."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from rules.engine import RulesError
from sheets import randomness, services
from sheets.access import get_campaign_for_user
from sheets.forms import ApiTokenForm, CampaignForm, JoinForm, SignupForm
from sheets.models import ApiToken, Campaign, Character


def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("sheets:dashboard")
    return render(request, "sheets/home.html")


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("sheets:dashboard")
    form = SignupForm(request.POST or None)
    next_url = request.POST.get("next") or request.GET.get("next", "")
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}!")
        if next_url.startswith("/") and not next_url.startswith("//"):
            return redirect(next_url)
        return redirect("sheets:dashboard")
    return render(request, "registration/signup.html", {"form": form, "next": next_url})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    campaigns = (
        Campaign.objects.for_user(request.user)
        .select_related("gm")
        .annotate(player_count=Count("memberships", distinct=True))
    )
    return render(
        request,
        "sheets/dashboard.html",
        {
            "running": [c for c in campaigns if c.gm_id == request.user.pk],
            "playing": [c for c in campaigns if c.gm_id != request.user.pk],
            "characters": Character.objects.filter(owner=request.user, is_npc=False)
            .visible_to(request.user)
            .select_related("campaign"),
        },
    )


@login_required
def campaign_create(request: HttpRequest) -> HttpResponse:
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        campaign = form.save(commit=False)
        campaign.gm = request.user
        campaign.save()
        messages.success(request, f"Campaign “{campaign.name}” created. Share the join code.")
        return redirect(campaign)
    return render(request, "sheets/campaign_form.html", {"form": form, "campaign": None})


@login_required
def campaign_detail(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk)
    return render(request, "sheets/campaign_detail.html", _campaign_context(request, campaign))


def _campaign_context(request: HttpRequest, campaign: Campaign) -> dict[str, object]:
    characters = list(
        Character.objects.filter(campaign=campaign)
        .visible_to(request.user)
        .select_related("owner", "copied_from")
    )
    return {
        "campaign": campaign,
        "is_gm": campaign.is_gm(request.user),
        "memberships": campaign.memberships.select_related("user"),
        # Copies made for fights keep their own wounds: listed apart from the campaign's cast.
        "characters": [c for c in characters if c.copied_from_id is None],
        "copies": [c for c in characters if c.copied_from_id is not None],
        "join_url": request.build_absolute_uri(
            reverse("sheets:campaign_join") + f"?code={campaign.join_code}"
        ),
    }


@login_required
def campaign_edit(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    form = CampaignForm(request.POST or None, instance=campaign)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Campaign saved.")
        return redirect(campaign)
    return render(request, "sheets/campaign_form.html", {"form": form, "campaign": campaign})


@login_required
def campaign_delete(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    if request.method == "POST":
        name = campaign.name
        campaign.delete()
        messages.success(request, f"Campaign “{name}” deleted.")
        return redirect("sheets:dashboard")
    return render(request, "sheets/campaign_confirm_delete.html", {"campaign": campaign})


@login_required
@require_POST
def campaign_regenerate_code(request: HttpRequest, pk: int) -> HttpResponse:
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
def campaign_remove_player(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    removed = services.remove_player(campaign=campaign, user_id=user_id)
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
def campaign_leave(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk)
    if campaign.is_gm(request.user):
        messages.error(request, "You run this campaign; delete it instead of leaving it.")
        return redirect(campaign)
    services.remove_player(campaign=campaign, user_id=request.user.pk)
    messages.success(request, f"You left “{campaign.name}”.")
    return redirect("sheets:dashboard")


@login_required
def campaign_join(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = JoinForm(request.POST)
    else:
        form = JoinForm(initial={"code": request.GET.get("code", "")})
    if request.method == "POST" and form.is_valid():
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
def token_list(request: HttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST or None)
    new_key = None
    if request.method == "POST" and form.is_valid():
        _, new_key = ApiToken.objects.create_token(
            user=request.user, name=form.cleaned_data["name"]
        )
        form = ApiTokenForm()
    return render(
        request,
        "sheets/token_list.html",
        {"form": form, "tokens": request.user.api_tokens.all(), "new_key": new_key},
    )


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    token.delete()
    if request.htmx:
        return render(
            request,
            "sheets/token_list.html#tokens",
            {"tokens": request.user.api_tokens.all()},
        )
    messages.success(request, f"Token “{token.name}” revoked.")
    return redirect("sheets:token_list")


@login_required
@require_POST
def campaign_rest(request: HttpRequest, pk: int) -> HttpResponse:
    """The GM's daily rest for every character in the campaign; the changes are listed."""
    campaign = get_campaign_for_user(request, pk, write=True)
    try:
        results = services.rest_campaign(campaign=campaign, rng=randomness.server_rng())
    except RulesError as exc:
        messages.error(request, f"No one rested. {exc}")
        return redirect(campaign)
    for name, result in results.items():
        raised = ", ".join(f"{d} {old}→{new}" for d, (old, new) in result.raised.items())
        apts = ", ".join(f"{a} {old}→{new}" for a, (old, new) in result.aptitudes_raised.items())
        changes = "; ".join(filter(None, [f"ITV {result.itv}", raised, apts]))
        messages.info(request, f"{name}: {changes}.")
    if not results:
        messages.info(request, "No characters to rest.")
    return redirect(campaign)
