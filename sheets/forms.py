from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib.auth import forms as auth_forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.sites.shortcuts import get_current_site
from django.http import Http404, HttpRequest

from sheets.models import APTITUDE_FIELDS, ApiToken, Campaign, Character

if TYPE_CHECKING:
    from sheets.users import User


class SignupForm(UserCreationForm):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    """A username and a password; an email address if you like, for a forgotten password."""

    email = forms.EmailField(
        required=False,
        label="Email (optional)",
        help_text="Only to reset a forgotten password. We mail you a link to confirm it first.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    field_order = ["username", "email", "password1", "password2"]

    class Meta(UserCreationForm.Meta):
        fields = ("username",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].widget.attrs.update(
            {"autocomplete": "username", "autocapitalize": "none"}
        )


class EmailForm(forms.Form):
    email = forms.EmailField(
        label="Email address",
        help_text="We mail a link to this address; it is used once you follow it.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


REVOKE_TOKENS_LABEL = "Also revoke my API tokens"
REVOKE_TOKENS_HELP = (
    "Every script and bot using one stops working; you create new tokens afterwards. "
    "Untick only if you are sure nobody else has your tokens."
)


def revoke_tokens_field() -> forms.BooleanField:
    """Ticked unless the owner unticks it: after a compromise, a key the thief copied must
    stop working with the password and the sessions."""
    return forms.BooleanField(
        label=REVOKE_TOKENS_LABEL, help_text=REVOKE_TOKENS_HELP, required=False, initial=True
    )


class PasswordChangeForm(auth_forms.PasswordChangeForm):
    """Django's, with the choice to revoke the account's API tokens too (ticked)."""

    revoke_tokens = revoke_tokens_field()


class EndSessionsForm(forms.Form):
    """The "log out everywhere else" form, with the same choice for the API tokens."""

    revoke_tokens = revoke_tokens_field()


class PasswordResetForm(auth_forms.PasswordResetForm):
    """Django's, but the page only queues one task, the same whatever the address: the task
    worker looks the accounts up, makes the link and renders and sends the mail
    (``sheets.accounts.send_password_reset``). Done on the request path, that work made the
    answer about 1 ms slower for an address that has an account (bench/bench_reset.py).
    The task uses its own templates and Django's token generator: the template and token
    arguments are Django's signature only."""

    def save(
        self,
        domain_override: str | None = None,
        subject_template_name: str = "",
        email_template_name: str = "",
        use_https: bool = False,
        token_generator: Any = None,
        from_email: str | None = None,
        request: HttpRequest | None = None,
        html_email_template_name: str | None = None,
        extra_email_context: dict[str, Any] | None = None,
    ) -> None:
        from sheets.accounts import send_password_reset

        if domain_override:
            site_name = domain = domain_override
        else:
            site = get_current_site(request)
            site_name, domain = site.name, site.domain
        send_password_reset.enqueue(
            email=self.cleaned_data["email"],
            domain=domain,
            site_name=site_name,
            protocol="https" if use_https else "http",
        )


class DeleteAccountForm(forms.Form):
    """Leaving for good: your password, what becomes of your characters in other people's
    campaigns, and the name of each campaign you run, typed out (they go too)."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        error_messages={"required": "Type your password: it proves the account is yours."},
    )
    characters = forms.ChoiceField(
        label="Your characters in other people's campaigns",
        choices=[
            ("give", "Leave them to the campaign's GM (marked as a former player's)"),
            ("delete", "Delete them"),
        ],
        widget=forms.RadioSelect,
        error_messages={"required": "Choose what becomes of your characters."},
    )

    def __init__(
        self,
        *args: Any,
        user: User,
        characters: Collection[Character],
        campaigns: Collection[Campaign],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.campaigns = list(campaigns)
        if not characters:
            del self.fields["characters"]
        for campaign in self.campaigns:
            self.fields[f"campaign_{campaign.pk}"] = forms.CharField(
                label=f"Type “{campaign.name}” to delete it with its fights",
                strip=True,
                error_messages={"required": f"Type “{campaign.name}” to delete it."},
                widget=forms.TextInput(attrs={"autocomplete": "off"}),
            )

    def clean_password(self) -> str:
        password: str = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError("That is not your password.")
        return password

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        for campaign in self.campaigns:
            field = f"campaign_{campaign.pk}"
            typed = cleaned.get(field)
            if typed is not None and typed != campaign.name.strip():
                self.add_error(field, f"That is not the name: type “{campaign.name}” exactly.")
        return cleaned


class CampaignForm(forms.ModelForm):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    class Meta:
        model = Campaign
        fields = ["name", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}
        help_texts = {
            "name": "What your group calls this campaign.",
            "description": "Optional: the setting, the schedule, house rules.",
        }


class JoinForm(forms.Form):
    code = forms.CharField(
        max_length=32,
        label="Join code",
        help_text="Eight letters and digits from your GM; case, spaces and dashes do not matter.",
    )


class ApiTokenForm(forms.ModelForm):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    class Meta:
        model = ApiToken
        fields = ["name"]


class CharacterCreateForm(forms.ModelForm):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    """The quick way to a sheet: a name and the aptitudes; everything else is edited on the
    sheet itself."""

    class Meta:
        model = Character
        fields = [
            "name",
            "is_npc",
            "archetype",
            "foc",
            "spd",
            "skl",
            "vgr",
            "nrv",
            "chr",
            "svy",
            "weight",
        ]
        help_texts = {"is_npc": "A GM's character: players see it but cannot edit it."}

    def __init__(self, *args: Any, allow_npc: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not allow_npc:
            del self.fields["is_npc"]
        for name in APTITUDE_FIELDS:
            self.fields[name].widget.attrs.update({"min": 1, "max": 5})


def row_form(kind: str) -> type[forms.ModelForm[Any]]:
    """The 'add a row' form of a sheet section (discipline, weapon or zone)."""
    from sheets.services import EDITABLE_FIELDS, ROW_MODELS

    if kind not in ("discipline", "weapon", "zone"):
        raise Http404("No such section.")
    fields = [
        f for f in EDITABLE_FIELDS[kind] if f not in ("exp_marks", "wounds", "grievous", "source")
    ]
    form_class = forms.modelform_factory(ROW_MODELS[kind], fields=fields)
    if kind != "zone":
        return form_class

    class ZoneRowForm(form_class):  # type: ignore[valid-type,misc]  # a class built at runtime
        """ARM and max ARM left blank come from the armor table (BodyZone.fill_armor)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            for name in ("arm", "arm_max"):
                self.fields[name].required = False
                self.fields[name].initial = None
                self.fields[name].help_text = "Blank: from the armor table."

    return ZoneRowForm
