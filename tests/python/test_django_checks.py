"""settings.SHARDID is checked at start-up (Django's system checks, `manage.py check`), each
problem naming the key and the fix, and the generator refuses the same settings with
ImproperlyConfigured."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("django")

from conftest import django_project  # noqa: E402
from shardid import Layout  # noqa: E402
from shardid.django import config_problems  # noqa: E402

GOOD = [
    None,  # the default: Instagram's layout, a shard per process leased through the database
    {},
    {"layout": "instagram"},
    {"layout": "twitter", "lease": {"shards": [0, 64]}},
    {"lease": {"using": "default"}},
    {"lease": {"using": "default", "schema": "app"}},  # the lease table's schema (issue 60)
    {"lease": {"directory": "/tmp/x"}},
    {"layout": "instagram", "shard": 5},
    {"layout": "TWITTER", "shard": 1023},
    {"lease": {"directory": "/tmp/x", "shards": [0, 64]}},
    {"layout": "instagram", "lease": {"directory": Path("/tmp/x"), "shards": range(0, 64)}},
    {"layout": Layout.SONYFLAKE, "shard": 0, "backwards_tolerance_ms": 0, "max_borrow_units": 2},
    {"layout": {"epoch_ms": 1_600_000_000_000, "time_bits": 41, "shard_bits": 12, "sequence_bits": 10}, "shard": 7},
]

BAD: list[tuple[Any, str]] = [
    ("instagram", "SHARDID must be a dict"),
    ({"layout": "instagram", "shard": 1, "lease": {"directory": "/tmp", "shards": [0, 2]}}, "has both 'shard' and 'lease'"),
    ({"layout": "instagam", "shard": 1}, "SHARDID['layout'] must be one of"),
    ({"layout": "discord", "shard": 1}, "unsigned 64-bit IDs"),
    ({"layout": {"bits": (41, 13, 10), "nope": 1}, "shard": 1}, "SHARDID['layout']"),
    ({"layout": "instagram", "shards": 5}, "SHARDID['shards'] is not a setting"),
    ({"layout": "instagram", "shard": -1}, "SHARDID['shard'] must be an int in 0..=8191"),
    ({"layout": "instagram", "shard": 8192}, "SHARDID['shard'] must be an int in 0..=8191"),
    ({"layout": "instagram", "shard": "5"}, "SHARDID['shard'] must be an int"),
    ({"layout": "instagram", "shard": True}, "SHARDID['shard'] must be an int"),
    ({"layout": "instagram", "shard": 5.0}, "SHARDID['shard'] must be an int"),
    ({"layout": "instagram", "lease": "/tmp"}, "SHARDID['lease'] must be a dict"),
    ({"layout": "instagram", "lease": {"directory": None, "shards": [0, 4]}}, "SHARDID['lease']['directory'] must be a path"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "shards": 64}}, "SHARDID['lease']['shards'] must be [first, end]"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "using": "default"}}, "has both 'directory' and 'using'"),
    ({"layout": "instagram", "lease": {"using": 5}}, "SHARDID['lease']['using'] must be a database alias"),
    ({"layout": "instagram", "lease": {"schema": 5}}, "SHARDID['lease']['schema'] must be a schema's name"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "schema": "app"}}, "['schema'] is a setting of a lease kept in a database"),
    # The default lease is kept in a database the project has, of a kind that can keep it.
    ({"layout": "instagram"}, "leases shards through the database 'default', which settings.DATABASES does not have"),
    ({"lease": {"using": "oracle"}}, "shardid keeps leases only in PostgreSQL, MySQL, MariaDB or SQLite, not oracle"),
    ({"layout": "instagram", "shards": [0, 4]}, "SHARDID['shards'] is not a setting"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "shards": [0, 0]}}, "is empty or outside"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "shards": range(0, 0)}}, "is empty or outside"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "shards": [0, 9000]}}, "is empty or outside"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "shards": [0, 4, 8]}}, "must be [first, end]"),
    ({"layout": "instagram", "lease": {"directory": "/tmp", "shards": [0, 4], "dir": 1}}, "['dir'] is not a setting of a lease"),
    ({"layout": "instagram", "lease": {"shards": [0, 4], "database": "default"}}, "['database'] is not a setting of a lease"),
    ({"layout": "instagram", "shard": 1, "backwards_tolerance_ms": -5}, "SHARDID['backwards_tolerance_ms'] must be an int >= 0"),
    ({"layout": "instagram", "shard": 1, "max_borrow_units": "2"}, "SHARDID['max_borrow_units'] must be an int >= 0"),
]


@pytest.mark.parametrize("config", GOOD, ids=repr)
def test_good_settings_have_no_problem(config: Any) -> None:
    assert config_problems(config, DATABASES) == []
    assert config_problems(config, {"default": "sqlite"}) == []
    # Django's MySQL backend (MySQL and MariaDB) keeps the default lease too.
    assert config_problems(config, {"default": "mysql"}) == []


# The project's databases, as config_problems sees them: alias -> vendor.
DATABASES = {"default": "postgresql", "mysql": "mysql", "oracle": "oracle"}


@pytest.mark.parametrize(("config", "says"), BAD, ids=[repr(c)[:60] for c, _ in BAD])
def test_each_bad_setting_is_named_with_a_fix(config: Any, says: str) -> None:
    databases = {"other": "postgresql"} if "does not have" in says else DATABASES
    problems = config_problems(config, databases)
    assert problems, config
    text = " / ".join(f"settings.{key} {problem}" for key, problem, _ in problems)
    assert says in text, text
    assert all(fix for _, _, fix in problems)


MODELS = "from django.db import models\nfrom shardid.django import ShardIdField\n\nclass Note(models.Model):\n    id = ShardIdField(primary_key=True)\n"


def test_manage_py_check_reports_a_bad_setting_at_start_up(tmp_path: Path) -> None:
    project = django_project(tmp_path, MODELS, "SHARDID = {'layout': 'instagram', 'shards': 5}")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "shardid.E001" in done.stderr and "settings.SHARDID['shards'] is not a setting of shardid" in done.stderr, done.stderr
    assert "HINT:" in done.stderr
    # The generator refuses it too, with the same words, as ImproperlyConfigured.
    code = (
        "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'settings'; django.setup()\n"
        "from django.core.exceptions import ImproperlyConfigured\nfrom shardid.django import next_id\n"
        "try:\n    next_id()\nexcept ImproperlyConfigured as e:\n    print('ImproperlyConfigured', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True).stdout
    assert out.startswith("ImproperlyConfigured settings.SHARDID['shards'] is not a setting of shardid"), out


def test_a_fixed_shard_is_warned_about_unless_silenced(tmp_path: Path) -> None:
    project = django_project(tmp_path, MODELS, "SHARDID = {'layout': 'instagram', 'shard': 5}")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 0  # a warning: the project still starts
    assert "shardid.W001" in done.stderr and "the same shard" in done.stderr, done.stderr
    with (project / "settings.py").open("a") as f:
        f.write("SILENCED_SYSTEM_CHECKS = ['shardid.W001']\n")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def test_manage_py_check_passes_a_good_setting(tmp_path: Path) -> None:
    project = django_project(tmp_path, MODELS, "SHARDID = {'layout': 'instagram', 'lease': {'directory': BASE_DIR / 'shards', 'shards': range(0, 8)}}")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout


INSTALL = """
from django.db import migrations
from shardid.django import InstallPostgres

