"""Pages of one's own: the welcome page, signing up, the dashboard, the account page (email,
sessions, password reset), API tokens."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from sheets import accounts, limits, services
from sheets.access import get_campaign_for_user
from sheets.forms import (
    ApiTokenForm,
    DeleteAccountForm,
    EmailForm,
    EndSessionsForm,
    PasswordChangeForm,
    PasswordResetForm,
    SignupForm,
)
from sheets.http import AuthedRequest
from sheets.models import ApiToken, Campaign, CampaignHandover, Character


def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("sheets:dashboard")
    return render(request, "sheets/home.html")


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("sheets:dashboard")
    form = SignupForm(request.POST or None)
    next_url = request.POST.get("next") or request.GET.get("next", "")
    if not next_url.startswith("/") or not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""  # only a page of this site: "//evil.example", "/\\evil.example" are not
    join_code = _join_code(next_url)
    context = {"next": next_url, "joining": bool(join_code)}
    if request.method == "POST":
        try:
            limits.check_signup(request)
        except limits.RateLimited as exc:
            # Not even validated: a name taken or free is not told either.
            typed = {k: request.POST.get(k, "") for k in ("username", "email")}
            return _limited(
                request,
                "registration/signup.html",
                exc,
                {**context, "form": SignupForm(initial=typed)},
            )
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data.get("email")
        if email:
            try:
                limits.check_confirm_mail(request, email)
            except limits.RateLimited as exc:
                form.add_error(
                    "email", f"{exc} Or leave it empty and add it later on your account page."
                )
                return _limited(
                    request, "registration/signup.html", exc, {**context, "form": form}, shown=False
                )
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}!")
        if email:
            accounts.send_email_confirmation(request, user, email)
            messages.info(request, f"We mailed a link to {email}: follow it to confirm it.")
        if join_code:
            # A scanned join link ends in the campaign: signing up was the click that joins.
            try:
                campaign, _ = services.join_campaign(user=user, code=join_code)
            except ValidationError:
                return redirect(next_url)  # the join page says what is wrong with the code
            messages.success(request, f"You joined “{campaign.name}”.")
            return redirect(campaign)
        return redirect(next_url or "sheets:dashboard")
    return render(request, "registration/signup.html", {**context, "form": form})


def _limited(
    request: HttpRequest,
    template: str,
    exc: limits.RateLimited,
    context: dict[str, Any],
    *,
    shown: bool = True,
) -> HttpResponse:
    """The page again, with 429 and ``Retry-After``; the limit's message above the form
    (``shown``) unless a field's error already says it."""
    response = render(
        request, template, {**context, "limited": str(exc) if shown else ""}, status=429
    )
    response["Retry-After"] = str(exc.wait)
    return response


def _join_code(next_url: str) -> str:
    """The code of a join link (``/campaigns/join/?code=...``) that ``next`` points to."""
    parts = urlsplit(next_url)
    if parts.path != reverse("sheets:campaign_join"):
        return ""
    return parse_qs(parts.query).get("code", [""])[0]


@login_required
def dashboard(request: AuthedRequest) -> HttpResponse:
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
            "offers": CampaignHandover.objects.filter(to_user=request.user).select_related(
                "campaign__gm"
            ),
        },
    )


@login_required
def token_list(request: AuthedRequest) -> HttpResponse:
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
def token_revoke(request: AuthedRequest, pk: int) -> HttpResponse:
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
def account(request: AuthedRequest) -> HttpResponse:
    """Your account: the email address (confirmed by a link), sessions, password, data."""
    form = EmailForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data["email"]
        try:
            limits.check_confirm_mail(request, email)
        except limits.RateLimited as exc:
            form.add_error("email", str(exc))
            return _limited(
                request,
                "registration/account.html",
                exc,
                _account_context(request, form),
                shown=False,
            )
        accounts.send_email_confirmation(request, request.user, email)
        messages.info(
            request, f"We mailed a link to {email}: it becomes your address once you follow it."
        )
        return redirect("sheets:account")
    return render(request, "registration/account.html", _account_context(request, form))


def _account_context(request: AuthedRequest, form: EmailForm) -> dict[str, Any]:
    sessions = request.user.login_sessions.count()
    offers = CampaignHandover.objects.filter(to_user=request.user).select_related("campaign__gm")
    return {
        "email_form": form,
        "sessions_form": EndSessionsForm(),
        "other_sessions": max(0, sessions - 1),
        "offers": offers,
    }


@login_required
def email_confirm(request: AuthedRequest, token: str) -> HttpResponse:
    """The link mailed to a new address. Opening it only shows a button: mail scanners that
    fetch every link must not confirm an address on their own."""
    error = None
    if request.method == "POST":
        try:
            email = accounts.confirm_email(user=request.user, token=token)
        except accounts.EmailLinkError as exc:
            error = str(exc)
        else:
            messages.success(request, f"{email} is now your address.")
            return redirect("sheets:account")
    status = 400 if error else 200
    return render(request, "registration/email_confirm.html", {"error": error}, status=status)


