"""Campaigns, API tokens and (later) character sheets."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import DEFAULT_DB_ALIAS, models, router, transaction
from django.db.models import Q
from django.urls import reverse

from rules.engine import RulesError, omg
from rules.engine.omg_data import (
    APTITUDE_CHOICES,
    ARCHETYPE_CHOICES,
    ARMORS,
    ARMORS_BY_NAME,
    WEAPON_CATEGORY_CHOICES,
)

if TYPE_CHECKING:
    from sheets.users import AnyUser, User

# Join codes avoid letters that are easy to misread aloud or on a phone (0/O, 1/I/L).
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
JOIN_CODE_LENGTH = 8


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def normalize_join_code(code: str) -> str:
    """Players type codes by hand: ignore case, spaces and dashes."""
    return "".join(ch for ch in code.upper() if ch.isalnum())


def member_or_gm(user: AnyUser, campaign: str = "") -> Q:
    """The one access rule: ``user`` runs the campaign or plays in it (nothing matches for an
    anonymous user). ``campaign`` is the lookup path from the model filtered to its campaign
    (``"campaign"`` for an encounter, ``"encounter__campaign"`` for a declaration; empty for
    a campaign itself). Every "who may see this" filter is built on it:
    ``Campaign.objects.for_user``, ``Encounter.objects.for_user``, the combat services' lock
    (combat/services/rows.py)."""
    if not user.is_authenticated:
        return Q(pk__in=[])
    at = f"{campaign}__" if campaign else ""
    played = Membership.objects.filter(user_id=user.pk).values("campaign_id")
    return Q(**{f"{at}gm_id": user.pk}) | Q(**{f"{at}pk__in": played})


class CampaignQuerySet(models.QuerySet["Campaign"]):
    def for_user(self, user: AnyUser) -> CampaignQuerySet:
        """Campaigns the user runs or plays in; none for an anonymous user."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(member_or_gm(user))


class Campaign(models.Model):
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="campaigns_run"
    )
    players = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        through="Membership",
        related_name="campaigns_played",
        blank=True,
    )
    join_code = models.CharField(max_length=JOIN_CODE_LENGTH, unique=True, default=new_join_code)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CampaignQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("sheets:campaign_detail", args=[self.pk])

    def is_gm(self, user: AnyUser) -> bool:
        return user.is_authenticated and self.gm_id == user.pk

    def is_member(self, user: AnyUser) -> bool:
        """:func:`member_or_gm` on this campaign (one query; none for an anonymous user)."""
        return Campaign.objects.for_user(user).filter(pk=self.pk).exists()

    def regenerate_join_code(self) -> str:
        self.join_code = new_join_code()
        self.save(update_fields=["join_code", "updated_at"])
        return self.join_code


class Membership(models.Model):
    """A player in a campaign. The GM is not a member row: they own the campaign."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["joined_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user"], name="one_membership_per_player")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.campaign}"


def hash_token(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class TokenRevoked(Exception):
    """The token a request came with was revoked while the request ran."""


def lock_user(user: User) -> bool:
    """Lock ``user``'s row until the transaction ends: revoking all their API tokens and
    creating one take this lock, so neither slips past the other; so do a new library NPC
    and the account's deletion (before it collects what the user owns), so neither is
    left pointing at a deleted account. False when the account is gone."""
    rows = get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk")
    return bool(list(rows))


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def create_token(
        self, *, user: User, name: str, minted_by: ApiToken | None = None
    ) -> tuple[ApiToken, str]:
        """Create a token and return it with its key. Only the hash is stored: the key is
        shown once, at creation. ``minted_by`` is the token the request came with, if any:
        once it is revoked (one by one, or with all of the account's) it mints no more, even
        in a request that was under way (``TokenRevoked``). Behind the account's deletion it
        waits, then finds the account gone (``DoesNotExist``, a 404)."""
        key = secrets.token_urlsafe(32)
        with transaction.atomic():
            if not lock_user(user):  # deleted meanwhile: the answer for a missing row
                raise get_user_model().DoesNotExist("This account no longer exists.")
            if minted_by is not None and not self.filter(pk=minted_by.pk).exists():
                raise TokenRevoked("This token has been revoked.")
            token = self.create(user=user, name=name, key_hash=hash_token(key), prefix=key[:8])
        return token, key

    def revoke_all(self, *, user: User) -> int:
        """Revoke every API token of ``user`` at once, those minted through the API by
        another token too; returns how many there were."""
        with transaction.atomic():
            lock_user(user)
            deleted, _ = self.filter(user=user).delete()
        return deleted


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=80, help_text="What this token is for, e.g. 'Discord bot'.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class CampaignHandover(models.Model):
    """A GM's offer to hand their campaign to one of its players; it stands until that player
    accepts or declines, or the GM withdraws it (sheets/accounts.py)."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="handover")
    to_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="handovers_offered"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.campaign} -> {self.to_user_id}"


