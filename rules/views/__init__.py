"""The dice pages under /dice/: one module per system (its form and its
:class:`~rules.views.base.Tool`), the shared helpers in ``base``, the views themselves in
``pages``."""
