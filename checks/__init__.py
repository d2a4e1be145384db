"""Checks outside combat: aptitude, discipline and composite rolls from the sheet, the GM's
calls for checks, Mana and Chi spent and restored (docs/rules.md, "Checks outside combat")."""
