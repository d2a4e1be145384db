"""Row reads of the strike path written once as SQL, instead of built by the ORM per request.

A declare, a defense and a roll each start with one statement that locks the encounter and
reads the rows the action checks, across five to seven tables. Built by the ORM, such a
statement cost more to compose than to run (issue 15's profiles: about 1 ms of query
building for a join of seven models, against well under 1 ms to run it on SQLite). Here the
statement's text is put together once per shape and database, from the models' own metadata
(so a new column is read without a change here), and each row is turned into model instances
with the same converters the ORM applies (``Model.from_db``).

A :class:`Read` names its tables (the first is FROM, the others JOIN on a condition), a WHERE
clause with ``%s`` parameters, and the aliases to lock: ``FOR UPDATE OF`` them, in that order,
where the database has row locks (PostgreSQL takes a statement's row locks in the order that
clause names them, and returns the newest version of every row it locked). SQLite has no row
locks: its writer lock is taken when the transaction begins (``transaction_mode``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connections, models

from combat.models import Declaration, Encounter, Participant
from sheets.models import BodyZone, Campaign, Character, Membership, Weapon

Converter = tuple[Callable[[Any, Any, Any], Any], Any]  # the function and its column


@dataclass(frozen=True)
class Table:
    alias: str
    model: type[models.Model]
    #: The JOIN's ON condition in SQL, naming aliases (None: the FROM table, or a CROSS
    #: JOIN whose conditions are in the WHERE clause).
    on: str | None = None


@dataclass(frozen=True)
class Read:
    tables: tuple[Table, ...]
    where: str
    lock: tuple[str, ...] = ()
    order: str = ""
    #: Extra SQL expressions selected after the tables' columns (named by the tuple's first).
    extra: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class _Compiled:
    sql: str
    #: Per table: its alias, model, attnames and each column's converters.
    tables: tuple[tuple[str, type[models.Model], tuple[str, ...], tuple[list[Converter], ...]], ...]
    extra: tuple[str, ...]


_CACHE: dict[tuple[str, Read], _Compiled] = {}


def _compile(read: Read, using: str) -> _Compiled:
    connection = connections[using]
    quote = connection.ops.quote_name
    columns: list[str] = []
    tables = []
    for table in read.tables:
        fields = table.model._meta.concrete_fields
        converters = []
        for f in fields:
            col = f.get_col(table.alias)
            converters.append(
                [
                    (convert, col)
                    for convert in (
                        *connection.ops.get_db_converters(col),
                        *col.get_db_converters(connection),
                    )
                ]
            )
        columns += [f"{quote(table.alias)}.{quote(f.column)}" for f in fields]
        tables.append(
            (table.alias, table.model, tuple(f.attname for f in fields), tuple(converters))
        )
    columns += [sql for _, sql in read.extra]
    first, *rest = read.tables
    # Names from the models' metadata and SQL written here; values only as parameters.
    frm = f"{quote(first.model._meta.db_table)} {quote(first.alias)}"
    sql = f"SELECT {', '.join(columns)} FROM {frm}"  # noqa: S608
    for table in rest:
        name = f"{quote(table.model._meta.db_table)} {quote(table.alias)}"
        sql += f" INNER JOIN {name} ON {table.on}" if table.on else f" CROSS JOIN {name}"
    sql += f" WHERE {read.where}"
    if read.order:
        sql += f" ORDER BY {read.order}"
    if read.lock and connection.features.has_select_for_update:
        sql += " FOR UPDATE"
        if connection.features.has_select_for_update_of:
            sql += " OF " + ", ".join(quote(alias) for alias in read.lock)
    return _Compiled(sql, tuple(tables), tuple(name for name, _ in read.extra))


def fetch(read: Read, params: Sequence[Any], using: str = "default") -> list[dict[str, Any]]:
    """The rows of ``read``, each a dict of alias -> model instance (and the extra
    expressions by name)."""
    connection = connections[using]
    key = (connection.vendor, read)
    compiled = _CACHE.get(key)
    if compiled is None:
        compiled = _CACHE[key] = _compile(read, using)
    with connection.cursor() as cursor:
        cursor.execute(compiled.sql, list(params))
        raw = cursor.fetchall()
    out = []
    for row in raw:
        at = 0
        item: dict[str, Any] = {}
        for alias, model, attnames, converters in compiled.tables:
            values = list(row[at : at + len(attnames)])
            for i, convs in enumerate(converters):
                for convert, col in convs:
                    values[i] = convert(values[i], col, connection)
            item[alias] = model.from_db(using, attnames, values)
            at += len(attnames)
        for name in compiled.extra:
            item[name] = row[at]
            at += 1
        out.append(item)
    return out


def column(model: type[models.Model], alias: str, name: str) -> str:
    """``alias.column`` of field ``name`` of ``model``, quoted, for a Read's conditions."""
    quote = connections["default"].ops.quote_name
    return f"{quote(alias)}.{quote(model._meta.get_field(name).column)}"  # type: ignore[union-attr]