class LoginSession(models.Model):
    """A session someone logged in with, so that they can end the others ("log out
    everywhere else") whatever the session engine (sheets/accounts.py)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="login_sessions"
    )
    session_key = models.CharField(max_length=40, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.session_key[:6]}…"


# --- Character sheets -----------------------------------------------------------------------

ARMOR_CHOICES = tuple((a.name, f"{a.name} (ARM {a.arm})") for a in ARMORS)
APTITUDE_FIELDS = ("foc", "spd", "skl", "vgr", "nrv", "chr", "svy")
#: The current pools on the sheet and the derived maximum each one is kept under.
RESOURCE_MAXIMA = (("vitality", "vit", "Vitality"), ("mana", "mna", "Mana"), ("chi", "chi", "Chi"))


class FieldRange(models.CheckConstraint):
    """``low <= field <= high``, kept by the database like any check constraint, and checked in
    Python when a model is cleaned. Django's own ``CheckConstraint.validate`` asks the database
    instead, with a savepoint and a query for each constraint: creating a sheet ran fifteen of
    them, most of what it cost. Migrations see a plain ``CheckConstraint`` (``deconstruct``), so
    the table's constraint is the same; tests/sheets/test_field_ranges.py holds the two checks
    to the same answers at each bound."""

    def __init__(self, field: str, low: int, high: int | None, name: str) -> None:
        condition = Q(**{f"{field}__gte": low})
        if high is not None:
            condition &= Q(**{f"{field}__lte": high})
        super().__init__(condition=condition, name=name)
        self.field, self.low, self.high = field, low, high

    def validate(
        self,
        model: type[models.Model],
        instance: models.Model,
        exclude: set[str] | None = None,
        using: str = DEFAULT_DB_ALIAS,
    ) -> None:
        if exclude and self.field in exclude:
            return
        value = getattr(instance, self.field)
        if hasattr(value, "resolve_expression"):  # an F() or other expression: the database
            super().validate(model, instance, exclude=exclude, using=using)
        elif value is not None and (
            value < self.low or (self.high is not None and value > self.high)
        ):
            raise ValidationError(
                self.get_violation_error_message(), code=self.violation_error_code
            )

    def deconstruct(self) -> tuple[str, Sequence[Any], dict[str, Any]]:
        _, args, kwargs = super().deconstruct()
        return "django.db.models.CheckConstraint", args, kwargs

    def clone(self) -> FieldRange:
        return FieldRange(self.field, self.low, self.high, self.name)


class ConstraintErrorsOnFields:
    """A constraint across two fields (DMG within max DMG, one name per character) fails as
    an error of the whole row, ``__all__``, which the API and the import answered as such:
    the field whose value is refused is named instead, as for every other limit (README,
    "API"). Django's own loop (Model.validate_constraints), which knows the constraint."""

    #: constraint name -> the field its violation is reported on
    constraint_fields: ClassVar[dict[str, str]] = {}
    get_constraints: Any

    def validate_constraints(self, exclude: Collection[str] | None = None) -> None:
        using = router.db_for_write(type(self), instance=self)  # type: ignore[arg-type]  # mixed into models only
        errors: dict[str, list[ValidationError]] = {}
        for model_class, constraints in self.get_constraints():
            for constraint in constraints:
                try:
                    constraint.validate(model_class, self, exclude=exclude, using=using)
                except ValidationError as exc:
                    field = self.constraint_fields.get(constraint.name)
                    fields: Sequence[str] = getattr(constraint, "fields", ())
                    if field is None and exc.code == "unique" and len(fields) == 1:
                        field = fields[0]
                    if field is None:
                        errors = exc.update_error_dict(errors)
                    else:
                        errors.setdefault(field, []).extend(exc.error_list)
        if errors:
            raise ValidationError(errors)


