"""PostgreSQL: the database makes and reads the same IDs as the application.

:func:`postgres` renders the DDL for one layout, shard and schema: ``<schema>.next_id()`` for
column defaults (unique however many sessions call it, unlike ``nextval() % 1024``) and
``IMMUTABLE`` decoding functions for indexes and time-range queries::

    >>> from shardid import Layout
    >>> from shardid.sql import postgres
    >>> ddl = postgres(Layout.INSTAGRAM, shard=5, schema="insta5")
    >>> "CREATE OR REPLACE FUNCTION insta5.next_id() RETURNS bigint" in ddl
    True

Install it with ``psql -1 -f``, or from a Django migration with
:class:`shardid.django.InstallPostgres`. Give the database a shard of its own: the
application's generators must use other shards.

From the command line::

    python -m shardid.sql --layout instagram --shard 5 --schema insta5 | psql -1 -f -

MySQL 8 and MariaDB: :func:`mysql` (and ``segments``/``dictionary`` with ``dialect="mysql"``)
render the same functions for them, ``schema`` naming the database; the scripts are for the
``mysql``/``mariadb`` command line (``DELIMITER``), and :func:`mysql_statements` splits one into
the statements a driver sends one at a time::

    python -m shardid.sql --dialect mysql --segments --schema seg | mariadb -u root

Business serials on MySQL and MariaDB keep their registrations in a table of their own:
:func:`mysql_serials` renders it, to run after the segments' DDL (``--dialect mysql --serials``);
the tags are registered by :func:`shardid.segments.create_serial`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from shardid._shardid import (
    Layout,
    create_serial_sql,
    dictionary,
    dictionary_uninstall,
    mysql,
    mysql_serials,
    mysql_statements,
    postgres,
    postgres_uninstall,
    public_ids_sql,
    public_ids_sql_uninstall,
    segments,
    segments_uninstall,
)

__all__ = [
    "create_serial_sql",
    "dictionary",
    "dictionary_uninstall",
    "mysql",
    "mysql_serials",
    "mysql_statements",
    "postgres",
    "postgres_uninstall",
    "public_ids_sql",
    "public_ids_sql_uninstall",
    "segments",
    "segments_uninstall",
]



def main(argv: Sequence[str] | None = None) -> int:
    """``python -m shardid.sql``: print the DDL for a preset or custom layout."""
    parser = argparse.ArgumentParser(
        prog="python -m shardid.sql",
        description="Print the DDL that makes and decodes shardid IDs in the database.",
    )
    parser.add_argument(
        "--dialect",
        choices=["postgres", "mysql", "mariadb", "sqlite"],
        default="postgres",
        help="the database: postgres (the default), mysql (MySQL 8, and MariaDB), mariadb (MariaDB, a Galera cluster named as one server; --schema names the database) or sqlite (--segments and --dictionary only; --schema main, or an attached database)",
    )
    parser.add_argument(
        "--layout", choices=[name.lower() for name in Layout.preset_names()], help="a preset layout"
    )
    parser.add_argument("--epoch-ms", type=int, help="custom layout: epoch, Unix ms")
    parser.add_argument("--unit-ms", type=int, help="custom layout: time unit in ms (default 1)")
    parser.add_argument(
        "--bits", metavar="TIME,SHARD,SEQUENCE", help="custom layout: field widths, e.g. 41,13,10"
    )
    parser.add_argument(
        "--order", help="custom layout: the order of the shard and sequence fields (default time_shard_sequence)"
    )
    parser.add_argument(
        "--segments",
        action="store_true",
        help="the DDL of dense IDs from segments (create_tag, take_segment, next_dense_id, give_back) instead",
    )
    parser.add_argument(
        "--dictionary",
        action="store_true",
        help="the DDL of the string <-> ID dictionary (create_topic, dict_id(s), dict_lookup, dict_value(s)) instead",
    )
    parser.add_argument(
        "--serial",
        metavar="TAG",
        help="the statement registering serial tag TAG (with --format and --zone) in a schema holding the segments' DDL",
    )
    parser.add_argument(
        "--serials",
        action="store_true",
        help="--dialect mysql or mariadb: the DDL of serial numbers' registrations, after --segments' (PostgreSQL's and SQLite's --segments holds them)",
    )
    parser.add_argument("--format", help="--serial: the format, e.g. 'ORD-{yyyy}{MM}{dd}-{seq:6}'")
    parser.add_argument("--zone", help="--serial: an IANA time zone, e.g. Asia/Shanghai")
    parser.add_argument("--max-gap", type=int, default=1, help="--serial: hide the volume with random steps of 1 to N")
    parser.add_argument("--servers", type=int, default=1, help="--segments: how many ticket servers (default 1)")
    parser.add_argument("--index", type=int, default=0, help="--segments: which server this is (0-based)")
    parser.add_argument("--shard", type=int, help="the database's shard (required for IDs made in the database)")
    parser.add_argument("--schema", required=True, help="schema for the functions, e.g. insta5")
    parser.add_argument("--backwards-tolerance-ms", type=int)
    parser.add_argument("--max-borrow-units", type=int)
    args = parser.parse_args(argv)
    try:
        if args.dictionary:
            sys.stdout.write(dictionary(args.schema, dialect=args.dialect))
            return 0
        if args.segments:
            sys.stdout.write(segments(args.schema, servers=args.servers, index=args.index, dialect=args.dialect))
            return 0
        if args.dialect == "sqlite":
            parser.error("--dialect sqlite: --segments or --dictionary (serials are registered by create_serial)")
        if args.serials:
            if args.dialect == "postgres":
                parser.error("--serials: --dialect mysql or mariadb (PostgreSQL's --segments holds the registrations)")
            sys.stdout.write(mysql_serials(args.schema))
            return 0
        if args.serial is not None and args.dialect != "postgres":
            parser.error(f"--serial: --dialect postgres (on {args.dialect}, create_serial registers a tag)")
        if args.serial is not None:
            if args.format is None or args.zone is None:
                parser.error("--serial needs --format and --zone")
            sys.stdout.write(
                create_serial_sql(args.serial, args.format, zone=args.zone, schema=args.schema, max_gap=args.max_gap)
            )
            return 0
        if args.shard is None:
            parser.error("--shard is required (or --segments, or --dictionary)")
        if args.layout is not None:
            if args.epoch_ms is not None or args.bits is not None:
                parser.error("give either --layout or a custom layout, not both")
            layout = Layout.preset(args.layout)
        else:
            if args.epoch_ms is None or args.bits is None:
                parser.error("give --layout, or --epoch-ms and --bits for a custom layout")
            try:
                time_bits, shard_bits, sequence_bits = (int(b) for b in args.bits.split(","))
            except ValueError:
                parser.error("--bits takes three integers, e.g. 41,13,10")
            layout = Layout(
                epoch_ms=args.epoch_ms,
                unit_ms=args.unit_ms,
                time_bits=time_bits,
                shard_bits=shard_bits,
                sequence_bits=sequence_bits,
                order=args.order,
            )
        tolerances = {"backwards_tolerance_ms": args.backwards_tolerance_ms, "max_borrow_units": args.max_borrow_units}
        if args.dialect == "postgres":
            ddl = postgres(layout, args.shard, args.schema, **tolerances)
        else:
            ddl = mysql(layout, args.shard, args.schema, **tolerances, dialect=args.dialect)
    except ValueError as e:
        print(f"python -m shardid.sql: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(ddl)
    return 0


if __name__ == "__main__":
    sys.exit(main())