class Migration(migrations.Migration):
    operations = [InstallPostgres(layout="instagram", shard={shard}, schema="insta")]
"""


@pytest.mark.parametrize(
    ("setting", "shard", "clash"),
    [
        ("SHARDID = {'layout': 'instagram'}", 5, True),  # the default lease takes 0..8190
        ("SHARDID = {'layout': 'instagram'}", 8191, False),  # the last shard is left free
        ("SHARDID = {'lease': {'shards': [0, 64]}}", 64, False),
        ("SHARDID = {'lease': {'shards': [0, 64]}}", 63, True),
        ("SHARDID = {'layout': 'instagram', 'shard': 7}\nSILENCED_SYSTEM_CHECKS = ['shardid.W001']", 7, True),
    ],
)
def test_a_database_shard_the_processes_can_take_is_an_error(tmp_path: Path, setting: str, shard: int, clash: bool) -> None:
    project = django_project(tmp_path, MODELS, setting)
    (project / "notes" / "migrations").mkdir()
    (project / "notes" / "migrations" / "__init__.py").write_text("")
    (project / "notes" / "migrations" / "0001_shardid.py").write_text(INSTALL.format(shard=shard))
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False)
    if clash:
        assert done.returncode != 0
        assert "shardid.E002" in done.stderr and f"migration notes.0001_shardid installs the database's next_id() on shard {shard}" in done.stderr, done.stderr
        assert "such as 8191" in done.stderr
    else:
        assert (done.returncode, done.stderr) == (0, ""), done.stderr


INSTALL_LAYOUT = """
from django.db import migrations
from shardid.django import InstallPostgres