def _aptitude_field(label: str) -> models.PositiveSmallIntegerField[int, int]:
    return models.PositiveSmallIntegerField(
        label,
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(5)],
    )


def _hidden_in_a_fight() -> Q:
    """Characters hidden in an encounter, and NPCs whose fight copies (or their copies) are."""
    return Q(pk__in=Character.objects.filter(combat_participants__hidden=True).values("pk")) | Q(
        pk__in=Character.objects.filter(
            Q(copies__combat_participants__hidden=True)
            | Q(copies__copies__combat_participants__hidden=True)
        ).values("pk")
    )


class CharacterQuerySet(models.QuerySet["Character"]):
    def visible_to(self, user: AnyUser) -> CharacterQuerySet:
        """Characters in the campaigns the user runs or plays in, less what is the GM's alone
        (docs/security.md, "Who sees an NPC"): an NPC the GM has not shown to the players, a
        character hidden in an encounter, and an NPC whose fight copies are hidden (they carry
        its numbers). The GM sees everything; a player always sees their own characters."""
        if not user.is_authenticated:
            return self.none()
        mine = self.filter(campaign__in=Campaign.objects.for_user(user))
        secret = Q(is_npc=True, revealed=False) | _hidden_in_a_fight()
        return mine.exclude(secret & ~Q(campaign__gm=user) & ~Q(owner=user))

    def with_sheet(self) -> CharacterQuerySet:
        """Everything the sheet shows, in a fixed number of queries."""
        return self.select_related("campaign", "owner").prefetch_related(
            "disciplines", "weapons", "zones"
        )


