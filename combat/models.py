"""Encounters: who fights (participants), who strikes whom (declarations) and the append-only
combat log every change is written to.

The log is the source of truth for undo, Fate and the live feed: each entry carries the exact
before/after value of every field it changed (``payload["changes"]``), so undoing it is
writing the before values back in a new, compensating entry. History is never edited.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from combat import conditions as rules_of_conditions
from combat import outcome as outcomes
from rules.engine import omg
from sheets.models import BodyZone, Campaign, Character, Weapon, member_or_gm

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

_FATE_ROLL = re.compile(r"\b(re-rolls|revokes) roll \d+\.")

STRIKE_MODES = tuple(m.value for m in omg.StrikeMode)
MANEUVERS = tuple(m.value for m in omg.Maneuver)
DEFENSE_MODES = tuple(m.value for m in omg.DefenseMode)


class EncounterQuerySet(models.QuerySet["Encounter"]):
    def for_user(self, user: User | AnonymousUser) -> EncounterQuerySet:
        """Encounters of the campaigns the user runs or plays in."""
        return self.filter(member_or_gm(user, "campaign"))

    def active(self) -> EncounterQuerySet:
        return self.exclude(status=Encounter.Status.FINISHED)


class Encounter(models.Model):
    class Status(models.TextChoices):
        PREPARING = "preparing"
        RUNNING = "running"
        FINISHED = "finished"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="encounters")
    name = models.CharField(max_length=120)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PREPARING)
    round = models.PositiveSmallIntegerField(default=0)
    turn = models.ForeignKey(
        "Participant",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Whose turn it is.",
    )
    countering = models.BooleanField(
        default=False,
        help_text="The round's end is held for queued parry counterattacks.",
    )
    turn_seconds = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="The turn timer's seconds per turn (it only shows); empty: no timer.",
    )
    #: What the record of the fight keeps from the sheets (names, Vitality, zones, states),
    #: taken in the transaction that ends the fight and dropped if that end is undone: a
    #: record is history, and the sheets go on changing in later fights (combat/record.py).
    record = models.JSONField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = EncounterQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=Q(round__lte=10_000), name="encounter_round_bounded"),
            models.CheckConstraint(
                condition=Q(status__in=["preparing", "running", "finished"]),
                name="encounter_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("combat:encounter_detail", args=[self.pk])


class Participant(models.Model):
    class State(models.TextChoices):
        ACTIVE = "active"
        DOWN = "down", "down and dying"
        UNCONSCIOUS = "unconscious"
        OUT = "out", "out of the fight"

    encounter = models.ForeignKey(Encounter, on_delete=models.CASCADE, related_name="participants")
    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="combat_participants"
    )
    hidden = models.BooleanField(
        default=False, help_text="Players see the name only, never the numbers."
    )

    class HiddenShows(models.TextChoices):
        NOTHING = "nothing", "nothing"
        WORDS = "words", "its state in words"

    #: What players see of a hidden participant's wounds: nothing, or a word
    #: (combat/wound_words.py).
    hidden_shows = models.CharField(
        max_length=8, choices=HiddenShows.choices, default=HiddenShows.NOTHING
    )
    on_alert = models.BooleanField(default=False, help_text="Doubles ITV for this encounter.")
    itv = models.PositiveSmallIntegerField("ITV", null=True, blank=True)
    initiative = models.PositiveSmallIntegerField(null=True, blank=True)
    gm_order = models.PositiveSmallIntegerField(default=0, help_text="Breaks the last ties.")
    position = models.PositiveSmallIntegerField(default=0)
    state = models.CharField(max_length=12, choices=State.choices, default=State.ACTIVE)
    #: {"disarmed": {"by": participant id, "round": n, "ends": "round", "until": n + 1}, ...}:
    #: built-in names from omg.Condition, the GM's own under "gm:"; see combat/conditions.py.
    conditions = models.JSONField(default=dict, blank=True)
    counterattacks = models.PositiveSmallIntegerField(default=0)
    stamina_due = models.BooleanField(
        default=False, help_text="A grievous wound or a stun calls for a Stamina test."
    )

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["encounter", "character"], name="participant_once_per_encounter"
            ),
            models.CheckConstraint(condition=Q(itv__lte=100), name="participant_itv_0_100"),
            models.CheckConstraint(
                condition=Q(initiative__lte=200), name="participant_initiative_0_200"
            ),
            models.CheckConstraint(
                condition=Q(counterattacks__lte=100), name="participant_counterattacks_bounded"
            ),
            models.CheckConstraint(
                condition=Q(state__in=["active", "down", "unconscious", "out"]),
                name="participant_state_valid",
            ),
            models.CheckConstraint(
                condition=Q(hidden_shows__in=["nothing", "words"]),
                name="participant_hidden_shows_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.character.name

    @property
    def name(self) -> str:
        return self.character.name

    @property
    def busy(self) -> bool:
        """Disarmed: spends the round after the disarm retrieving the weapon
        (docs/rules.md, "Maneuvers" and "Disarm"). One turn is lost, not
        two: the rest of the disarm's own round is not spent, and the condition is gone when
        the round after that begins (docs/rules.md, "Conditions")."""
        return self.stopped_by == omg.Condition.DISARMED.value

    @property
    def stopped_by(self) -> str | None:
        """The condition that keeps this participant from acting now (stunned, disarmed in
        the round after the disarm), if one does."""
        return rules_of_conditions.stops_acting(self.conditions, self.encounter.round)

    @property
    def disarmed(self) -> bool:
        """No weapon in hand (combat/conditions.py, ``weapon_out_of_hand``)."""
        return rules_of_conditions.weapon_out_of_hand(self.conditions)

    @property
    def can_act(self) -> bool:
        return self.state == self.State.ACTIVE and self.stopped_by is None

    @property
    def can_defend(self) -> bool:
        """Unconscious, dying or out: no defense (docs/rules.md, "Conditions")."""
        return self.state == self.State.ACTIVE

    def shown_conditions(self) -> list[rules_of_conditions.Shown]:
        return rules_of_conditions.shown(self.conditions, self.encounter.round)

    def is_controlled_by(self, user: User | AnonymousUser) -> bool:
        """The character's player, or the GM (who runs every NPC)."""
        return user.is_authenticated and (
            self.character.owner_id == user.pk or self.encounter.campaign.gm_id == user.pk
        )

    def numbers_visible_to(self, user: User | AnonymousUser) -> bool:
        return not self.hidden or self.encounter.campaign.gm_id == user.pk


