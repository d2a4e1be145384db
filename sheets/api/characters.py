"""REST API for character sheets: the whole sheet as one JSON document, with its computed
numbers, and the same permission rules as the pages."""

from __future__ import annotations

from typing import Any, cast

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import QuerySet, prefetch_related_objects
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from rules.engine import RulesError
from rules.engine.omg_data import APTITUDE_CHOICES
from sheets import fields, randomness, services
from sheets.api import shapes
from sheets.http import signed_in
from sheets.ids import ID_SCHEMA, parse_id
from sheets.models import BodyZone, Campaign, Character, Discipline, Weapon
from sheets.numbers import SheetNumbers, sheet_numbers
from sheets.refusals import Refused


class DisciplineSerializer(fields.StrictModelSerializer):
    class Meta:
        model = Discipline
        fields = ["id", "name", "source", "level", "exp_marks", "aptitude"]


class WeaponSerializer(fields.StrictModelSerializer):
    class Meta:
        model = Weapon
        fields = ["id", "name", "category", "dmg", "dmg_max", "bonus"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("dmg", 0) > attrs.get("dmg_max", 5):
            raise serializers.ValidationError({"dmg": ["DMG cannot exceed the weapon's max DMG."]})
        return attrs


class BodyZoneSerializer(fields.StrictModelSerializer):
    class Meta:
        model = BodyZone
        fields = [
            "id",
            "name",
            "position",
            "armor_type",
            "arm",
            "arm_max",
            "arm_bonus",
            "wounds",
            "grievous",
        ]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("arm", 0) > attrs.get("arm_max", 5):
            raise serializers.ValidationError({"arm": ["ARM cannot exceed the zone's max ARM."]})
        return attrs


# The sheet page's editable fields, plus three it sets through workflows of its own.
CHARACTER_FIELDS = [
    *services.EDITABLE_FIELDS["character"],
    "is_npc",
    "revealed",
    "bzf_rolled",
    "pending_raises",
]


_APTITUDE = "(FOC|SPD|SKL|VGR|NRV|CHR|SVY)"
# What the model's pattern accepts, but not the empty string: the schema of a blank-allowed
# pattern field is "oneOf: the pattern, or an empty string", and "" must match only one.
PENDING_RAISES_PATTERN = rf"^{_APTITUDE}(,{_APTITUDE})*,?$"

CREATION_METHODS = ("", "2d6", "7d6", "manual")
CREATION_KEYS = {"method", "dice", "server_rolled", "imported"}


def validate_creation_record(value: Any) -> dict[str, Any]:
    """The wizard's creation record as it comes back in an imported sheet: the aptitude method,
    its d6 (at most 14) and the flags; anything else is refused."""
    if not isinstance(value, dict):
        raise serializers.ValidationError("The creation record is an object (method, dice).")
    unknown = sorted(set(value) - CREATION_KEYS)
    if unknown:
        raise serializers.ValidationError(f"Unknown keys in the creation record: {unknown}.")
    if value.get("method", "") not in CREATION_METHODS:
        raise serializers.ValidationError("The creation method is 2d6, 7d6 or manual.")
    dice = value.get("dice", [])
    if (
        not isinstance(dice, list)
        or len(dice) > 14
        or any(isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6 for d in dice)
    ):
        raise serializers.ValidationError("The creation dice are at most 14 d6 (1 to 6).")
    for flag in ("server_rolled", "imported"):
        if not isinstance(value.get(flag, False), bool):
            raise serializers.ValidationError(f"{flag} is true or false.")
    return value


@extend_schema_field(shapes.CreationRecordSerializer)
class CreationField(serializers.JSONField):
    """The wizard's creation record: JSON, checked by ``validate_creation_record``."""


class CharacterSerializer(fields.StrictModelSerializer):
    campaign = fields.PrimaryKeyRelatedField(queryset=Campaign.objects.all())
    owner = serializers.CharField(source="owner.username", read_only=True)
    disciplines = DisciplineSerializer(many=True, required=False)
    weapons = WeaponSerializer(many=True, required=False)
    zones = BodyZoneSerializer(many=True, required=False)
    composites = serializers.SerializerMethodField()
    derived = serializers.SerializerMethodField()
    strikes = serializers.SerializerMethodField()
    defenses = serializers.SerializerMethodField()
    discipline_pro = serializers.SerializerMethodField()
    pending_raises = serializers.RegexField(
        PENDING_RAISES_PATTERN,
        max_length=64,
        allow_blank=True,
        required=False,
        help_text="Aptitudes bought with 3 Fate each (comma-separated), raised at the next rest.",
    )
    creation = CreationField(
        required=False,
        validators=[validate_creation_record],  # type: ignore[list-item]  # its return is unused
        help_text="How the wizard built it: aptitude method, the d6 and whether the server "
        "rolled them. Set only when a sheet is created (an import keeps it, marked imported).",
    )

    class Meta:
        model = Character
        fields = [
            "id",
            "campaign",
            "owner",
            *CHARACTER_FIELDS,
            "creation",
            "version",
            "disciplines",
            "weapons",
            "zones",
            "composites",
            "derived",
            "strikes",
            "defenses",
            "discipline_pro",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "version", "created_at", "updated_at"]

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        if self.instance is not None:
            # Raises are bought with Fate (buy-raise) and the creation record is the wizard's:
            # a new sheet (an import) brings its own, an existing one never takes them.
            fields["pending_raises"].read_only = True
            fields["creation"].read_only = True
        request = self.context.get("request")
        if request is not None and request.user.is_authenticated:
            fields["campaign"].queryset = Campaign.objects.for_user(request.user)  # type: ignore[attr-defined]  # a PrimaryKeyRelatedField
        return fields

    # The computed parts, all read only, from one rules computation per character.
    def _numbers(self, obj: Character) -> SheetNumbers:
        cache: dict[int, SheetNumbers] = self.context.setdefault("_numbers", {})  # type: ignore[attr-defined]  # a dict at runtime
        if obj.pk not in cache:
            cache[obj.pk] = sheet_numbers(obj)
        return cache[obj.pk]

    @extend_schema_field(shapes.CompositesSerializer)
    def get_composites(self, obj: Character) -> dict[str, Any]:
        rows = self._numbers(obj).composites
        return {r.abbr: {"value": r.value, "pro": r.pro, "dif": r.dif} for r in rows}

    @extend_schema_field(shapes.DerivedSerializer)
    def get_derived(self, obj: Character) -> dict[str, Any]:
        n = self._numbers(obj)
        d = n.derived
        return {
            "aptitudes": {
                r.abbr: {"value": r.value, "pro": r.pro, "dif": r.dif} for r in n.aptitudes
            },
            "vit": d.vit,
            "mna": d.mna,
            "chi": d.chi,
            "bzf": d.bzf,
            "enc": d.enc,
            "carry": d.carry,
            "lift": d.lift,
            "mov": d.mov,
            "weight_category": n.weight_category,
        }

    @extend_schema_field(shapes.StrikeLineSerializer(many=True))
    def get_strikes(self, obj: Character) -> list[dict[str, Any]]:
        return [
            {
                "weapon_id": r.weapon.pk,
                "weapon": r.weapon.name,
                "discipline": r.discipline,
                "level": r.level,
                **r.pro,
                "dmg": r.damage,
            }
            for r in self._numbers(obj).weapons
        ]

    @extend_schema_field(shapes.DefensesSerializer)
    def get_defenses(self, obj: Character) -> dict[str, int]:
        n = self._numbers(obj)
        return {**n.defenses, "melee": n.melee}

    @extend_schema_field(shapes.DISCIPLINE_PRO)
    def get_discipline_pro(self, obj: Character) -> dict[str, int]:
        return {r.discipline.name: r.pro for r in self._numbers(obj).disciplines}

    def validate_campaign(self, campaign: Campaign) -> Campaign:
        if self.instance is not None and campaign.pk != self.instance.campaign_id:
            raise serializers.ValidationError("A character cannot move to another campaign.")
        return campaign

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        request = self.context["request"]
        campaign = attrs.get("campaign") or (self.instance and self.instance.campaign)
        if attrs.get("is_npc") and campaign is not None and not campaign.is_gm(request.user):
            raise serializers.ValidationError({"is_npc": ["Only the GM creates NPCs."]})
        shown = self.instance.revealed if self.instance is not None else False
        if (
            attrs.get("revealed", shown) != shown
            and campaign is not None
            and not campaign.is_gm(request.user)
        ):
            raise serializers.ValidationError(
                {"revealed": ["Only the GM shows an NPC's sheet to the players."]}
            )
        for key in ("disciplines", "zones"):
            names = [row["name"] for row in attrs.get(key, [])]
            if len(names) != len(set(names)):
                raise serializers.ValidationError({key: "Each name may appear only once."})
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Character:
        rows = {k: validated_data.pop(k) for k in services.ROW_SETS if k in validated_data}
        if validated_data.get("creation"):
            # Not rolled by this server's wizard: the GM sees that the record came with the file.
            validated_data["creation"] = {**validated_data["creation"], "imported": True}
        # A serializer's error, not only the API's: the import page uses this serializer too.
        try:
            return services.write_character(
                user=self.context["request"].user, values=validated_data, rows=rows
            )
        except services.RowsRefused as exc:
            raise serializers.ValidationError(
                cast(Any, exc.errors)
            ) from None  # row indexes as keys

    def update(self, instance: Character, validated_data: dict[str, Any]) -> Character:
        rows = {k: validated_data.pop(k) for k in services.ROW_SETS if k in validated_data}
        # Inside the view's transaction, no savepoint: an error undoes that whole transaction.
        in_view_transaction = self.context.get("instance_locked", False)
        with transaction.atomic(savepoint=not in_view_transaction):
            try:
                # The view read it under the lock, in the transaction that holds it now.
                locked = services.write_character(
                    user=self.context["request"].user,
                    character=instance,
                    values=validated_data,
                    rows=rows,
                    version=self.context.get("expected_version"),
                    locked=in_view_transaction,
                )
            except Character.DoesNotExist:  # deleted by another request since the view read it
                raise NotFound(DELETED_MEANWHILE) from None
            except services.RowsRefused as exc:
                raise serializers.ValidationError(
                    cast(Any, exc.errors)
                ) from None  # row indexes as keys
            # The answer is the sheet as this transaction leaves it: the locked row, with its
            # rows read under the lock (the campaign and owner were read with it, or are read
            # again here when they changed).
            if locked is not instance:
                for relation in ("campaign", "owner"):
                    if getattr(locked, f"{relation}_id") == getattr(instance, f"{relation}_id"):
                        setattr(locked, relation, getattr(instance, relation))
            prefetch_related_objects([locked], "disciplines", "weapons", "zones")
        return locked


DELETED_MEANWHILE = "No such character: it was deleted meanwhile."


class CanEditCharacter(permissions.BasePermission):
    message = "Only the character's player and the campaign's GM can change it."

    def has_object_permission(self, request: Request, view: Any, obj: Character) -> bool:
        return request.method in permissions.SAFE_METHODS or obj.can_edit(request.user)


class RestResultSerializer(serializers.Serializer[Any]):
    raised = serializers.DictField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Disciplines that rose: name -> [old, new].",
    )
    aptitudes_raised = serializers.DictField(
        child=serializers.ListField(child=serializers.IntegerField())
    )
    exp_lost = serializers.IntegerField(help_text="EXP marks whose discipline was already at 5.")
    itv = serializers.IntegerField()
    itv_d10 = serializers.IntegerField()
    mna = serializers.IntegerField()
    chi = serializers.IntegerField()


