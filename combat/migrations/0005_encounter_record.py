"""The record of a finished fight keeps a snapshot of its participants (Encounter.record).

Fights finished before this migration are given one from the sheets as they stand when it
runs: the best that can be done, since what they were when the fight ended is not stored
(the log holds the changes, not the whole sheets). From then on they no longer change."""

from typing import Any

from django.db import migrations, models


def freeze_finished_fights(apps, schema_editor):
    # combat.record.snapshot reads model fields only, so it works on historical models.
    from combat.record import snapshot

    Encounter = apps.get_model("combat", "Encounter")
    BodyZone = apps.get_model("sheets", "BodyZone")
    finished = Encounter.objects.filter(status="finished", record__isnull=True)
    for encounter in finished.select_related("campaign").iterator(chunk_size=100):
        ps = list(encounter.participants.select_related("character").order_by("position", "pk"))
        zones: dict[Any, Any] = {}
        for z in BodyZone.objects.filter(character_id__in=[p.character_id for p in ps]).order_by(
            "position", "pk"
        ):
            zones.setdefault(z.character_id, []).append(z)
        Encounter.objects.filter(pk=encounter.pk).update(record=snapshot(encounter, ps, zones))


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0004_log_condition_kind"),
        ("sheets", "0009_character_fight_only"),
    ]

    operations = [
        migrations.AddField(
            model_name="encounter",
            name="record",
            field=models.JSONField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(freeze_finished_fights, migrations.RunPython.noop),
    ]
