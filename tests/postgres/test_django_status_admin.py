"""shardid's admin section (``"shardid.django"`` in INSTALLED_APPS, shardid.django.admin): the
leases, tags and topics of a project on PostgreSQL, read-only, with the figures of ``shardid
status`` (shardid.status). Django's test client: the rows, the permissions (a user who is not
staff is sent to the login, staff without the view permission get 403), no write views, a
feature whose tables are absent; headless Chromium on runserver: the admin's real login form,
the index's links to the section, a screenshot of each page with its rows read from the page."""

from __future__ import annotations

import json
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
from django_server import runserver

from shardid import Layout
from shardid.dictionary import Dictionary
from shardid.postgres import lease
from shardid.segments import DenseIds
from django_project import database, django_run, status_project

ROOT = Path(__file__).resolve().parents[2]


def run(project: Path, *args: str) -> str:
    return django_run(project, *args).stdout


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its IHDR chunk (the first, right after the signature)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", head
    return struct.unpack(">II", head[16:24])


# The Django side, in the project's own process: the test client through the admin's login,
# the pages' HTML and context, the permissions, the URLs that must not exist, and the queries
# each page sends (Django's own connection carries the status API's statements).
CHECK = """
import django, json, sys
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()  # the test client records each page's context
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape  # "> 1,000" is "&gt; 1,000" in the page

expected = json.loads(sys.argv[1])
out = {}

admin = User.objects.create_superuser("admin", "a@example.com", "pw")
c = Client()
assert c.login(username="admin", password="pw")

index = c.get("/admin/").content.decode()
for model in ("lease", "tag", "topic"):
    assert f'href="/admin/shardid/{model}/"' in index, index
    assert f"/admin/shardid/{model}/add/" not in index, "an add link"

pages = {}
for model in ("lease", "tag", "topic"):
    with CaptureQueriesContext(connection) as queries:
        page = c.get(f"/admin/shardid/{model}/")
    assert page.status_code == 200, (model, page.status_code, page.content[:2000])
    html = page.content.decode()
    pages[model] = {"html": html, "queries": len(queries), "sections": [
        {"where": s.where, "columns": s.columns, "rows": s.rows, "problem": s.problem} for s in page.context["sections"]
    ], "layouts": page.context["layouts"]}
    for row in expected[model]:
        for cell in row:
            assert f"<td>{escape(cell)}</td>" in html, (model, cell, html[html.find("<table"):][:3000])
    assert "<form" not in html.split('id="content-main"', 1)[1], "a form on a read-only page"
out["pages"] = pages

# No write views: their URLs do not exist, and the change list takes no POST.
for url in ("/admin/shardid/lease/add/", "/admin/shardid/lease/0/change/", "/admin/shardid/tag/orders/change/",
            "/admin/shardid/tag/orders/delete/", "/admin/shardid/topic/colors/history/", "/admin/shardid/topic/colors/"):
    assert c.get(url).status_code == 404, url
assert c.post("/admin/shardid/tag/", {"action": "delete_selected"}).status_code == 405

# Not staff: sent to the login page. Staff without the permission: 403. With "Can view lease":
# the lease page only, and the index lists only it.
plain = User.objects.create_user("plain", password="pw")
p = Client(); p.login(username="plain", password="pw")
for model in ("lease", "tag", "topic"):
    r = p.get(f"/admin/shardid/{model}/")
    assert r.status_code == 302 and r.url.startswith("/admin/login/"), (model, r.status_code)
anonymous = Client().get("/admin/shardid/lease/")
assert anonymous.status_code == 302 and anonymous.url.startswith("/admin/login/")
staff = User.objects.create_user("staff", password="pw", is_staff=True)
s = Client(); s.login(username="staff", password="pw")
for model in ("lease", "tag", "topic"):
    assert s.get(f"/admin/shardid/{model}/").status_code == 403, model
staff.user_permissions.add(Permission.objects.get(codename="view_lease", content_type__app_label="shardid"))
assert s.get("/admin/shardid/lease/").status_code == 200
assert s.get("/admin/shardid/tag/").status_code == 403
staff_index = s.get("/admin/").content.decode()
assert 'href="/admin/shardid/lease/"' in staff_index and 'href="/admin/shardid/tag/"' not in staff_index
# The only permissions the section makes: "Can view" (nothing here adds, changes or deletes).
out["permissions"] = sorted(Permission.objects.filter(content_type__app_label="shardid").values_list("codename", flat=True))
print(json.dumps(out))
"""

