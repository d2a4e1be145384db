"""The sheets app's REST API: ``campaigns`` (joining, players, the join code, rest) and
``characters`` (the sheet with its disciplines, weapons and zones)."""
