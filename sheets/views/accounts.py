"""Pages of one's own: the welcome page, signing up, the dashboard, API tokens."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from sheets.forms import ApiTokenForm, SignupForm
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
