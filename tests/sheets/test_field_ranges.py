"""FieldRange: the range constraints checked in Python by full_clean answer exactly as Django's
own check, which asks the database, at every bound of every range, and a refused value is still
refused by the table itself."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction

from sheets.models import FieldRange
from sheets.services import create_character
from tests.factories import make_campaign, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

RANGES = [
    (model, constraint)
    for model in apps.get_models()
    for constraint in model._meta.constraints
    if isinstance(constraint, FieldRange)
]


def _answer(check: Any, model: type[models.Model], instance: models.Model) -> str:
    try:
        check(model, instance)
    except ValidationError as exc:
        return f"refused: {exc.messages}"
    return "ok"


def test_every_model_range_is_one() -> None:
    # The sheets' models keep their columns in range with FieldRange (about twenty of them).
    assert len(RANGES) >= 20, RANGES


@pytest.mark.parametrize(("model", "constraint"), RANGES, ids=lambda v: getattr(v, "name", ""))
def test_python_and_database_agree_at_each_bound(
    model: type[models.Model], constraint: FieldRange
) -> None:
    high = constraint.high if constraint.high is not None else constraint.low + 10
    for value in (constraint.low - 1, constraint.low, high, high + 1, None):
        instance = model(**{constraint.field: value})
        ours = _answer(constraint.validate, model, instance)
        django = _answer(
            lambda m, i: models.CheckConstraint.validate(constraint, m, i), model, instance
        )
        assert ours == django, (constraint.name, value)
        if value is not None and constraint.high is not None:
            assert (ours == "ok") == (constraint.low <= value <= constraint.high)


def test_a_field_left_out_of_the_clean_is_not_checked() -> None:
    model, constraint = RANGES[0]
    instance = model(**{constraint.field: constraint.low - 1})
    constraint.validate(model, instance, exclude={constraint.field})
    with pytest.raises(ValidationError):
        constraint.validate(model, instance)


def test_the_table_still_refuses_a_value_out_of_range() -> None:
    gm = make_user()
    character = create_character(campaign=make_campaign(gm), owner=gm, name="Edge")
    with pytest.raises(IntegrityError), transaction.atomic():
        type(character).objects.filter(pk=character.pk).update(foc=6)


def test_migrations_see_a_plain_check_constraint() -> None:
    _, constraint = RANGES[0]
    path, _, kwargs = constraint.deconstruct()
    assert path == "django.db.models.CheckConstraint"
    assert set(kwargs) == {"condition", "name"}
    assert constraint.clone() == constraint and isinstance(constraint.clone(), FieldRange)