class Migration(migrations.Migration):
    operations = [InstallPostgres(layout={layout!r}, shard=1000, schema="insta")]
"""


@pytest.mark.parametrize(
    ("setting", "installed", "clash"),
    [
        ("SHARDID = {'layout': 'twitter', 'lease': {'shards': [0, 64]}}", "instagram", True),  # issue 36: passed `check`
        ("SHARDID = {'lease': {'shards': [0, 64]}}", "twitter", True),  # no layout set: Instagram's
        ("SHARDID = {'layout': 'INSTAGRAM', 'lease': {'shards': [0, 64]}}", "instagram", False),
        ("SHARDID = {'layout': {'epoch_ms': 1314220021721, 'time_bits': 41, 'shard_bits': 13, 'sequence_bits': 10}, 'lease': {'shards': [0, 64]}}", "instagram", False),
    ],
)
def test_a_database_next_id_of_another_layout_is_an_error(tmp_path: Path, setting: str, installed: str, clash: bool) -> None:
    project = django_project(tmp_path, MODELS, setting)
    (project / "notes" / "migrations").mkdir()
    (project / "notes" / "migrations" / "__init__.py").write_text("")
    (project / "notes" / "migrations" / "0001_shardid.py").write_text(INSTALL_LAYOUT.format(layout=installed))
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False, timeout=120)
    if clash:
        assert done.returncode != 0
        assert "shardid.E002" in done.stderr, done.stderr
        assert f"migration notes.0001_shardid installs the database's next_id() for the layout '{installed}'" in done.stderr, done.stderr
        assert "two layouts" in done.stderr
    else:
        assert (done.returncode, done.stderr) == (0, ""), done.stderr


SQLITE_MODELS = """
from django.db import models
from shardid.django import NextId, ShardIdField

class Note(models.Model):
    id = ShardIdField(primary_key=True, db_default=NextId("insta"))
    text = models.CharField(max_length=100)
"""

SQLITE_USE = """
import os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.db import IntegrityError, connection
from shardid import Layout
from notes.models import Note

note = Note.objects.create(text="made by the app")
assert Layout.INSTAGRAM.decode(note.id).shard == 5
try:
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO notes_note (text) VALUES ('raw')")
except IntegrityError as e:
    print("raw insert without an id:", e)
