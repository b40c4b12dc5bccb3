"""``manage.py shardid_restored``: the command line's ``shardid restored`` for a Django project
on PostgreSQL, MySQL, MariaDB or SQLite. After restoring a backup the database cannot tell from
its own state (on PostgreSQL a dump restored into the same cluster with ``pg_restore --clean``,
a base backup copied back; on a Galera cluster a node bootstrapped from an old backup; a SQLite
file copied back), it marks every tag, serial period and dictionary topic restored, in the
schemas the project's migrations install segments and the dictionary in (``seg`` and ``dict``
when none does; on SQLite the file's own, ``main``), so the next take of each skips what its
rate could have handed out; then it prints the status. Promotions, point-in-time recovery and
dumps restored into another cluster or server need no such step."""

from __future__ import annotations

import os
import sys
from itertools import zip_longest
from typing import Any
from urllib.parse import quote

from django.core.management.base import BaseCommand, CommandError

# The libpq parameters of Django's connection that name where and who.
_KEYS = ("host", "port", "dbname", "user", "password", "sslmode", "sslrootcert", "sslcert", "sslkey", "options")


def _quoted(value: Any) -> str:
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _mysql_url(alias: str, settings: dict[str, Any]) -> str:
    """The ``mysql://`` URL of Django's settings of a MySQL or MariaDB database (TCP only)."""
    host = str(settings.get("HOST") or "127.0.0.1")
    if host.startswith("/"):
        raise CommandError(f"shardid_restored: the database {alias!r} is reached through a socket ({host}): run `shardid restored mysql://...` with its TCP address")
    user = quote(str(settings.get("USER") or "root"), safe="")
    password = settings.get("PASSWORD")
    login = f"{user}:{quote(str(password), safe='')}" if password else user
    port = settings.get("PORT") or 3306
    return f"mysql://{login}@{host}:{port}/{quote(str(settings.get('NAME') or ''), safe='')}"


def _after_options(options: dict[str, Any]) -> list[str]:
    """The command line's ``--after``, ``--after-topic`` and ``--margin`` from the command's."""
    out = [x for value in options.get("after") or [] for x in ("--after", value)]
    out += [x for value in options.get("after_topic") or [] for x in ("--after-topic", value)]
    if options.get("margin") is not None:
        out += ["--margin", str(options["margin"])]
    return out


class Command(BaseCommand):
    """Marks the rows of the database ``--database`` names (``default``) restored, then prints
    the status; refused, with a ``CommandError``, on a database other than PostgreSQL, MySQL,
    MariaDB or a SQLite file."""

    help = "Marks every shardid tag, serial period and topic restored (after restoring a backup): the next take of each skips."

    def add_arguments(self, parser: Any) -> None:
        """``--database ALIAS``: which of the project's databases (``default``); ``--after
        NAME=LAST``, ``--after-topic TOPIC=ID`` and ``--margin N``: the command line's (the last
        number of a tag, the last serial of a serial tag, the last ID of a topic, known to the
        operator: the next starts right past it plus the margin, not by the rate)."""
        parser.add_argument("--database", default="default", help="the database alias (default: default)")
        parser.add_argument(
            "--after", action="append", default=[], metavar="NAME=LAST",
            help="a tag's last number or a serial's last text handed out: the next starts right past it (repeatable)",
        )  # fmt: skip
        parser.add_argument(
            "--after-topic", action="append", default=[], metavar="TOPIC=ID",
            help="a topic's last ID: the next starts right past it (repeatable)",
        )  # fmt: skip
        parser.add_argument("--margin", type=int, default=None, help="how far past each --after (default 0)")

    def handle(self, *args: Any, **options: Any) -> None:
        """Marks every schema the migrations install segments and the dictionary in, through the
        command line's ``shardid restored`` over Django's own connection parameters."""
        from django.db import connections

        from shardid.django.status import _migration_schemas

        connection = connections[options["database"]]
        if connection.vendor == "postgresql":
            params = connection.get_connection_params()
            target = " ".join(f"{k}={_quoted(params[k])}" for k in _KEYS if params.get(k) not in (None, ""))
        elif connection.vendor == "mysql":
            target = _mysql_url(options["database"], connection.settings_dict)
        elif connection.vendor == "sqlite":
            # The file itself (its tables are in `main`, whatever the migrations name).
            name = str(connection.settings_dict.get("NAME") or "")
            if not name or name == ":memory:" or name.startswith("file:"):
                raise CommandError(f"shardid_restored: the database {options['database']!r} is in memory: nothing to mark")
            target = f"sqlite:///{os.path.abspath(name)}"
            self._mark(target, options["database"], ["main"], ["main"], _after_options(options))
            return
        else:
            raise CommandError(
                f"shardid_restored: PostgreSQL, MySQL, MariaDB or SQLite only (the database {options['database']!r} is "
                f"{connection.vendor}, where shardid keeps no rows)"
            )
        segments, dictionaries = _migration_schemas()
        self._mark(target, options["database"], segments or ["seg"], dictionaries or ["dict"], _after_options(options))

    def _mark(self, target: str, using: str, segments: list[str], dictionaries: list[str], after: list[str]) -> None:
        """``shardid restored`` on ``target`` (the database alias ``using``) for each schema the
        migrations install segments and the dictionary in; the ``--after`` options (``after``)
        with the first of them only (the tags and topics they name are made where missing: in
        one schema). The lease table is marked where the project's lease keeps it, in the schema
        ``SHARDID["lease"]["schema"]`` names when the lease is kept in this database (else where
        a lease with no schema finds it): the fence the project's leases read."""
        from shardid.django.status import places
        from shardid.status import main

        where = places()
        schema = where["lease_schema"] if where["lease"] == using else None
        lease = ["--lease-schema", schema] if isinstance(schema, str) else []

        # Marking is idempotent (a mark is cleared by the one skip it causes), so a schema named
        # twice below is marked once in effect.
        for i, (seg, dic) in enumerate(zip_longest(segments, dictionaries, fillvalue=None)):
            stdout, stderr, code = main(
                ["restored", target, "--segments-schema", seg or segments[0], "--dictionary-schema", dic or dictionaries[0],
                 *lease, *(after if i == 0 else [])]
            )  # fmt: skip
            self.stdout.write(stdout, ending="")
            if code:
                sys.stderr.write(stderr)
                raise CommandError(f"shardid_restored: exit status {code}")
