"""The book's Node snippets run as written (issue 36: the dictionary's lacked create(), and
the database snippets mixed require with top-level await, which runs in neither module style):
each block is saved as an ES module in a fresh project whose node_modules holds shardid (this
checkout's bindings-node), pg and knex, and run against the throwaway server; then the database
holds what the snippet made."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from shardid import Layout
from shardid.sql import dictionary, segments

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "bindings-node"

# Each snippet by a line that only it has.
SNIPPETS = {
    "quick start": "const forJson = gen.nextIdString()",
    "segments": "import { createTag, denseIds } from 'shardid/segments'",
    "dictionary": "const urls = new Dictionary(connectionString, 'urls')",
    # node.md's (the UUID page's Knex block imports knex too; the docs test runs that one).
    "knex": "// events.mjs (an ES module, for top-level await)\nimport knexFactory from 'knex'",
}


def js_blocks() -> list[str]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs" / "src").rglob("*.md"))]
    return [b for page in pages for b in re.findall(r"^```js\n(.*?)^```", page.read_text(), re.S | re.M)]


def snippet(name: str) -> str:
    (found,) = [b for b in js_blocks() if SNIPPETS[name] in b]
    return found


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose packages are this checkout's: `shardid` and what it is used with."""
    path = tmp_path_factory.mktemp("readme-node")
    (path / "package.json").write_text('{ "name": "readme-snippets", "private": true }\n')
    modules = path / "node_modules"
    modules.mkdir()
    (modules / "shardid").symlink_to(NODE)
    for name in ("pg", "knex"):
        (modules / name).symlink_to(NODE / "node_modules" / name)
    return path


@pytest.fixture(scope="module")
def database(cluster: Any) -> str:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute("CREATE DATABASE readme_node")
    dsn = cluster.dsn.replace("dbname=postgres", "dbname=readme_node")
    with psycopg.connect(dsn, autocommit=True) as conn:
        # What the README says to run once before its snippets (the segments snippet creates
        # its tag itself: createTag).
        with conn.transaction():
            conn.execute(segments("seg").encode())
            conn.execute(dictionary("dict").encode())
    return dsn


def run(project: Path, cluster: Any, name: str) -> None:
    file = project / f"{name.replace(' ', '-')}.mjs"
    file.write_text(snippet(name))
    env = {**os.environ, "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{cluster.port}/readme_node"}
    done = subprocess.run(["node", str(file)], cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"the README's {name} snippet failed:\n{done.stderr}"


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_a_readme_snippet_runs_as_written(project: Path, cluster: Any, database: str, name: str) -> None:
    run(project, cluster, name)
    with psycopg.connect(database, autocommit=True) as conn:
        if name == "segments":
            # One segment taken and the rest given back: the tag continues at the next number.
            assert conn.execute("SELECT next FROM seg.shardid_tags WHERE tag = 'orders'").fetchone() == (3,)
        elif name == "dictionary":
            assert conn.execute("SELECT dict.dict_lookup('urls', ARRAY['https://example.com/', '/a', '/b'])").fetchone() == ([0, 1, 2],)
        elif name == "knex":
            rows = conn.execute("SELECT id FROM events ORDER BY id").fetchall()
            assert sorted(Layout.INSTAGRAM.decode(i).shard for (i,) in rows) == [5, 6]
