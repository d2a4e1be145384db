# The roll log moved from combat to rules: only Django's idea of the model moves; the table
# (combat_diceroll) was created by combat's 0002 and stays as it is.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("combat", "0002_dice_roll"),
        ("sheets", "0005_idempotency_record"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="DiceRoll",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "system",
                            models.CharField(
                                choices=[
                                    ("omg", "OMG"),
                                    ("ogs", "OGS"),
                                    ("okrpg", "OK RPG"),
                                    ("ore", "ORE"),
                                    ("sds", "Simple Die"),
                                ],
                                max_length=5,
                            ),
                        ),
                        (
                            "source",
                            models.CharField(
                                choices=[("page", "dice page"), ("api", "rules API")],
                                default="page",
                                max_length=4,
                            ),
                        ),
                        (
                            "physical",
                            models.BooleanField(
                                default=False,
                                help_text="The dice were thrown at the table and typed in.",
                            ),
                        ),
                        (
                            "note",
                            models.CharField(
                                blank=True,
                                help_text="What the roll was for, in the roller's words.",
                                max_length=80,
                            ),
                        ),
                        (
                            "inputs",
                            models.CharField(
                                help_text="Short account of what was rolled.", max_length=200
                            ),
                        ),
                        (
                            "outcome",
                            models.CharField(
                                help_text="Short account of what came up.", max_length=200
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "campaign",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="dice_rolls",
                                to="sheets.campaign",
                            ),
                        ),
                        (
                            "roller",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "combat_diceroll",
                        "ordering": ["-created_at", "-pk"],
                        "indexes": [
                            models.Index(fields=["campaign", "-created_at"], name="diceroll_recent")
                        ],
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("system__in", ["omg", "ogs", "okrpg", "ore", "sds"])
                                ),
                                name="diceroll_system_valid",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("source__in", ["page", "api"])),
                                name="diceroll_source_valid",
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