class RaiseSerializer(fields.StrictSerializer):
    aptitude = serializers.ChoiceField(choices=APTITUDE_CHOICES)


class ReserveRollSerializer(fields.StrictSerializer):
    roll = fields.IntegerField(
        min_value=1, max_value=100, required=False, help_text="A physical d100 (100 for 00)."
    )


class ReserveCallSerializer(ReserveRollSerializer):
    keep_reserve = fields.BooleanField(
        help_text="true: use the RSV on the sheet and store the new roll as RSV."
    )


class ReserveResultSerializer(serializers.Serializer[Any]):
    used = serializers.IntegerField()
    rsv = serializers.IntegerField()


def rest_payload(result: Any) -> dict[str, Any]:
    return {
        "raised": {k: list(v) for k, v in result.raised.items()},
        "aptitudes_raised": {k: list(v) for k, v in result.aptitudes_raised.items()},
        "exp_lost": result.exp_lost,
        "itv": result.itv,
        "itv_d10": result.itv_d10,
        "mna": result.mna,
        "chi": result.chi,
    }


_REST_REFUSED = OpenApiResponse(
    description="The rules refuse a sheet's stored data (`detail` says what); nothing rested."
)


class CharacterWorkflowActions:
    """The advancement and reserve-roll workflows, as actions on /api/characters/{id}/."""

    get_object: Any
    get_serializer: Any

    @extend_schema(
        request=None,
        responses={200: RestResultSerializer, 400: _REST_REFUSED},
    )
    @action(detail=True, methods=["post"])
    def rest(self, request: Request, pk: str | None = None) -> Response:
        """The daily rest: EXP raises disciplines, bought aptitude raises apply, ITV is
        rerolled, Mana and Chi refill."""
        character = self.get_object()
        try:
            result = services.daily_rest(
                user=signed_in(request.user), character=character, rng=randomness.server_rng()
            )
        except RulesError as exc:
            raise Refused(f"No rest: {exc}") from exc
        return Response(rest_payload(result))

    @extend_schema(
        request=RaiseSerializer,
        responses={200: CharacterSerializer, 400: OpenApiResponse(description="Not enough Fate.")},
    )
    @action(detail=True, methods=["post"], url_path="buy-raise")
    def buy_raise(self, request: Request, pk: str | None = None) -> Response:
        """Spend 3 Fate for +1 on an aptitude at the next rest."""
        character = self.get_object()
        payload = RaiseSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            services.buy_aptitude_raise(
                user=signed_in(request.user),
                character=character,
                aptitude=payload.validated_data["aptitude"],
            )
        except RulesError as exc:
            raise serializers.ValidationError({"aptitude": [str(exc)]}) from exc
        fresh = Character.objects.with_sheet().get(pk=character.pk)
        return Response(self.get_serializer(fresh).data)

    @extend_schema(request=ReserveRollSerializer, responses={200: ReserveResultSerializer})
    @action(detail=True, methods=["post"], url_path="reserve/roll")
    def reserve_roll(self, request: Request, pk: str | None = None) -> Response:
        """Roll the RSV kept on the sheet (or record a physical roll)."""
        character = self.get_object()
        payload = ReserveRollSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        value = services.roll_reserve(
            user=signed_in(request.user),
            character=character,
            rng=randomness.server_rng(),
            roll=payload.validated_data.get("roll"),
        )
        return Response({"used": value, "rsv": value})

    @extend_schema(
        request=ReserveCallSerializer,
        responses={200: ReserveResultSerializer, 400: OpenApiResponse(description="No RSV yet.")},
    )
    @action(detail=True, methods=["post"], url_path="reserve/call")
    def reserve_call(self, request: Request, pk: str | None = None) -> Response:
        """Answer the GM's reserve-roll call: use the new roll or the RSV."""
        character = self.get_object()
        payload = ReserveCallSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            result = services.reserve_call(
                user=signed_in(request.user),
                character=character,
                keep_reserve=payload.validated_data["keep_reserve"],
                rng=randomness.server_rng(),
                roll=payload.validated_data.get("roll"),
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        return Response({"used": result.used, "rsv": result.rsv})


class VersionConflictSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()
    version = serializers.IntegerField(help_text="The sheet's version now.")


_CONFLICT = OpenApiResponse(
    VersionConflictSerializer, description="The sheet changed since the `version` you sent."
)


class CharacterUpdateSerializer(CharacterSerializer):
    """The body of a PUT or PATCH, as the schema shows it: the sheet, and the ``version`` it
    was read at. The view reads ``version`` itself (``get_serializer_context``) and answers
    409 when the sheet has moved on; this class only documents it."""

    version = fields.IntegerField(
        min_value=1,
        required=False,
        help_text="The version you read: a 409 if the sheet changed since. Left out, the "
        "write goes through whatever changed meanwhile.",
    )


#: What ``version`` in a PUT or PATCH must be, as CharacterUpdateSerializer documents it.
VERSION_FIELD = fields.IntegerField(
    min_value=1, error_messages={"invalid": "Send the version number you read."}
)


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(
                "campaign", ID_SCHEMA, description="Only the characters of this campaign."
            )
        ],
        responses={
            200: CharacterSerializer(many=True),
            400: OpenApiResponse(description="`campaign` is not a number."),
        },
    ),
    update=extend_schema(
        request=CharacterUpdateSerializer, responses={200: CharacterSerializer, 409: _CONFLICT}
    ),
    partial_update=extend_schema(
        request=CharacterUpdateSerializer, responses={200: CharacterSerializer, 409: _CONFLICT}
    ),
)
class CharacterViewSet(CharacterWorkflowActions, viewsets.ModelViewSet[Any]):
    """Character sheets in my campaigns. Players create their own characters, the GM also
    NPCs; the owner and the GM edit. PUT/PATCH accept `version` (the number read) and answer
    409 when the sheet changed since; nested rows, when sent, replace the existing ones.
    As on the sheet page: a new `weight` sets `bzf` (weight / 14) unless BZF was rolled or is
    changed in the same request; current `vitality`, `mana` and `chi` may not exceed their
    maxima (400), and a lower aptitude lowers them to the new maxima unless they are sent."""

    serializer_class = CharacterSerializer
    permission_classes = [permissions.IsAuthenticated, CanEditCharacter]
    #: Set by ``update`` inside its transaction. Not the request's method: OPTIONS describes
    #: the PUT by reading the sheet as a PUT (DRF's metadata), outside any transaction, where
    #: PostgreSQL refuses a lock.
    locking = False

    def get_queryset(self) -> QuerySet[Character]:
        queryset = Character.objects.visible_to(self.request.user)
        if self.locking:
            # The update runs in one transaction (``update``) and reads the sheet under its
            # lock here, once; the answer reads the rows after the write, so none are
            # prefetched now. Only the character's row is locked, not its campaign's or owner's.
            queryset = queryset.select_related("campaign", "owner").select_for_update(of=("self",))
        else:
            queryset = queryset.with_sheet()
        campaign = self.request.query_params.get("campaign")
        if campaign is not None:
            campaign_id = parse_id(campaign)
            if campaign_id is None:
                raise serializers.ValidationError({"campaign": ["Give a campaign id (a number)."]})
            queryset = queryset.filter(campaign_id=campaign_id)
        return queryset

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        data = self.request.data if hasattr(self.request, "data") else None
        if isinstance(data, dict) and "version" in data:
            # Read by the field the schema documents (CharacterUpdateSerializer): an integer
            # from 1, never null. Left out, the write goes through; sent as null it was taken
            # for left out, though the schema says integer.
            try:
                version = VERSION_FIELD.run_validation(data["version"])
            except serializers.ValidationError as exc:
                raise serializers.ValidationError({"version": exc.detail}) from None
            context["expected_version"] = version
        if self.locking:
            context["instance_locked"] = True
        return context

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # One transaction from the locked read (get_object) to the answer: the sheet is read
        # once, and no other edit lands between the read and the write. A sheet changed since
        # the ``version`` sent is a 409 that says the version now (services.VersionConflict).
        with transaction.atomic():
            self.locking = True
            self._lock_fights(request)
            instance = self.get_object()
            serializer = self.get_serializer(
                instance, data=request.data, partial=kwargs.get("partial", False)
            )
            serializer.is_valid(raise_exception=True)
            serializer.save()
            # DRF's own update forgets the instance's prefetched rows here; these are the
            # rows read after the write, which the answer shows.
            return Response(serializer.data)

    def _lock_fights(self, request: Request) -> None:
        """Zones or weapons sent replace the sheet's, and deleting them deletes or changes the
        attacks that point at them: the sheet's fights are locked first, as for any deletion
        (``services.lock_fights_of``). Only for a sheet the caller may see, and the body is
        read only then: a sheet one may not see answers 404 whatever the body's type."""
        pk = parse_id(str(self.kwargs.get("pk", "")))
        if pk is None or not Character.objects.visible_to(request.user).filter(pk=pk).exists():
            return
        data = request.data
        if isinstance(data, dict) and any(key in data for key in services.FIGHT_ROW_SETS):
            services.lock_fights_of(characters=[pk])

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            return super().create(request, *args, **kwargs)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc

    def perform_destroy(self, instance: Character) -> None:
        if not services.delete_character(user=signed_in(self.request.user), character=instance):
            raise NotFound(DELETED_MEANWHILE)

    def handle_exception(self, exc: Exception) -> Response:
        # Every write reads the sheet (get_object), then the service locks it again: a DELETE
        # committed in between leaves the locked read empty. The answer is the one a moment
        # later would get.
        if isinstance(exc, Character.DoesNotExist):
            exc = NotFound(DELETED_MEANWHILE)
        return super().handle_exception(exc)


