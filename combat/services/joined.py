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
from sheets.models import BodyZone, Campaign, Character, Discipline, Membership, Weapon

Converter = tuple[Callable[[Any, Any, Any], Any], Any]  # the function and its column


@dataclass(frozen=True)
class Table:
    alias: str
    model: type[models.Model]
    #: The JOIN's ON condition in SQL, naming aliases (None: the FROM table, or a CROSS
    #: JOIN whose conditions are in the WHERE clause).
    on: str | None = None
    #: A LEFT JOIN: the table's row is None where nothing matched.
    left: bool = False


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
        if table.on is None:
            sql += f" CROSS JOIN {name}"
        else:
            sql += f" {'LEFT OUTER' if table.left else 'INNER'} JOIN {name} ON {table.on}"
    sql += f" WHERE {read.where}"
    if read.order:
        sql += f" ORDER BY {read.order}"
    if read.lock and connection.features.has_select_for_update:
        sql += " FOR UPDATE"
        if connection.features.has_select_for_update_of:
            sql += " OF " + ", ".join(quote(alias) for alias in read.lock)
    return _Compiled(sql, tuple(tables), tuple(name for name, _ in read.extra))


def fetch(read: Read, params: Sequence[Any], using: str = "default") -> list[dict[str, Any]]:
    """The rows of ``read``, each a dict of alias -> model instance (None for a LEFT JOIN
    that matched nothing) and the extra expressions by name. A row that comes back on
    several lines of a join (the same pk) is decoded once and shared."""
    connection = connections[using]
    key = (connection.vendor, read)
    compiled = _CACHE.get(key)
    if compiled is None:
        compiled = _CACHE[key] = _compile(read, using)
    with connection.cursor() as cursor:
        cursor.execute(compiled.sql, list(params))
        raw = cursor.fetchall()
    seen: dict[tuple[str, Any], models.Model] = {}
    out = []
    for row in raw:
        at = 0
        item: dict[str, Any] = {}
        for alias, model, attnames, converters in compiled.tables:
            pk = row[at]  # concrete_fields start with the pk on these models
            instance = seen.get((alias, pk))
            if instance is None and pk is not None:
                values = list(row[at : at + len(attnames)])
                for i, convs in enumerate(converters):
                    for convert, col in convs:
                        values[i] = convert(values[i], col, connection)
                instance = seen[alias, pk] = model.from_db(using, attnames, values)
            item[alias] = instance
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
def attack_read(visible: bool, zone: bool, weapon: bool, disciplines: bool) -> Read:
    """A new declaration's first statement. ``%s``: the encounter, the two participants'
    pks, then the zone's and the weapon's pks (those asked for), then with ``visible`` the
    user's pk twice.

    It locks the encounter, the two participants, the zone and the weapon, in that order,
    and reads with them the campaign, both characters, whether each participant has an
    attack open, and with ``disciplines`` the characters' disciplines (one line per
    discipline, unlocked: a declaration only shows odds with them)."""
    status = ", ".join(f"'{s}'" for s in (Declaration.Status.PENDING, Declaration.Status.DEFENDED))
    table = Declaration._meta.db_table
    attacker = column(Declaration, "o", "attacker")
    waiting = (
        f'EXISTS (SELECT 1 FROM "{table}" "o" WHERE {attacker} = {column(Participant, "p", "id")}'  # noqa: S608
    )
    waiting += f" AND {column(Declaration, 'o', 'status')} IN ({status}))"
    tables = [
        Table("p", Participant),
        _on(Participant, "p", "encounter", Encounter, "e"),
        _on(Encounter, "e", "campaign", Campaign, "c"),
        _on(Participant, "p", "character", Character, "ch"),
    ]
    where = f"{column(Participant, 'p', 'encounter')} = %s"
    where += f" AND {column(Participant, 'p', 'id')} IN (%s, %s)"
    lock = ["e", "p"]
    for wanted, model, alias in ((zone, BodyZone, "z"), (weapon, Weapon, "w")):
        if wanted:
            tables.append(Table(alias, model))
            where += f" AND {column(model, alias, 'id')} = %s"
            lock.append(alias)
    order = column(Participant, "p", "id")
    if disciplines:
        on = f"{column(Discipline, 'dl', 'character')} = {column(Participant, 'p', 'character')}"
        tables.append(Table("dl", Discipline, on, left=True))
        order += ", " + column(Discipline, "dl", "id")
    if visible:
        where += " AND " + _member("e", "c")
    return Read(
        tables=tuple(tables),
        where=where,
        order=order,
        lock=tuple(lock),
        extra=(("waiting", waiting),),
    )


@cache
def declared_read(visible: bool, in_encounter: bool, sheets: bool) -> Read:
    """An action on a declaration, first statement. ``%s``: the declaration; with
    ``in_encounter`` its encounter; with ``visible`` the user's pk twice.

    It locks the encounter, the declaration and its two participants, in that order, and
    reads the campaign and both characters with them: unlocked as ``ac`` and ``at``, or with
    ``sheets`` (a roll, which changes them) locked after the participants as ``lo`` and
    ``hi``, the lower pk first, whichever side each is on."""
    where = f"{column(Declaration, 'd', 'id')} = %s"
    if in_encounter:
        where += f" AND {column(Declaration, 'd', 'encounter')} = %s"
    if visible:
        where += " AND " + _member("e", "c")
    tables = [
        Table("d", Declaration),
        _on(Declaration, "d", "encounter", Encounter, "e"),
        _on(Encounter, "e", "campaign", Campaign, "c"),
        _on(Declaration, "d", "attacker", Participant, "a"),
        _on(Declaration, "d", "target", Participant, "t"),
    ]
    lock = ["e", "d", "a", "t"]
    if sheets:
        a, t = column(Participant, "a", "character"), column(Participant, "t", "character")
        for alias, cmp in (("lo", "<"), ("hi", ">")):
            pick = f"CASE WHEN {a} {cmp} {t} THEN {a} ELSE {t} END"
            tables.append(Table(alias, Character, f"{column(Character, alias, 'id')} = {pick}"))
            lock.append(alias)
    else:
        tables.append(_on(Participant, "a", "character", Character, "ac"))
        tables.append(_on(Participant, "t", "character", Character, "tc"))
    return Read(tables=tuple(tables), where=where, lock=tuple(lock))


@cache
def sheet_rows_read(zone: bool, weapon: bool) -> Read:
    """A roll's second statement, once both characters are locked: the zone and the weapon
    (``%s``: the two characters' pks, then the zone's and the weapon's, those asked for),
    locked in that order, and the two characters' disciplines, one line each (read, not
    locked: a discipline changes only under its character's lock, which this transaction
    holds)."""
    tables = [
        Table(alias, model)
        for wanted, model, alias in ((zone, BodyZone, "z"), (weapon, Weapon, "w"))
        if wanted
    ]
    of = column(Discipline, "dl", "character")
    if tables:
        tables.append(Table("dl", Discipline, f"{of} IN (%s, %s)", left=True))
        where = " AND ".join(f"{column(t.model, t.alias, 'id')} = %s" for t in tables[:-1])
    else:
        tables.append(Table("dl", Discipline))
        where = f"{of} IN (%s, %s)"
    lock = tuple(t.alias for t in tables if t.alias != "dl")
    return Read(tables=tuple(tables), where=where, order=column(Discipline, "dl", "id"), lock=lock)
