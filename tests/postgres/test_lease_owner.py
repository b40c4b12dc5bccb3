"""The lease table is never found through another role's objects (issue 60, finding 4).

Up to PostgreSQL 14 every role may create tables in ``public``. An application whose lease table
lives in its own schema, reaching the database with the default ``search_path`` (``"$user",
public``: no schema named after its role), found a ``public.shardid_leases`` another role made
first: that role's trigger ran as the application's role at every lease write, and zeroed the
ceilings (a new holder then starts at 0, below IDs already handed out). Now a lease names its
schema (``schema=``) in every statement, and reads the table's owner before its first write: a
table the lease's user does not own, directly or through a role it is a member of, is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import shardid
from shardid import InvalidArgumentError, postgres

LAYOUT = shardid.Layout.TWITTER
DATABASE = "lease_owner"


@pytest.fixture(scope="module")
def dsns(cluster: Any) -> Iterator[dict[str, str]]:
    """A database as PostgreSQL 14 made it (``CREATE`` on ``public`` for every role), the
    application's role ``lease_app`` with its schema ``app``, and another role,
    ``lease_other``, whose ``public.shardid_leases`` has a trigger that zeroes every ceiling
    written and notes that it ran."""
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {DATABASE}")
        admin.execute("CREATE ROLE lease_app LOGIN")
        admin.execute("CREATE ROLE lease_other LOGIN")
        admin.execute("CREATE ROLE lease_owners")
        admin.execute("GRANT lease_owners TO lease_app")
    base = cluster.dsn.replace("dbname=postgres", f"dbname={DATABASE}")
    dsn = {role: base.replace("user=postgres", f"user={role}") for role in ("lease_app", "lease_other")}
    dsn["node"] = f"postgresql://lease_app@127.0.0.1:{cluster.port}/{DATABASE}"  # pg takes URLs only
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")  # PostgreSQL <= 14's default
        admin.execute("CREATE SCHEMA app AUTHORIZATION lease_app")
        admin.execute("CREATE SCHEMA team AUTHORIZATION lease_owners")
    with psycopg.connect(dsn["lease_other"], autocommit=True) as other:
        other.execute(
            "CREATE TABLE public.shardid_leases (layout text NOT NULL, shard bigint NOT NULL, "
            "ceiling bigint NOT NULL DEFAULT 0, holder text, taken_at timestamptz, token text, "
            "expires_at timestamptz, tli integer, sysid bigint, PRIMARY KEY (layout, shard))"
        )
        other.execute("CREATE TABLE public.fired (at timestamptz DEFAULT now(), by text)")
        other.execute(
            "CREATE FUNCTION public.zero() RETURNS trigger LANGUAGE plpgsql AS "
            "$$BEGIN INSERT INTO public.fired (by) VALUES (current_user); NEW.ceiling := 0; RETURN NEW; END$$"
        )
        other.execute(
            "CREATE TRIGGER zero BEFORE INSERT OR UPDATE ON public.shardid_leases "
            "FOR EACH ROW EXECUTE FUNCTION public.zero()"
        )
        other.execute("GRANT ALL ON public.shardid_leases, public.fired TO PUBLIC")
    yield dsn


def fired(dsn: dict[str, str]) -> int:
    with psycopg.connect(dsn["lease_other"], autocommit=True) as other:
        return other.execute("SELECT count(*) FROM public.fired").fetchone()[0]  # type: ignore[index,no-any-return]


def test_a_lease_in_its_own_schema_never_touches_another_roles_table(dsns: dict[str, str]) -> None:
    app = dsns["lease_app"]
    with postgres.lease(LAYOUT, app, range(0, 1), schema="app") as first:
        ids = [first.next_id() for _ in range(1000)]
        assert first.schema == "app"
    with psycopg.connect(app, autocommit=True) as conn:
        ceiling = conn.execute("SELECT ceiling FROM app.shardid_leases WHERE shard = 0").fetchone()[0]  # type: ignore[index]
    # Its ceiling is above its IDs, and the next holder of the shard starts above it: the
    # other role's trigger never ran (before the fix the lease could not be told the schema,
    # and the search path gave it public.shardid_leases).
    assert ceiling >= LAYOUT.decode(max(ids)).timestamp_ms - LAYOUT.epoch_ms
    with postgres.lease(LAYOUT, app, range(0, 1), schema="app") as second:
        assert second.next_id() > max(ids)
    assert fired(dsns) == 0


def test_the_search_paths_table_of_another_role_is_refused_before_any_write(dsns: dict[str, str]) -> None:
    # No schema named: the search path finds public.shardid_leases, which lease_other owns.
    for kind in ("expiring", "session"):
        with pytest.raises(InvalidArgumentError) as info:
            postgres.lease(LAYOUT, dsns["lease_app"], range(0, 4), kind=kind)
        message = str(info.value)
        assert message.startswith(
            "table public.shardid_leases is owned by role lease_other, which the lease's user lease_app "
            "neither is nor is a member of: its triggers and rules would run as lease_app"
        ), message
        assert "lease_app" in message and info.value.argument == "table"
    # Named, too.
    with pytest.raises(InvalidArgumentError, match="^table public.shardid_leases is owned by role lease_other"):
        postgres.lease(LAYOUT, dsns["lease_app"], range(0, 4), schema="public")
    assert fired(dsns) == 0


def test_a_table_of_a_role_the_user_is_a_member_of_is_used(dsns: dict[str, str]) -> None:
    with psycopg.connect(dsns["lease_app"], autocommit=True) as conn:
        conn.execute("SET ROLE lease_owners")
        conn.execute(
            "CREATE TABLE team.shardid_leases (layout text NOT NULL, shard bigint NOT NULL, "
            "ceiling bigint NOT NULL DEFAULT 0, holder text, taken_at timestamptz, token text, "
            "expires_at timestamptz, tli integer, sysid bigint, PRIMARY KEY (layout, shard))"
        )
    with postgres.lease(LAYOUT, dsns["lease_app"], range(0, 1), schema="team") as held:
        assert held.next_id() > 0


def test_a_missing_table_is_made_in_the_schema_named(dsns: dict[str, str]) -> None:
    with postgres.lease(LAYOUT, dsns["lease_app"], range(0, 1), schema="app", table="made_here") as held:
        held.next_id()
    with psycopg.connect(dsns["lease_app"], autocommit=True) as conn:
        owner = conn.execute("SELECT tableowner FROM pg_tables WHERE schemaname = 'app' AND tablename = 'made_here'").fetchone()
        assert owner == ("lease_app",)
        assert conn.execute("SELECT to_regclass('public.made_here')").fetchone() == (None,)


def test_a_schema_name_is_checked_before_connecting() -> None:
    with pytest.raises(InvalidArgumentError, match="^schema is not a valid name: only a-z, 0-9 and _ are allowed"):
        postgres.lease(LAYOUT, "postgresql://127.0.0.1:1/x", range(0, 1), schema="app; drop table x")


def test_node_names_its_schema_and_refuses_another_roles_table(dsns: dict[str, str]) -> None:
    import json
    import subprocess
    from pathlib import Path

    script = Path(__file__).with_name("lease_node.mjs")
    done = subprocess.run(["node", str(script), dsns["node"], "owner"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["schema"] == "app" and out["id"] and out["badName"] == "INVALID_ARGUMENT"
    assert out["refused"].startswith(
        "INVALID_ARGUMENT table table public.shardid_leases is owned by role lease_other, which the lease's user lease_app"
    ), out["refused"]
    with psycopg.connect(dsns["lease_app"], autocommit=True) as conn:
        # The lease's row; the table's fence row (layout '', issue 54) is no lease's.
        assert conn.execute("SELECT count(*) FROM app.node_owned WHERE layout <> ''").fetchone() == (1,)
    assert fired(dsns) == 0


def test_a_ceiling_the_layout_cannot_hold_is_refused_not_wrapped(dsns: dict[str, str]) -> None:
    # Issue 60, finding 8: a row's ceiling of 2^63 - 1 wrapped in (units + 1) << sequence_bits,
    # and the lease started at the epoch's first IDs. Now the claim is refused, naming the row.
    app = dsns["lease_app"]
    with postgres.lease(LAYOUT, app, range(0, 1), schema="app", table="wrapped") as held:
        held.next_id()
    with psycopg.connect(app, autocommit=True) as conn:
        conn.execute("UPDATE app.wrapped SET ceiling = 9223372036854775807, token = NULL, expires_at = NULL")
    with pytest.raises(shardid.DatabaseError) as info:
        postgres.lease(LAYOUT, app, range(0, 1), schema="app", table="wrapped")
    assert str(info.value).startswith(
        "database: the row of shard 0 in lease table app.wrapped records a ceiling of 9223372036854775807 "
        "time units, outside what the layout's time can hold (0 to 2199023255551)"
    ), str(info.value)


def test_rust_names_its_schema_and_refuses_another_roles_table(dsns: dict[str, str]) -> None:
    from examples import run_example

    assert run_example("lease", dsns["lease_app"], "take", "rust_owned", "app") == {"code": "no error", "message": ""}
    refused = run_example("lease", dsns["lease_app"], "take", "shardid_leases")
    assert refused["code"] == "INVALID_ARGUMENT", refused
    assert refused["message"].startswith(
        "table public.shardid_leases is owned by role lease_other, which the lease's user lease_app"
    ), refused
    assert fired(dsns) == 0