class CharacterRowViewSet(viewsets.ModelViewSet[Any]):
    """Base for /api/characters/{character_pk}/<rows>/: the character's access rules apply
    (outsiders 404, only the owner and the GM write)."""

    kind = ""
    http_method_names = ["get", "post", "put", "patch", "delete"]
    lookup_value_regex = r"[0-9]+"  # anything else ('٧', read as 7 by int()) is no row id

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # The character first, before the body is read: a character that does not exist (or
        # an id no row can have) is the 404 of a missing id, not a 400 about the body.
        self._character(write=request.method not in permissions.SAFE_METHODS)

    def _character(self, *, write: bool) -> Character:
        pk = parse_id(str(self.kwargs["character_pk"]))
        character = (
            Character.objects.visible_to(self.request.user)
            .filter(pk=pk)  # type: ignore[misc]  # None (no id) matches no row: the 404 below
            .select_related("campaign")
            .first()
        )
        if character is None:
            raise NotFound("No such character.")
        if write and not character.can_edit(self.request.user):
            raise PermissionDenied("Only the character's player and the GM can change it.")
        return character

    def get_queryset(self) -> QuerySet[Any]:
        if getattr(self, "swagger_fake_view", False):
            return services.ROW_MODELS[self.kind]._default_manager.none()
        write = self.request.method not in permissions.SAFE_METHODS
        character = self._character(write=write)
        return services.ROW_MODELS[self.kind]._default_manager.filter(character=character)

    def perform_create(self, serializer: Any) -> None:
        character = self._character(write=True)
        try:
            row = services.add_row(
                user=signed_in(self.request.user),
                character=character,
                kind=self.kind,
                data=serializer.validated_data,
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        serializer.instance = row

    def perform_update(self, serializer: Any) -> None:
        row = serializer.instance
        try:
            serializer.instance = services.update_row(
                user=signed_in(self.request.user),
                character=row.character,
                kind=self.kind,
                row_id=row.pk,
                data=serializer.validated_data,
            )
        except ObjectDoesNotExist as exc:
            raise NotFound("That row or its character was deleted meanwhile.") from exc
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc

    def perform_destroy(self, instance: Any) -> None:
        services.delete_row(
            user=signed_in(self.request.user),
            character=instance.character,
            kind=self.kind,
            row_id=instance.pk,
        )


class DisciplineViewSet(CharacterRowViewSet):
    """A character's disciplines."""

    kind = "discipline"
    serializer_class = DisciplineSerializer


class WeaponViewSet(CharacterRowViewSet):
    """A character's weapons."""

    kind = "weapon"
    serializer_class = WeaponSerializer


class BodyZoneViewSet(CharacterRowViewSet):
    """A character's body zones with armor and wounds."""

    kind = "zone"
    serializer_class = BodyZoneSerializer
