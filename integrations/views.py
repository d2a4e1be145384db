"""The GM's webhook pages: list and create, edit, pause/resume, rotate the secret, delete,
the delivery log with "send again". Plain POST forms; players get 403, outsiders 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from integrations import delivery
from integrations.forms import WebhookForm
from integrations.models import WebhookDelivery, WebhookEndpoint
from sheets.access import get_campaign_for_user
from sheets.models import Campaign
from sheets.services import lock_campaign

#: The session key under which a new secret waits to be shown once.
SHOW_ONCE_KEY = "integrations:new-secret"


def _endpoint(request: HttpRequest, campaign_pk: int, pk: int) -> WebhookEndpoint:
    campaign = get_campaign_for_user(request, campaign_pk, write=True)
    return get_object_or_404(
        WebhookEndpoint.objects.select_related("campaign"), campaign=campaign, pk=pk
    )


def _show_secret_once(request: HttpRequest, endpoint: WebhookEndpoint) -> None:
    request.session[SHOW_ONCE_KEY] = [endpoint.pk, endpoint.secret]


def _pop_secret(request: HttpRequest, endpoint: WebhookEndpoint) -> str | None:
    shown = request.session.get(SHOW_ONCE_KEY)
    if shown and shown[0] == endpoint.pk:
        del request.session[SHOW_ONCE_KEY]
        return str(shown[1])
    return None


@login_required
def webhook_list(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, pk, write=True)
    form = WebhookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        endpoint = form.save(commit=False)
        with transaction.atomic():
            # Behind a deletion of the campaign: wait for it, then a 404 (lock_campaign).
            endpoint.campaign = lock_campaign(pk=campaign.pk)
            endpoint.save()
        _show_secret_once(request, endpoint)
        messages.success(request, "Webhook created. Copy its secret now: it is shown once.")
        return redirect(endpoint)
    return render(request, "integrations/webhook_list.html", _list_context(campaign, form))


def _list_context(campaign: Campaign, form: WebhookForm) -> dict[str, object]:
    return {"campaign": campaign, "endpoints": campaign.webhooks.all(), "form": form}


@login_required
def webhook_detail(request: HttpRequest, campaign_pk: int, pk: int) -> HttpResponse:
    endpoint = _endpoint(request, campaign_pk, pk)
    form = WebhookForm(request.POST or None, instance=endpoint)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Webhook saved.")
        return redirect(endpoint)
    deliveries = endpoint.deliveries.all()[:50]
    return render(
        request,
        "integrations/webhook_detail.html",
        {
            "campaign": endpoint.campaign,
            "endpoint": endpoint,
            "form": form,
            "deliveries": deliveries,
            "new_secret": _pop_secret(request, endpoint),
        },
    )


@login_required
@require_POST
def webhook_toggle(request: HttpRequest, campaign_pk: int, pk: int) -> HttpResponse:
    endpoint = _endpoint(request, campaign_pk, pk)
    endpoint.active = not endpoint.active
    if endpoint.active:
        endpoint.paused_reason = ""
        endpoint.failed_deliveries = 0
    endpoint.save()
    messages.success(request, "Webhook resumed." if endpoint.active else "Webhook paused.")
    return redirect(endpoint)


@login_required
@require_POST
def webhook_rotate(request: HttpRequest, campaign_pk: int, pk: int) -> HttpResponse:
    endpoint = _endpoint(request, campaign_pk, pk)
    endpoint.rotate_secret()
    _show_secret_once(request, endpoint)
    messages.success(request, "New secret made; the old one no longer signs anything.")
    return redirect(endpoint)


@login_required
def webhook_delete(request: HttpRequest, campaign_pk: int, pk: int) -> HttpResponse:
    endpoint = _endpoint(request, campaign_pk, pk)
    if request.method == "POST":
        campaign = endpoint.campaign
        endpoint.delete()
        messages.success(request, "Webhook deleted.")
        return redirect("integrations:webhook_list", campaign.pk)
    return render(request, "integrations/webhook_confirm_delete.html", {"endpoint": endpoint})


@login_required
def delivery_detail(
    request: HttpRequest, campaign_pk: int, pk: int, delivery_pk: int
) -> HttpResponse:
    endpoint = _endpoint(request, campaign_pk, pk)
    d = get_object_or_404(WebhookDelivery, endpoint=endpoint, pk=delivery_pk)
    if request.method == "POST":
        delivery.send_again(d)
        messages.success(request, "Queued to be sent again.")
        return redirect(endpoint)
    return render(
        request,
        "integrations/delivery_detail.html",
        {"endpoint": endpoint, "delivery": d, "body": delivery.body_of(d)},
    )
