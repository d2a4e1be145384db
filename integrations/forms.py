from __future__ import annotations

from typing import Any

from django import forms

from integrations.delivery import RefusedURL, check_url
from integrations.models import EVENT_TYPES, WebhookEndpoint


def validate_webhook_url(url: str) -> None:
    try:
        check_url(url)
    except RefusedURL as exc:
        raise forms.ValidationError(str(exc)) from exc


class WebhookForm(forms.ModelForm):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    events = forms.MultipleChoiceField(
        choices=list(EVENT_TYPES.items()),
        widget=forms.CheckboxSelectMultiple,
        help_text="What this endpoint receives.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["url", "description", "format", "events", "active"]
        widgets = {"format": forms.RadioSelect}
        help_texts = {
            "format": "Signed JSON for your own code; a chat message for a chat server's "
            "incoming webhook (a channel then shows each roll as it lands).",
            "active": "Paused endpoints receive nothing.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            self.initial.setdefault("events", ["roll.resolved"])

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        validate_webhook_url(url)
        return url

    def save(self, commit: bool = True) -> WebhookEndpoint:
        endpoint: WebhookEndpoint = super().save(commit=False)
        if endpoint.active:
            endpoint.paused_reason = ""
            endpoint.failed_deliveries = 0
        if commit:
            endpoint.save()
        return endpoint
