"""The sheets app's pages: ``accounts`` (welcome, sign-up, dashboard, API tokens),
``campaigns`` and ``characters`` (the sheet and everything done on it)."""
