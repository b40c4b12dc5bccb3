"""shardid's admin section on MariaDB (Django's MySQL backend over PyMySQL): the leases, tags and
topics pages list the rows the status API reads (``shardid status``), over Django's own
connection, and a dictionary whose tables are absent is "not installed". The browser and the
permissions are tested once, on PostgreSQL (tests/postgres/test_django_status_admin.py): the
pages are the same Django views."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shardid import Layout
from django_project import database, django_run, status_project

pytest.importorskip("django")

PAGES = """
import django, json
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()  # the test client records each page's context
from django.contrib.auth.models import User
from django.test import Client

if not User.objects.filter(username="admin").exists():
    User.objects.create_superuser("admin", "a@example.com", "pw")
c = Client()
c.force_login(User.objects.get(username="admin"))
out = {}
for model in ("lease", "tag", "topic"):
    page = c.get(f"/admin/shardid/{model}/")
    assert page.status_code == 200, (model, page.status_code, page.content[:2000])
    out[model] = {"html": page.content.decode(), "sections": [
        {"where": s.where, "rows": s.rows, "problem": s.problem} for s in page.context["sections"]
    ], "layouts": page.context["layouts"]}
print(json.dumps(out))
"""


def run(project: Path, *args: str) -> str:
    return django_run(project, *args).stdout


def test_the_admin_section_on_mariadb(server: Any, conn: Any, tmp_path: Path) -> None:
    from shardid import status
    from shardid.dictionary import Dictionary
    from shardid.mysql import lease
    from shardid.segments import DenseIds

    conn.cursor().execute("CREATE DATABASE django_admin_status")
    status_project(tmp_path, database("mysql", server.port, "django_admin_status"), "adm_seg", "adm_dict")
    run(tmp_path, "-m", "django", "migrate")

    url = f"mysql://root@127.0.0.1:{server.port}/django_admin_status"
    with lease(Layout.INSTAGRAM, url, range(0, 64)) as held:
        held.next_id()
        orders = DenseIds(url, "orders", schema="adm_seg")
        taken = [orders.next_id() for _ in range(3)]
        colors = Dictionary(url, "colors", schema="adm_dict")
        assert colors.ids(["red", "green"]) == [0, 1]
        truth = status.read(url, segments_schema="adm_seg", dictionary_schema="adm_dict", layout=Layout.INSTAGRAM)
        pages = json.loads(run(tmp_path, "-c", PAGES).strip().splitlines()[-1])
        orders.close()
        colors.close()

    (mine,) = [r for r in truth.leases.rows if r.holder is not None]
    assert mine.shard == held.shard
    lease_rows = [row for s in pages["lease"]["sections"] for row in s["rows"]]
    assert [str(mine.shard), "instagram", "held", mine.holder] in [row[:4] for row in lease_rows], lease_rows
    tags = {row[0]: row for s in pages["tag"]["sections"] for row in s["rows"]}
    assert sorted(tags) == ["invoices", "orders"], tags
    for t in truth.tags.rows:
        assert tags[t.tag][1:3] == [str(t.next), str(t.segment)], (t, tags)
    assert int(tags["orders"][1]) > max(taken)
    assert pages["topic"]["sections"][0]["rows"] == [["colors", "2", "1", "no"]], pages["topic"]
    assert "<td>colors</td>" in pages["topic"]["html"] and f"<td>{mine.holder}</td>" in pages["lease"]["html"]
    assert pages["tag"]["layouts"]["warning"] is False

    # The dictionary's tables gone: its page says so, the others still list their rows.
    conn.cursor().execute("DROP DATABASE adm_dict")
    after = json.loads(run(tmp_path, "-c", PAGES).strip().splitlines()[-1])
    assert [s["problem"] for s in after["topic"]["sections"]] == ["not installed: the database has no table adm_dict.shardid_topics"], after["topic"]
    assert len(after["tag"]["sections"][0]["rows"]) == 2
