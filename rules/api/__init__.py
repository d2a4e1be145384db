"""The public rules API under /api/rules/: one module per dice system, the shared view
behaviour in ``base``, fields in ``fields``, throttles in ``throttles``; routes in ``urls``."""
