"""REST API for checks outside combat, with the pages' rules (the same access checks and
services): players roll and answer for their own characters, the GM for every one and alone
calls, reveals and undoes. Outsiders get 404, members who may not act 403, bad input 400
naming the field (nothing is stored), a table that moved on 409. A secret check reads as
``{"secret": true}`` without its roll, degree or effects to anyone but the GM.

- ``base``: a service's refusals as the API's, the documented errors, a path's id;
- ``bodies``: what each operation reads;
- ``shapes``: what each answers (its schema, and the one function that writes it);
- ``views``: the viewsets, and ``register`` (config/api_urls.py)."""

from __future__ import annotations

from checks.api.views import register

__all__ = ["register"]