class Character(models.Model):
    """An OMG character sheet. Owned by a player, or by the GM (NPCs)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="characters")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="characters"
    )
    is_npc = models.BooleanField("NPC", default=False)
    revealed = models.BooleanField(
        "shown to players",
        default=False,
        help_text="An NPC's sheet is the GM's alone until the GM shows it to the players.",
    )
    copied_from = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="copies",
        help_text="The NPC this fight copy was made from.",
    )
    left_by_player = models.BooleanField(
        default=False,
        editable=False,
        help_text="Its player deleted their account and left it to the GM.",
    )
    fight_only = models.BooleanField(
        default=False,
        editable=False,
        help_text="Made for one fight from the GM's NPC library: it goes with its encounter.",
    )

    name = models.CharField(max_length=120)
    occupation = models.CharField(max_length=120, blank=True)
    sex = models.CharField(max_length=40, blank=True)
    appearance = models.CharField(max_length=255, blank=True)
    age = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(10_000)]
    )
    height = models.CharField(max_length=40, blank=True, help_text="As you like: 5'10\", 178 cm.")
    weight = models.PositiveIntegerField(
        "weight (lb)",
        null=True,
        blank=True,
        validators=[MaxValueValidator(100_000)],
        help_text="In pounds. Sets BZF (weight / 14) unless BZF was rolled.",
    )
    attitude = models.TextField(blank=True)
    backstory = models.TextField(blank=True)
    outlook = models.TextField(blank=True)
    objectives = models.TextField(blank=True)
    equipment = models.TextField(blank=True)
    currency_property = models.TextField("currency & property", blank=True)
    notes = models.TextField(blank=True)
    archetype = models.CharField(max_length=20, choices=ARCHETYPE_CHOICES, blank=True)

    foc = _aptitude_field("Focus")
    spd = _aptitude_field("Speed")
    skl = _aptitude_field("Skill")
    vgr = _aptitude_field("Vigor")
    nrv = _aptitude_field("Nerve")
    chr = _aptitude_field("Charm")
    svy = _aptitude_field("Savvy")

    fate = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(1000)])
    exp_marks = models.PositiveSmallIntegerField("EXP marks", default=0)
    talent_marks = models.PositiveSmallIntegerField("talent marks", default=0)
    rsv = models.PositiveSmallIntegerField(
        "RSV",
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="The reserve d100 roll kept on the sheet (100 for 00).",
    )
    itv = models.PositiveSmallIntegerField(
        "ITV",
        null=True,
        blank=True,
        validators=[MaxValueValidator(100)],
        help_text="Today's initiative, rolled after each daily rest.",
    )
    # Vitality 0 is "down and dying" (docs/rules.md): it never goes below, as in the engine.
    vitality = models.SmallIntegerField(
        "current Vitality", default=3, validators=[MinValueValidator(0), MaxValueValidator(1_000)]
    )
    mana = models.SmallIntegerField("current Mana", default=4)
    chi = models.SmallIntegerField("current Chi", default=4)
    bzf = models.PositiveSmallIntegerField(
        "BZF",
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(7_000)],
        help_text="Body zone fortitude: wounds a zone takes before they cost Vitality.",
    )
    bzf_rolled = models.BooleanField(
        "BZF rolled", default=False, help_text="BZF came from 6+2d6 at creation, not weight."
    )
    yards_per_height = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(100)]
    )
    pending_raises = models.CharField(
        max_length=64,
        blank=True,
        validators=[RegexValidator(r"^((FOC|SPD|SKL|VGR|NRV|CHR|SVY)(,|$))*$")],
        help_text="Aptitudes bought with 3 Fate each (comma-separated), raised at the next rest.",
    )

    creation = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="How the wizard built it: aptitude method, the dice, whether the server rolled.",
    )
    version = models.PositiveIntegerField(default=1, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CharacterQuerySet.as_manager()

    class Meta:
        ordering = ["is_npc", "name", "pk"]
        constraints = [
            *(FieldRange(f, 1, 5, f"character_{f}_1_5") for f in APTITUDE_FIELDS),
            FieldRange("rsv", 1, 100, "character_rsv_1_100"),
            FieldRange("itv", 0, 100, "character_itv_0_100"),
            FieldRange("bzf", 1, 7_000, "character_bzf_positive"),
            FieldRange("yards_per_height", 1, 100, "character_yards_1_100"),
            FieldRange("vitality", 0, 1_000, "character_vitality_0_1000"),
            FieldRange("mana", 0, 1_000, "character_mana_not_negative"),
            FieldRange("chi", 0, 1_000, "character_chi_not_negative"),
            FieldRange("fate", 0, 1_000, "character_fate_not_negative"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("sheets:character_detail", args=[self.pk])

    def is_visible_to(self, user: AnyUser) -> bool:
        """What ``Character.objects.visible_to(user)`` says of this one character (its
        campaign selected), in one or two small queries instead of that query's subqueries:
        the GM sees it; a member of the campaign sees their own, and any other that is not
        secret (docs/security.md, "Who sees an NPC")."""
        if not user.is_authenticated:
            return False
        campaign = self.campaign
        if campaign.gm_id == user.pk:
            return True
        if not campaign.is_member(user):
            return False
        if self.owner_id == user.pk:
            return True
        if self.is_npc and not self.revealed:
            return False
        return not Character.objects.filter(_hidden_in_a_fight(), pk=self.pk).exists()

    def can_edit(self, user: AnyUser) -> bool:
        """The owner and the campaign's GM edit; other members only look."""
        return user.is_authenticated and (
            self.owner_id == user.pk or self.campaign.gm_id == user.pk
        )

    def maxima(self) -> omg.Derived | None:
        """The derived numbers (VIT, MNA, CHI maxima...), or None while an aptitude or the BZF
        is out of range (that field's own validation explains it)."""
        try:
            apts = omg.Aptitudes(**{f: getattr(self, f) for f in APTITUDE_FIELDS})
            return omg.derived(apts, bzf=self.bzf)
        except (RulesError, TypeError):
            return None

    def follow_weight(self) -> None:
        """BZF = weight / 14 (docs/rules.md, "Derived"), unless it was rolled at creation; the
        sheet, the API and a new sheet all call this when the weight changes."""
        if not self.weight or self.bzf_rolled:
            return
        if self.weight < 14:
            raise ValidationError(
                {"weight": "Under 14 lb the weight gives no BZF (weight / 14 is 0)."}
            )
        self.bzf = omg.bzf_from_weight(self.weight)

    def clamp_resources(self, *, keep: Collection[str] = ()) -> list[str]:
        """Lower current Vitality, Mana and Chi (except the fields in ``keep``) to their
        maxima, after an aptitude went down. Returns the fields it changed."""
        maxima = self.maxima()
        if maxima is None:
            return []
        changed = []
        for field, attr, _ in RESOURCE_MAXIMA:
            if field not in keep and getattr(self, field) > getattr(maxima, attr):
                setattr(self, field, getattr(maxima, attr))
                changed.append(field)
        return changed

    def clean_fields(self, exclude: Collection[str] | None = None) -> None:
        """Current Vitality, Mana and Chi never exceed their maxima. Checked here, per field,
        rather than in clean(): a form that edits only one field excludes the others, and
        their errors must not land on it."""
        errors: dict[str, list[str]] = {}
        try:
            super().clean_fields(exclude=exclude)
        except ValidationError as exc:
            errors = exc.message_dict
        maxima = self.maxima()
        for field, attr, name in RESOURCE_MAXIMA:
            if maxima is None or field in (exclude or ()) or field in errors:
                continue
            value, limit = getattr(self, field), getattr(maxima, attr)
            if isinstance(value, int) and value > limit:
                errors[field] = [f"Current {name} cannot exceed its maximum, {limit}."]
        if errors:
            raise ValidationError(errors)


