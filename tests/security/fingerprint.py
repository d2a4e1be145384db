"""Every row of every table in one query: the authorization matrix's proof that a request
changed nothing.

``pages.snapshot()`` reads each model's rows into Python (one query per model) and sorts them;
the matrix takes two per cell, about 3,000 cells, so that was most of its time. Here the
database itself writes each table's rows out as one text, sorted, in a single statement per
snapshot: the same rows are compared, byte for byte, at a fraction of the cost. The
many-to-many link tables, which ``apps.get_models()`` leaves out, are in too.
"""

from __future__ import annotations

from functools import cache

from django.apps import apps
from django.db import connection

#: Written by every logged-in request (the session, the list of who is logged in with which).
IGNORED = ("sessions.Session", "sheets.LoginSession")


@cache
def _tables() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(label, table, columns) of every table the models own, each table once."""
    found: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        if meta.proxy or not meta.managed or meta.label in IGNORED or meta.db_table in found:
            continue
        columns = tuple(field.column for field in meta.local_concrete_fields)
        found[meta.db_table] = (meta.label, meta.db_table, columns)
    return tuple(sorted(found.values()))


def _rows_as_text(table: str, columns: tuple[str, ...]) -> str:
    """A scalar subquery: the table's rows, one line each, sorted, as one text. The names
    come from the models' metadata, quoted; there are no values in the statement."""
    q = connection.ops.quote_name
    if connection.vendor == "postgresql":
        # A whole row as text is PostgreSQL's own record literal: every column, quoted.
        rows = "string_agg(r::text, chr(10) ORDER BY r::text)"
        return f"(SELECT coalesce({rows}, '') FROM {q(table)} r)"  # noqa: S608
    # SQLite: quote() writes each value as its SQL literal (strings quoted, blobs in hex).
    line = " || ',' || ".join(f"quote({q(c)})" for c in columns)
    rows = f"SELECT {line} AS line FROM {q(table)} ORDER BY 1"  # noqa: S608
    return f"(SELECT coalesce(group_concat(line, char(10)), '') FROM ({rows}))"  # noqa: S608


def fingerprint() -> dict[str, str]:
    """label -> every row of its table as text, read in one query."""
    tables = _tables()
    if connection.vendor not in ("postgresql", "sqlite"):
        raise NotImplementedError(connection.vendor)
    sql = "SELECT " + ", ".join(_rows_as_text(table, cols) for _, table, cols in tables)
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return {label: text for (label, _, _), text in zip(tables, row, strict=True)}


def changed_tables(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(label for label in after if before.get(label) != after[label])