@login_required
@require_POST
def sessions_end(request: AuthedRequest) -> HttpResponse:
    """Log out everywhere else: every other session of yours ends now, and your API tokens
    are revoked unless you untick the box."""
    form = EndSessionsForm(request.POST)
    form.is_valid()  # one optional checkbox: always valid
    ended = accounts.end_other_sessions(request.user, keep=request.session)
    messages.success(
        request, f"Logged out everywhere else ({ended} other session{'s' * (ended != 1)})."
    )
    if form.cleaned_data.get("revoke_tokens"):
        _say_tokens_revoked(request, ApiToken.objects.revoke_all(user=request.user))
    return redirect("sheets:account")


def _say_tokens_revoked(request: HttpRequest, count: int) -> None:
    if count:
        messages.success(
            request,
            f"Your {count} API token{'s' * (count != 1)} {'are' if count != 1 else 'is'} "
            "revoked: scripts using them stop working. Create new ones on the API tokens page.",
        )
    else:
        messages.info(request, "You had no API tokens to revoke.")


@login_required
def account_delete(request: AuthedRequest) -> HttpResponse:
    """Leave for good: password, the fate of your characters elsewhere, and the names of the
    campaigns you run typed out. Then everything of yours is gone and you are logged out."""
    user = request.user
    characters = list(accounts.characters_elsewhere(user))
    campaigns = list(
        Campaign.objects.filter(gm=user)
        .annotate(
            fights=Count("encounters", distinct=True),
            player_count=Count("memberships", distinct=True),
        )
        .order_by("name", "pk")
    )
    form = DeleteAccountForm(
        request.POST or None, user=user, characters=characters, campaigns=campaigns
    )
    if request.method == "POST" and form.is_valid():
        name = user.get_username()
        accounts.delete_account(user=user, characters=form.cleaned_data.get("characters", "give"))
        logout(request)
        messages.success(request, f"The account “{name}” and everything it owned are deleted.")
        return redirect("sheets:home")
    return render(
        request,
        "registration/account_delete.html",
        {"form": form, "characters": characters, "campaigns": campaigns},
        status=400 if form.errors else 200,
    )


@login_required
@require_POST
def campaign_handover(request: AuthedRequest, pk: int) -> HttpResponse:
    """The GM offers the campaign to one of its players (an empty choice withdraws it)."""
    campaign = get_campaign_for_user(request, pk, write=True)
    raw = request.POST.get("player", "")
    try:
        to_user_id = int(raw) if raw else None
    except ValueError:
        to_user_id = -1  # refused below like any non-player
    try:
        handover = accounts.offer_campaign(
            user=request.user, campaign=campaign, to_user_id=to_user_id
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("sheets:account_delete")
    if handover is None:
        messages.info(request, f"“{campaign.name}” is no longer offered to anyone.")
    else:
        messages.success(
            request,
            f"“{campaign.name}” is offered to {handover.to_user.get_username()}: it becomes "
            "theirs when they accept it on their account page.",
        )
    return redirect("sheets:account_delete")


@login_required
@require_POST
def handover_accept(request: AuthedRequest, pk: int) -> HttpResponse:
    handover = get_object_or_404(CampaignHandover, pk=pk, to_user=request.user)
    try:
        campaign = accounts.accept_handover(handover=handover, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("sheets:account")
    messages.success(request, f"You now run “{campaign.name}”.")
    return redirect(campaign)


@login_required
@require_POST
def handover_decline(request: AuthedRequest, pk: int) -> HttpResponse:
    handover = get_object_or_404(
        CampaignHandover.objects.select_related("campaign"), pk=pk, to_user=request.user
    )
    handover.delete()
    messages.info(request, f"You declined to run “{handover.campaign.name}”.")
    return redirect("sheets:account")


class PasswordResetView(auth_views.PasswordResetView):
    """Django's, restyled; throttled per client and per address asked for by
    config.throttling.PasswordResetThrottleMiddleware. The mail is made and sent by the task
    worker (``PasswordResetForm``)."""

    form_class = PasswordResetForm
    template_name = "registration/password_reset_form.html"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's; a new password also ends every session of the account (a thief's too)."""

    success_url = reverse_lazy("password_reset_complete")

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        accounts.end_other_sessions(form.user, keep=None)
        # And every API token: a key the thief copied, or minted with one, stops now (the
        # done page says so).
        ApiToken.objects.revoke_all(user=form.user)
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's; the other sessions end (this one stays logged in), and the API tokens are
    revoked unless the owner unticks the box."""

    form_class = PasswordChangeForm

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        # Django gave this session a new key (update_session_auth_hash): it is the one kept.
        accounts.end_other_sessions(form.user, keep=self.request.session)
        accounts.remember_session(form.user, self.request.session)
        if form.cleaned_data.get("revoke_tokens"):
            _say_tokens_revoked(self.request, ApiToken.objects.revoke_all(user=form.user))
        return response