class Discipline(ConstraintErrorsOnFields, models.Model):
    constraint_fields = {"discipline_unique_name": "name"}

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="disciplines")
    name = models.CharField(max_length=120)
    source = models.CharField(
        max_length=40,
        blank=True,
        help_text="The list it comes from: an archetype, a secondary list, or blank (custom).",
    )
    level = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(5)]
    )
    exp_marks = models.PositiveSmallIntegerField(
        "EXP", default=0, validators=[MaxValueValidator(omg.MAX_EXP_MARKS)]
    )
    aptitude = models.CharField(
        max_length=3,
        choices=APTITUDE_CHOICES,
        default="SKL",
        help_text="The aptitude usually paired with it, for the PRO shown on the sheet.",
    )

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="discipline_unique_name"),
            FieldRange("level", 1, 5, "discipline_level_1_5"),
            # What the daily rest accepts (rules.engine.omg.DisciplineState): more answered 500.
            FieldRange("exp_marks", 0, omg.MAX_EXP_MARKS, "discipline_exp_marks_0_1000"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.level}"


class Weapon(ConstraintErrorsOnFields, models.Model):
    constraint_fields = {"weapon_dmg_within_max": "dmg"}

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="weapons")
    name = models.CharField(max_length=120)
    category = models.CharField(max_length=4, choices=WEAPON_CATEGORY_CHOICES)
    dmg = models.PositiveSmallIntegerField(
        "DMG", default=1, validators=[MaxValueValidator(5)], help_text="Current DMG (0: broken)."
    )
    dmg_max = models.PositiveSmallIntegerField(
        "max DMG", default=1, validators=[MaxValueValidator(5)], help_text="DMG when repaired."
    )
    bonus = models.PositiveSmallIntegerField(
        "quality/magic bonus", default=0, validators=[MaxValueValidator(5)]
    )

    class Meta:
        ordering = ["pk"]
        constraints = [
            FieldRange("dmg", 0, 5, "weapon_dmg_0_5"),
            FieldRange("dmg_max", 0, 5, "weapon_dmg_max_0_5"),
            FieldRange("bonus", 0, 5, "weapon_bonus_0_5"),
            models.CheckConstraint(
                condition=Q(dmg__lte=models.F("dmg_max")),
                name="weapon_dmg_within_max",
                violation_error_message="DMG cannot be above the weapon's max DMG.",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class BodyZone(ConstraintErrorsOnFields, models.Model):
    constraint_fields = {"zone_arm_within_max": "arm", "zone_unique_name": "name"}

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="zones")
    name = models.CharField(max_length=40)
    position = models.PositiveSmallIntegerField(default=0)
    armor_type = models.CharField(max_length=40, blank=True, choices=ARMOR_CHOICES)
    arm = models.PositiveSmallIntegerField(
        "ARM", default=0, validators=[MaxValueValidator(5)], help_text="Current armor rating."
    )
    arm_max = models.PositiveSmallIntegerField(
        "max ARM", default=0, validators=[MaxValueValidator(5)]
    )
    arm_bonus = models.PositiveSmallIntegerField(
        "magic ARM", default=0, validators=[MaxValueValidator(5)]
    )
    wounds = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(10_000)])
    grievous = models.TextField("grievous wound", blank=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="zone_unique_name"),
            FieldRange("arm", 0, 5, "zone_arm_0_5"),
            FieldRange("arm_max", 0, 5, "zone_arm_max_0_5"),
            FieldRange("arm_bonus", 0, 5, "zone_arm_bonus_0_5"),
            FieldRange("wounds", 0, 10_000, "zone_wounds_bounded"),
            models.CheckConstraint(
                condition=Q(arm__lte=models.F("arm_max")),
                name="zone_arm_within_max",
                violation_error_message="ARM cannot be above the zone's max ARM.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.character} · {self.name}"

    def fill_armor(self, *, given: Collection[str] = ()) -> None:
        """Max ARM from the armor table for the zone's armor type (0 for none), and ARM equal to
        it (new armor is undamaged); a value in ``given`` was typed in and is kept."""
        if "arm_max" not in given:
            spec = ARMORS_BY_NAME.get(self.armor_type)
            self.arm_max = spec.arm if spec else 0
        if "arm" not in given:
            self.arm = self.arm_max


# --- Idempotent API writes (config/idempotency.py) ------------------------------------------


class IdempotencyRecord(models.Model):
    """One ``Idempotency-Key`` an API caller used, and the first response it got.

    The unique constraint on (caller, key) is what decides a race between two requests
    carrying the same key: the database lets exactly one insert through. ``status`` is null
    while that first request is still running.
    """

    caller = models.CharField(max_length=64, help_text="Whose key: 'user:<id>'.")
    key = models.CharField(max_length=255)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=2048)
    request_hash = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    content_type = models.CharField(max_length=255, blank=True)
    body = models.BinaryField(blank=True, default=b"")
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["caller", "key"], name="idempotency_key_per_caller")
        ]

    def __str__(self) -> str:
        return f"{self.caller} {self.key} ({self.status or 'in flight'})"