"""


def test_the_postgresql_recipe_migrates_on_sqlite_with_a_warning(tmp_path: Path) -> None:
    # A project that develops on SQLite keeps InstallPostgres and NextId: migrate passes, saying
    # the operation did nothing; the application's IDs are made as on PostgreSQL.
    project = django_project(tmp_path, SQLITE_MODELS)
    (project / "notes" / "migrations").mkdir()
    (project / "notes" / "migrations" / "__init__.py").write_text("")
    (project / "notes" / "migrations" / "0001_shardid.py").write_text(INSTALL_LAYOUT.format(layout="instagram"))
    for args in (["manage.py", "makemigrations", "notes"], ["manage.py", "migrate"]):
        done = subprocess.run([sys.executable, *args], cwd=project, capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "Applying notes.0001_shardid" in done.stdout and "Applying notes.0002" in done.stdout, done.stdout
    assert "SqliteSkipped: InstallPostgres('insta') does nothing on SQLite" in done.stderr, done.stderr
    done = subprocess.run([sys.executable, "-c", SQLITE_USE], cwd=project, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "raw insert without an id: NOT NULL constraint failed: notes_note.id" in done.stdout, done.stdout


# Five years of 365.2425 days: the core's RUN_OUT_WARNING_MS.
FIVE_YEARS_MS = 157_784_760_000
YEAR_MS = FIVE_YEARS_MS // 5


def layout_running_out_in(ms: int) -> dict[str, int]:
    """A custom layout (40 time bits of 1 ms) whose last millisecond is ``ms`` from now."""
    epoch_ms = int(time.time() * 1000) + ms - 2**40 + 1
    return {"epoch_ms": epoch_ms, "time_bits": 40, "shard_bits": 12, "sequence_bits": 10}


def test_runs_out_soon_is_the_cores_five_years_to_the_millisecond() -> None:
    for layout in (Layout.INSTAGRAM, Layout.SONYFLAKE, Layout(**layout_running_out_in(3 * YEAR_MS))):
        end = layout.expires_at_ms
        assert layout.runs_out_soon(end - FIVE_YEARS_MS) is True
        assert layout.runs_out_soon(end - FIVE_YEARS_MS - 1) is False
        assert layout.runs_out_soon(end + 1) is True  # run out already
        when = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=end - FIVE_YEARS_MS)
        assert layout.runs_out_soon(when) is True
        assert layout.runs_out_soon(when - timedelta(milliseconds=1)) is False
    assert Layout(**layout_running_out_in(3 * YEAR_MS)).runs_out_soon() is True  # the system clock
    assert Layout.INSTAGRAM.runs_out_soon() is False  # 2081
    with pytest.raises(ValueError, match="naive"):
        Layout.INSTAGRAM.runs_out_soon(datetime(2030, 1, 1))  # noqa: DTZ001 (the point)
    with pytest.raises(TypeError):
        Layout.INSTAGRAM.runs_out_soon("2030")  # type: ignore[arg-type]


LEASED = "'lease': {'directory': BASE_DIR / 'shards', 'shards': range(0, 8)}"


@pytest.mark.parametrize(
    ("ahead_ms", "warned"),
    [
        (4 * YEAR_MS, True),
        (6 * YEAR_MS, False),
        (FIVE_YEARS_MS - 60_000, True),  # a minute inside the five years (the test takes seconds)
        (FIVE_YEARS_MS + 60_000, False),  # a minute outside
        (-YEAR_MS, True),  # run out a year ago
    ],
)
def test_a_layout_running_out_within_five_years_is_warned_about(tmp_path: Path, ahead_ms: int, warned: bool) -> None:
    layout = layout_running_out_in(ahead_ms)
    project = django_project(tmp_path, MODELS, f"SHARDID = {{'layout': {layout!r}, {LEASED}}}")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr  # a warning: the project still starts
    if not warned:
        assert "no issues" in done.stdout and done.stderr == "", done.stderr
        return
    end = Layout(**layout).expires_at
    assert "shardid.W002" in done.stderr and f"runs out on {end:%Y-%m-%d %H:%M} UTC, within five years" in done.stderr, done.stderr
    assert "HINT:" in done.stderr and "shardid.W001" not in done.stderr
    with (project / "settings.py").open("a") as f:
        f.write("SILENCED_SYSTEM_CHECKS = ['shardid.W002']\n")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=project, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr

