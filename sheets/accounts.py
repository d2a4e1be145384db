"""Accounts: email addresses confirmed by a link, the mail we send, the sessions someone is
logged in with. (Reset requests are throttled in config/throttling.py, as logins are.)

An address is only written to ``User.email`` once its owner has followed the link mailed to
it: password resets go to confirmed addresses only, so nobody can have another person's
password reset mailed to themselves by typing their own address into that person's account.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import get_user_model, user_logged_in, user_logged_out
from django.contrib.auth.tokens import default_token_generator
from django.contrib.sessions.backends.base import SessionBase
from django.core import signing
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import QuerySet
from django.dispatch import receiver
from django.http import HttpRequest
from django.tasks import task
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from sheets import services
from sheets.models import (
    Campaign,
    CampaignHandover,
    Character,
    IdempotencyRecord,
    LoginSession,
    Membership,
    lock_user,
)

if TYPE_CHECKING:
    from sheets.users import User

# --- Mail -------------------------------------------------------------------------------------


@task()
def send_mail(subject: str, body: str, to: str) -> None:
    """One plain-text mail, sent by the task worker (immediately in the tests)."""
    EmailMessage(subject=subject, body=body, to=[to]).send()


def mail(request: HttpRequest, template: str, to: str, context: dict[str, Any]) -> None:
    """Render ``<template>_subject.txt`` and ``<template>_email.txt`` and queue the mail."""
    context = {"site": request.get_host(), "protocol": request.scheme, **context}
    subject = "".join(render_to_string(f"{template}_subject.txt", context).splitlines())
    body = render_to_string(f"{template}_email.txt", context)
    send_mail.enqueue(subject=subject, body=body, to=to)


# --- Resetting a forgotten password -----------------------------------------------------------

RESET_SUBJECT_TEMPLATE = "registration/password_reset_subject.txt"
RESET_EMAIL_TEMPLATE = "registration/password_reset_email.txt"


@task()
def send_password_reset(*, email: str, domain: str, site_name: str, protocol: str) -> None:
    """Mail a reset link to each account whose confirmed address is ``email`` (usually one,
    often none). Run by the task worker: the reset page queues this task whatever the address,
    and does nothing else, so its answer cannot tell whether an account has it."""
    for user in auth_forms.PasswordResetForm().get_users(email):
        context = {
            "email": user.email,
            "domain": domain,
            "site_name": site_name,
            "uid": urlsafe_base64_encode(force_bytes(user.pk)),
            "user": user,
            "token": default_token_generator.make_token(user),
            "protocol": protocol,
        }
        subject = "".join(render_to_string(RESET_SUBJECT_TEMPLATE, context).splitlines())
        body = render_to_string(RESET_EMAIL_TEMPLATE, context)
        EmailMessage(subject=subject, body=body, to=[user.email]).send()


# --- Confirming an address --------------------------------------------------------------------

EMAIL_SALT = "sheets.accounts.email"
#: How long an address confirmation link works.
EMAIL_CONFIRM_MAX_AGE = 60 * 60 * 24


def email_token(user: User, email: str) -> str:
    # The address it replaces is signed too: once one link is followed, the others (and this
    # one, again) no longer match the account.
    return signing.dumps(
        {"u": user.pk, "e": email, "was": getattr(user, "email", "")},
        salt=EMAIL_SALT,
        compress=True,
    )


def send_email_confirmation(request: HttpRequest, user: User, email: str) -> None:
    url = reverse("sheets:email_confirm", kwargs={"token": email_token(user, email)})
    mail(
        request,
        "registration/email_confirm",
        email,
        {"user": user, "url": request.build_absolute_uri(url)},
    )


class EmailLinkError(Exception):
    """A confirmation link that is wrong, expired, already used or not the user's."""


def confirm_email(*, user: User, token: str) -> str:
    """Set the address the link was mailed to as ``user``'s; returns it."""
    try:
        data = signing.loads(token, salt=EMAIL_SALT, max_age=EMAIL_CONFIRM_MAX_AGE)
    except signing.SignatureExpired as exc:
        raise EmailLinkError("This link has expired: ask for a new one below.") from exc
    except signing.BadSignature as exc:
        raise EmailLinkError("This link is not valid: check that it was copied whole.") from exc
    email = data.get("e", "")
    if data.get("u") != user.pk:
        raise EmailLinkError("This link was sent for another account.")
    current = getattr(user, "email", "")
    if current.lower() == email.lower():
        return str(current)
    if data.get("was") != current:
        raise EmailLinkError("This link has been used, or a newer one replaced it.")
    if get_user_model().objects.filter(email__iexact=email).exclude(pk=user.pk).exists():
        raise EmailLinkError("This address belongs to another account already.")
    user.email = email
    user.save(update_fields=["email"])
    return str(email)


# --- Sessions ---------------------------------------------------------------------------------


def remember_session(user: User, session: SessionBase) -> None:
    """Called on each login: the session joins the user's list, and the ones that expired or
    were cleared since (``clearsessions``) leave it."""
    if session.session_key:
        LoginSession.objects.update_or_create(
            session_key=session.session_key, defaults={"user": user}
        )
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    gone = [
        key
        for key in LoginSession.objects.filter(user=user).values_list("session_key", flat=True)
        if key != session.session_key and not store.exists(key)
    ]
    LoginSession.objects.filter(session_key__in=gone).delete()


def forget_session(session: SessionBase) -> None:
    if session.session_key:
        LoginSession.objects.filter(session_key=session.session_key).delete()


def end_other_sessions(user: User, keep: SessionBase | None) -> int:
    """Log ``user`` out everywhere but in ``keep``; returns how many sessions ended."""
    engine = import_module(settings.SESSION_ENGINE)
    others = LoginSession.objects.filter(user=user)
    if keep is not None and keep.session_key:
        others = others.exclude(session_key=keep.session_key)
    keys = list(others.values_list("session_key", flat=True))
    for key in keys:
        engine.SessionStore().delete(key)
    LoginSession.objects.filter(session_key__in=keys).delete()
    return len(keys)


@receiver(user_logged_in)
def _logged_in(sender: Any, request: HttpRequest | None, user: User, **kw: Any) -> None:
    if request is not None and hasattr(request, "session"):
        remember_session(user, request.session)


@receiver(user_logged_out)
def _logged_out(sender: Any, request: HttpRequest | None, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "session"):
        forget_session(request.session)


# --- Leaving for good -------------------------------------------------------------------------


def characters_elsewhere(user: User) -> QuerySet[Character]:
    """``user``'s characters in campaigns someone else runs."""
    return (
        Character.objects.filter(owner=user)
        .exclude(campaign__gm=user)
        .select_related("campaign")
        .order_by("campaign__name", "name", "pk")
    )


def delete_account(*, user: User, characters: str) -> None:
    """Delete ``user`` and all they own, in one transaction. Their characters in other
    people's campaigns go to each campaign's GM, marked as a former player's (``characters``
    "give"), or are deleted ("delete"). The campaigns they run go with all that is in them
    (fights, their players' sheets, webhooks); the caller has had each one confirmed by name.
    The fights' logs elsewhere stay, their entries no longer naming the user (the actor
    becomes null). Every session and API token ends with the account.

    The fights of all this may be played right now: the locks come first, in the documented
    order (``services.lock_for_deletion``: the fights, the campaigns, the sheets), so an
    action in progress finishes first and every action after it finds nothing (a 404)."""
    if characters not in ("give", "delete"):
        raise ValueError(f"characters must be 'give' or 'delete', not {characters!r}")
    pk = user.pk
    try:
        _delete_account(user, characters)
    except BaseException:
        # Django clears a deleted row's pk before the COMMIT, which can still fail: the
        # account is then still there, and whoever reads the user next (the request's log
        # line) reads its id, not None.
        user.pk = pk
        raise


def _delete_account(user: User, characters: str) -> None:
    with transaction.atomic():
        services.lock_for_deletion(
            campaigns=list(Campaign.objects.filter(gm=user).values_list("pk", flat=True)),
            characters=list(characters_elsewhere(user).values_list("pk", flat=True)),
        )
        # The account's own row, after the fights, campaigns and sheets (the lock order):
        # what is made for the user alone (a library NPC, an API token) takes it first, so
        # none is left out of what user.delete() collects, pointing at nothing (a 500).
        lock_user(user)
        # Read again under the locks: a sheet handed over meanwhile is no longer theirs.
        theirs = list(characters_elsewhere(user))
        for character in theirs:
            if characters == "give":
                character.owner_id = character.campaign.gm_id
                character.left_by_player = True
                character.save(update_fields=["owner", "left_by_player"])
            else:
                character.delete()
        Campaign.objects.filter(gm=user).delete()
        # Stored API answers may hold the user's data.
        IdempotencyRecord.objects.filter(caller=f"user:{user.pk}").delete()
        end_other_sessions(user, keep=None)
        user.delete()


# --- Handing a campaign over ------------------------------------------------------------------


def offer_campaign(
    *, user: User, campaign: Campaign, to_user_id: int | None
) -> CampaignHandover | None:
    """``user``, the campaign's GM, offers it to one of its players (None withdraws the offer);
    anyone else gets ``PermissionDenied``. One offer per campaign: a new one replaces it."""
    with transaction.atomic():
        # Under the campaign's lock, the one accept_handover takes: the GM checked is still its
        # GM when the offer is written.
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if not locked.is_gm(user):
            raise PermissionDenied("Only the campaign's GM can hand it over.")
        if to_user_id is None:
            CampaignHandover.objects.filter(campaign=locked).delete()
            return None
        if not locked.memberships.filter(user_id=to_user_id).exists():
            raise ValidationError({"player": "Only a player of this campaign can take it over."})
        handover, _ = CampaignHandover.objects.update_or_create(
            campaign=locked, defaults={"to_user_id": to_user_id}
        )
    return handover


def accept_handover(*, handover: CampaignHandover, user: User) -> Campaign:
    """``user`` (the player it was offered to) takes the campaign over: they become its GM, its
    NPCs become theirs, and the former GM stays on as a player."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=handover.campaign_id)
        if handover.to_user_id != user.pk:
            raise ValidationError("This campaign was offered to someone else.")
        if not campaign.memberships.filter(user=user).exists():
            handover.delete()
            raise ValidationError(f"You are no longer a player of “{campaign.name}”.")
        former = campaign.gm_id
        Character.objects.filter(campaign=campaign, owner_id=former, is_npc=True).update(owner=user)
        campaign.memberships.filter(user=user).delete()
        Membership.objects.get_or_create(campaign=campaign, user_id=former)
        campaign.gm = user
        campaign.save(update_fields=["gm"])
        handover.delete()
    return campaign