class Declaration(models.Model):
    """One attack or maneuver: declared by the attacker, defended by the target, resolved once."""

    class Status(models.TextChoices):
        PENDING = "pending", "awaiting the defense"
        DEFENDED = "defended", "ready to roll"
        RESOLVED = "resolved"
        CANCELLED = "cancelled"

    ACTION_CHOICES = [(m, f"{m} strike") for m in STRIKE_MODES] + [(m, m) for m in MANEUVERS]

    encounter = models.ForeignKey(Encounter, on_delete=models.CASCADE, related_name="declarations")
    round = models.PositiveSmallIntegerField(default=0)
    attacker = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="attacks")
    target = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="defenses")
    zone = models.ForeignKey(BodyZone, on_delete=models.CASCADE, null=True, blank=True)
    weapon = models.ForeignKey(
        Weapon,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        help_text="Empty: unarmed or improvised (DMG 0, no weapon discipline).",
    )
    action = models.CharField(max_length=10, choices=ACTION_CHOICES)
    defense = models.CharField(
        max_length=5, blank=True, choices=[(m, m) for m in DEFENSE_MODES], default=""
    )
    counterattack = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(attacker=models.F("target")), name="declaration_not_self"
            ),
            models.CheckConstraint(
                condition=Q(action__in=[*STRIKE_MODES, *MANEUVERS]), name="declaration_action_valid"
            ),
            models.CheckConstraint(
                condition=Q(defense__in=["", *DEFENSE_MODES]), name="declaration_defense_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "defended", "resolved", "cancelled"]),
                name="declaration_status_valid",
            ),
            # One open declaration per attacker: a double-click cannot queue two attacks.
            models.UniqueConstraint(
                fields=["attacker"],
                condition=Q(status__in=["pending", "defended"]),
                name="declaration_one_open_per_attacker",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.attacker} → {self.target} ({self.action})"

    @property
    def is_maneuver(self) -> bool:
        return self.action in MANEUVERS

    @property
    def needs_defense(self) -> bool:
        # A feint is resolved against FOC + Melee, not a declared defense (docs/rules.md).
        return self.action != omg.Maneuver.FEINT.value

    @property
    def is_open(self) -> bool:
        return self.status in (self.Status.PENDING, self.Status.DEFENDED)