def _on(
    model: type[models.Model], alias: str, name: str, other: type[models.Model], to: str
) -> Table:
    """``other`` joined as ``to`` on ``alias.name = to.id``."""
    return Table(to, other, f"{column(model, alias, name)} = {column(other, to, 'id')}")


def _member(encounter: str, campaign: str) -> str:
    """Campaign.objects.for_user's rule on an encounter (two ``%s``: the user's pk twice)."""
    gm = column(Campaign, campaign, "gm")
    of = column(Encounter, encounter, "campaign")
    m = Membership._meta.db_table
    return (
        f'({gm} = %s OR {of} IN (SELECT "m"."campaign_id" FROM "{m}" "m" WHERE "m"."user_id" = %s))'  # noqa: S608
    )


# --- The strike path's reads ------------------------------------------------------------------


@cache
def attack_read(visible: bool) -> Read:
    """A new declaration's first statement: the encounter and the two participants (``%s``:
    the encounter, the two participants' pks; with ``visible``, the user's pk twice), locked
    in that order, with the campaign, the characters and whether each has an attack open."""
    status = ", ".join(f"'{s}'" for s in (Declaration.Status.PENDING, Declaration.Status.DEFENDED))
    table = Declaration._meta.db_table
    attacker = column(Declaration, "o", "attacker")
    waiting = (
        f'EXISTS (SELECT 1 FROM "{table}" "o" WHERE {attacker} = {column(Participant, "p", "id")}'  # noqa: S608
    )
    waiting += f" AND {column(Declaration, 'o', 'status')} IN ({status}))"
    where = f"{column(Participant, 'p', 'encounter')} = %s"
    where += f" AND {column(Participant, 'p', 'id')} IN (%s, %s)"
    if visible:
        where += " AND " + _member("e", "c")
    return Read(
        tables=(
            Table("p", Participant),
            _on(Participant, "p", "encounter", Encounter, "e"),
            _on(Encounter, "e", "campaign", Campaign, "c"),
            _on(Participant, "p", "character", Character, "ch"),
        ),
        where=where,
        order=column(Participant, "p", "id"),
        lock=("e", "p"),
        extra=(("waiting", waiting),),
    )


@cache
def declared_read(visible: bool, in_encounter: bool) -> Read:
    """An action on a declaration, first statement: the encounter, the declaration and its
    two participants, locked in that order, with the campaign and both characters (``%s``:
    the declaration; with ``in_encounter`` its encounter; with ``visible`` the user's pk
    twice)."""
    where = f"{column(Declaration, 'd', 'id')} = %s"
    if in_encounter:
        where += f" AND {column(Declaration, 'd', 'encounter')} = %s"
    if visible:
        where += " AND " + _member("e", "c")
    return Read(
        tables=(
            Table("d", Declaration),
            _on(Declaration, "d", "encounter", Encounter, "e"),
            _on(Encounter, "e", "campaign", Campaign, "c"),
            _on(Declaration, "d", "attacker", Participant, "a"),
            _on(Participant, "a", "character", Character, "ac"),
            _on(Declaration, "d", "target", Participant, "t"),
            _on(Participant, "t", "character", Character, "tc"),
        ),
        where=where,
        lock=("e", "d", "a", "t"),
    )


@cache
def sheets_read(zone: bool, weapon: bool) -> Read:
    """A roll's second statement: two characters (``%s``: the lower pk, then the higher),
    then the zone and the weapon (their pks), locked in that order."""
    tables = [Table("lo", Character), Table("hi", Character)]
    where = [f"{column(Character, 'lo', 'id')} = %s", f"{column(Character, 'hi', 'id')} = %s"]
    if zone:
        tables.append(Table("z", BodyZone))
        where.append(f"{column(BodyZone, 'z', 'id')} = %s")
    if weapon:
        tables.append(Table("w", Weapon))
        where.append(f"{column(Weapon, 'w', 'id')} = %s")
    return Read(
        tables=tuple(tables), where=" AND ".join(where), lock=tuple(t.alias for t in tables)
    )
