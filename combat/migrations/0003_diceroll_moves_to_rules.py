# The roll log moved to rules (rules/migrations/0001_initial.py): combat forgets the model, and
# the table stays for rules.DiceRoll.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0002_dice_roll"),
        ("rules", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="DiceRoll")],
            database_operations=[],
        ),
    ]