class CombatLogQuerySet(models.QuerySet["CombatLogEntry"]):
    def update(self, **kwargs: Any) -> int:
        raise TypeError("The combat log is append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError("The combat log is append-only.")


class CombatLogEntry(models.Model):
    """One event of an encounter, never edited or deleted (undo appends a new entry).

    ``payload["changes"]`` lists ``{"model", "pk", "field", "before", "after"}`` in the order
    they were made; ``payload["text"]`` says it for the GM and ``payload["public_text"]`` for
    players when a hidden participant is involved (``payload["involves"]``). A roll's or a
    Stamina test's outcome is kept there too, and read as :attr:`outcome` (combat/outcome.py).
    The payload is read by key here and there only.
    """

    class Kind(models.TextChoices):
        CREATE = "create", "encounter created"
        JOIN = "join", "participant added"
        PARTICIPANT = "participant", "participant changed"
        START = "start", "encounter started"
        INITIATIVE = "initiative"
        TURN = "turn"
        DECLARE = "declare"
        DEFEND = "defend"
        CANCEL = "cancel"
        ROLL = "roll"
        STAMINA = "stamina", "Stamina test"
        FATE = "fate"
        UNDO = "undo"
        CONDITION = "condition", "condition changed"
        DAMAGE = "damage", "manual damage"
        HEAL = "heal"
        FINISH = "finish"
        TIMER = "timer", "turn timer"

    encounter = models.ForeignKey(Encounter, on_delete=models.CASCADE, related_name="log")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    participant = models.ForeignKey(
        Participant, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    declaration = models.ForeignKey(
        Declaration, on_delete=models.SET_NULL, null=True, blank=True, related_name="log"
    )
    payload = models.JSONField(default=dict)
    roll = models.PositiveSmallIntegerField(null=True, blank=True)
    physical = models.BooleanField(default=False, help_text="Typed in from dice at the table.")
    reverts = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="reverted_by"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CombatLogQuerySet.as_manager()

    class Meta:
        ordering = ["seq"]
        verbose_name_plural = "combat log entries"
        constraints = [
            models.UniqueConstraint(fields=["encounter", "seq"], name="log_seq_unique"),
            models.CheckConstraint(
                condition=Q(roll__isnull=True) | Q(roll__gte=1, roll__lte=100),
                name="log_roll_1_100",
            ),
            models.CheckConstraint(
                condition=Q(roll__isnull=False) | Q(physical=False),
                name="log_physical_needs_roll",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise TypeError("The combat log is append-only: entries are never changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError("The combat log is append-only: entries are never deleted.")

    @property
    def text(self) -> str:
        return str(self.payload.get("text", ""))

    @property
    def public_text(self) -> str:
        """What players read when a hidden participant is involved (the text itself when
        nobody hidden is)."""
        return str(self.payload.get("public_text", self.kind))

    @property
    def changes(self) -> list[dict[str, Any]]:
        return list(self.payload.get("changes", []))

    @property
    def involves(self) -> list[int]:
        """The participants involved, by id."""
        return list(self.payload.get("involves", []))

    @property
    def reroll_of(self) -> int | None:
        """The id of the roll a Fate re-roll replaced (None for any other entry)."""
        original = self.payload.get("reroll_of")
        return None if original is None else int(original)

    @functools.cached_property
    def outcome(self) -> outcomes.Outcome | None:
        """A roll's or a Stamina test's outcome (None for any other entry). Read once per
        entry object: an entry is never changed."""
        return outcomes.read(self.kind, self.payload)

    def hides_numbers(self, hidden_ids: set[int]) -> bool:
        """Does this entry involve a participant whose numbers the viewer may not see
        (``hidden_ids``, from combat.access.hidden_ids)? Then the viewer reads its public
        text only, without its roll, result or changes: the one rule of the log, for the
        pages, the API, the live feed, the record and the webhooks (docs/security.md)."""
        return bool(hidden_ids) and not hidden_ids.isdisjoint(self.involves)

    def text_for(self, user: User | AnonymousUser, hidden_ids: set[int]) -> str:
        """What ``user`` may read: the full text, or the public one when a participant hidden
        from them is involved."""
        if not self.hides_numbers(hidden_ids):
            return self.text
        # A Fate spend written before it had a public text of its own says the d100 it
        # re-rolled or revoked ("re-rolls roll 75"), and so does the undo of one.
        return _FATE_ROLL.sub(r"\1 the roll.", self.public_text)

    def roll_for(self, hidden_ids: set[int]) -> int | None:
        """The d100, unless the viewer may not see the numbers of the entry (the degree and
        the effect it has, in the public text, stay): it bounds the hidden side's PRO or
        DIF."""
        return None if self.hides_numbers(hidden_ids) else self.roll


class DisplayLink(models.Model):
    """A campaign's table display: a secret URL that shows its running fight as players see
    it, to whoever opens it, without logging in (combat/display.py). At most one per campaign:
    replacing it makes a new secret, revoking deletes it."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="display_link")
    #: The secret in the URL (random, never derived from ids); the GM's page shows it again.
    secret = models.CharField(max_length=64)
    #: SHA-256 of the secret, hex: what a request is looked up by (combat/display.py).
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"display of {self.campaign_id}"