def attach_rows(characters: Collection[Character]) -> None:
    """Fill each character's disciplines, weapons and zones as
    ``prefetch_related("disciplines", "weapons", "zones")`` would (``character.zones.all()``
    then runs no query), in the same three queries but without a manager and a queryset
    clone per character and relation, which cost more than the queries themselves for a
    one-sheet page or a 20-participant fight."""
    by_pk = {c.pk: c for c in characters}
    for relation, model in (
        ("disciplines", Discipline),
        ("weapons", Weapon),
        ("zones", BodyZone),
    ):
        grouped: dict[int, list[models.Model]] = {pk: [] for pk in by_pk}
        for row in model._default_manager.filter(character_id__in=list(by_pk)):
            row._state.fields_cache["character"] = by_pk[row.character_id]
            grouped[row.character_id].append(row)
        for pk, character in by_pk.items():
            done: models.QuerySet[models.Model] = models.QuerySet(model)
            done._result_cache = grouped[pk]
            done._prefetch_done = True  # type: ignore[attr-defined]  # as prefetch_related sets it
            if not hasattr(character, "_prefetched_objects_cache"):
                character._prefetched_objects_cache = {}  # type: ignore[attr-defined]  # idem
            character._prefetched_objects_cache[relation] = done  # type: ignore[attr-defined]  # idem