# The same pages after more tags are made: the number of statements a page sends.
QUERIES = """
import django, json
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()  # the test client records each page's context
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

c = Client()
c.force_login(User.objects.get(username="admin"))
out = {}
for model in ("lease", "tag", "topic"):
    with CaptureQueriesContext(connection) as queries:
        page = c.get(f"/admin/shardid/{model}/")
    assert page.status_code == 200
    out[model] = {"queries": len(queries), "rows": sum(len(s.rows) for s in page.context["sections"]),
                  "problems": [s.problem for s in page.context["sections"] if s.problem],
                  "layouts": page.context["layouts"], "html": page.content.decode()}
print(json.dumps(out))
"""


def _project(tmp_path: Path, port: int, name: str) -> Path:
    status_project(tmp_path, database("postgresql", port, name), "seg", "dict")
    return tmp_path


def test_the_admin_section_shows_leases_tags_and_topics(cluster: Any, tmp_path: Path) -> None:
    from shardid import status

    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute("CREATE DATABASE django_status")
    project = _project(tmp_path, cluster.port, "django_status")
    run(project, "-m", "django", "migrate")
    assert run(project, "-m", "django", "makemigrations", "--check", "--dry-run").strip() == "No changes detected"
    dsn = f"host=127.0.0.1 port={cluster.port} user=postgres dbname=django_status"

    # A lease held (this process's, on the project's table), two tags with numbers taken from
    # one, and a topic with three strings.
    with lease(Layout.INSTAGRAM, dsn, range(0, 64)) as held:
        held.next_id()
        orders = DenseIds(dsn, "orders", schema="seg")
        taken = [orders.next_id() for _ in range(5)]
        colors = Dictionary(dsn, "colors")
        assert colors.ids(["red", "green", "blue"]) == [0, 1, 2]
        truth = status.read(dsn, layout=Layout.INSTAGRAM)  # what `shardid status` reads
        assert truth.leases.present and truth.tags.present and truth.topics.present

        (mine,) = [r for r in truth.leases.rows if r.holder is not None]
        assert mine.shard == held.shard and mine.state == "held"
        tags = {t.tag: t for t in truth.tags.rows}
        assert sorted(tags) == ["invoices", "orders"] and tags["orders"].next > max(taken)
        (topic,) = truth.topics.rows
        assert (topic.topic, topic.strings, topic.last_id) == ("colors", 3, 2)
        expected = {
            "lease": [[str(mine.shard), mine.layout, "held", mine.holder, f"{mine.since:%Y-%m-%dT%H:%M:%S}.{mine.since.microsecond // 1000:03d}Z"]],
            # Years left as a person reads them: a tag that took 5 numbers has billions of years
            # left, shown capped ("> 1,000", as `shardid status` shows it), not 17536621477.6.
            "tag": [[t.tag, str(t.next), str(t.segment), f"{t.per_second:.3f}", {"invoices": "never", "orders": "> 1,000"}[t.tag]]
                    for t in truth.tags.rows],
            "topic": [["colors", "3", "2", "no"]],
        }
        seen = json.loads(run(project, "-c", CHECK, json.dumps(expected)).strip().splitlines()[-1])
        assert seen["permissions"] == ["view_lease", "view_tag", "view_topic"], seen["permissions"]
        pages = seen["pages"]
        assert [len(s["rows"]) for s in pages["tag"]["sections"]] == [2]
        assert pages["tag"]["sections"][0]["where"] == "database 'default', schema seg: seg.shardid_tags"
        assert [s["rows"] for s in pages["topic"]["sections"]] == [[["colors", "3", "2", "no"]]]
        for model in ("lease", "tag", "topic"):
            layouts = pages[model]["layouts"]
            assert layouts["warning"] is False and layouts["lines"][0].startswith("Layout instagram runs out on 2046-06-27T"), layouts

        # The browser: the admin's login form, the index's links, each page's rows as shown.
        shots = ROOT / "target" / "browser"
        shots.mkdir(parents=True, exist_ok=True)
        with runserver(project, "--insecure") as base:  # DEBUG is off: serve static files
            done = subprocess.run(
                ["node", str(ROOT / "tests/browser/django_status_admin.mjs"), base, "admin", "pw", str(shots)],
                capture_output=True, text=True, timeout=90,
            )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        browser = json.loads(done.stdout.strip().splitlines()[-1])
        assert browser["errors"] == [] and browser["failed"] == [], browser
        assert browser["index"]["caption"].lower() == "shardid" and browser["index"]["models"] == ["Leases", "Tags", "Topics"], browser["index"]
        assert browser["index"]["addLinks"] == 0, browser["index"]
        for model, rows in expected.items():
            shown = browser["pages"][model]
            assert shown["forms"] == 0 and shown["title"].startswith(f"{model.capitalize()}s |"), shown
            cells = [cell for section in shown["sections"] for row in section["rows"] for cell in row]
            for row in rows:
                assert all(cell in cells for cell in row), (model, row, shown["sections"])
            # The screenshot: a PNG of the whole page as Chromium drew it (not read back as
            # text: what the rows say is read from the page above), at the page's size.
            shot = Path(shown["shot"])
            width, height = png_size(shot)
            assert (width, height) == tuple(shown["viewport"]), (width, height, shown["viewport"])
            assert width >= 800 and 200 <= height <= 4000 and shot.stat().st_size > 10_000, (width, height, shot.stat().st_size)
        lease_page = browser["pages"]["lease"]["sections"][0]
        assert lease_page["columns"][:4] == ["Shard", "Layout", "State", "Holder"], lease_page
        assert [str(mine.shard), "instagram", "held", mine.holder] in [row[:4] for row in lease_page["rows"]], lease_page

        # No N+1: 30 tags more, and each page sends as many statements as before.
        with psycopg.connect(dsn, autocommit=True) as conn:
            for i in range(30):
                conn.execute("SELECT seg.create_tag(%s)", (f"more{i}",))
        again = json.loads(run(project, "-c", QUERIES).strip().splitlines()[-1])
        assert again["tag"]["rows"] == 32
        for model in ("lease", "tag", "topic"):
            assert again[model]["queries"] == pages[model]["queries"], (model, again, pages[model]["queries"])
        orders.close()
        colors.close()

    # A feature whose tables are absent: its page says it is not installed.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA dict CASCADE")
    after = json.loads(run(project, "-c", QUERIES).strip().splitlines()[-1])
    assert after["topic"]["rows"] == 0 and after["topic"]["problems"] == ["not installed: the database has no table dict.shardid_topics"], after
    assert after["tag"]["rows"] == 32 and after["lease"]["problems"] == []

    # A layout running out within five years: every page says so, as a warning, with the date
    # the status API reports (the same rule as shardid.W002).
    year_ms = 31_556_952_000
    soon = Layout(epoch_ms=int(time.time() * 1000) + 4 * year_ms - 2**40 + 1, time_bits=40, shard_bits=12, sequence_bits=10)
    with (project / "settings.py").open("a") as f:
        f.write(f"SHARDID = {{'layout': {{'epoch_ms': {soon.epoch_ms}, 'time_bits': 40, 'shard_bits': 12, 'sequence_bits': 10}}, 'lease': {{'shards': [0, 64]}}}}\n")
    warned = json.loads(run(project, "-c", QUERIES).strip().splitlines()[-1])
    truth = status.read(dsn, layout=soon)
    (custom,) = [l for l in truth.layouts if l.name == "custom"]
    assert custom.warning and soon.runs_out_soon()
    for model in ("lease", "tag", "topic"):
        layouts = warned[model]["layouts"]
        assert layouts["warning"] is True, layouts
        line = f"Layout custom runs out on {custom.runs_out:%Y-%m-%dT%H:%M:%S}.{custom.runs_out.microsecond // 1000:03d}Z, in 4.0 years."
        assert line in layouts["lines"] and any("runs out" in w for w in truth.warnings), (layouts, truth.warnings)
        assert 'class="errorlist"' in warned[model]["html"] and line in warned[model]["html"]
