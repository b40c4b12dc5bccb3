"""Runs every fenced code block of the book (docs/src/**/*.md, and the top-level files it
includes) and of README.md, in its language, and names the page and line of any that fails.

    python tests/docs/snippets.py [--list] [PAGE ...]

Pages run in book order (docs/src/SUMMARY.md; README.md first, on a database of its own), and
each page's blocks in the order the page shows them, so a page reads as one session: its
Python blocks share one interpreter (a later block uses what an earlier one made). The book's
pages share one PostgreSQL database, as a reader who follows the book uses one: a page runs on
what the pages before it left there (a tag created twice, a serial number taken before), so
no page may assume an empty database. A page that does says so in a comment of its own,
``<!-- docs-test: fresh database (why) -->``, and gets a database of its own. The databases
live on one throwaway cluster (tests/postgres/cluster.py), named by ``DATABASE_URL`` and psql's
``PG*`` variables; MariaDB's blocks share the database ``app`` of one throwaway server.

| language | how it runs |
| --- | --- |
| ``python`` | ``exec`` in the page's interpreter (the installed wheel, as tests/python/run.sh installs it) |
| ``js`` | a file of its own in a project whose ``node_modules`` holds shardid, shardid-wasm, pg, knex, mysql2, better-sqlite3, drizzle-orm, prom-client, @opentelemetry, and the ORMs of tests/docs/package.json (Prisma, TypeORM, Sequelize: ``npm ci`` in tests/docs); an ES module when it imports or awaits, else CommonJS |
| ``ts`` | ``tsc --noEmit`` in that project (types only), with the ``tsconfig.json`` the page shows (a ``json file=tsconfig.json`` block before it), as a reader's project compiles it; else ``--strict`` and nothing more (no ``skipLibCheck``). ``ts run``: compiled by ``tsc`` in the page's directory (beside the files its blocks wrote: a ``package.json``, a generated client) and the JavaScript it wrote run by Node |
| ``sh`` | ``bash -euo pipefail``; a block of ``$ command`` lines runs each command and compares the output lines shown under it, exactly |
| ``sql`` | ``psql -v ON_ERROR_STOP=1``; ``sql mariadb``: the ``mariadb`` command line, in the database ``app`` of a throwaway MariaDB (tests/mysql/server.py), whose URL the page's blocks read from ``MYSQL_URL`` |
| ``c`` | compiled with ``-std=c99 -Wall -Wextra -Werror`` against include/shardid.h and libshardid.a, and run; a block without ``main`` runs as its body |
| ``rust`` | by rustdoc: the page must be one of the doctests of core/src/lib.rs (checked here) |
| ``toml``, ``json`` | parsed (configuration shown on a page is at least well-formed) |
| ``prisma`` | only as a file of the reader's project (``prisma file=prisma/schema.prisma``), which a later block uses |
| ``text`` | not code |

A block ``file=PATH`` is written to PATH in the page's directory, where its ``sh`` blocks run,
for the blocks after it (a page with ``ts run`` blocks also finds the project's ``node_modules``
there). A block that must not run says why on its fence: `````python no-run: a fragment of a
Django project`````. A block without a runner and without that marker fails the test, as does a
marker without a reason. Line numbers in tracebacks and stack traces are the page's own (each
block is padded so that its first line sits where it does on the page).
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "postgres"))
sys.path.insert(0, str(ROOT / "tests" / "mysql"))

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
INCLUDE = re.compile(r"\{\{#include\s+([^}\s]+)\s*\}\}")
RUNNERS = {"python", "js", "ts", "sh", "sql", "c", "rust", "toml", "json"}
ORMS = ROOT / "tests" / "docs" / "node_modules"  # `npm ci` in tests/docs (scripts/setup.sh)
FILE_ONLY = {"prisma"}  # shown only as files of the reader's project (`prisma file=...`)
NOT_CODE = {"text"}
TIMEOUT_S = 120  # for one block
ALIASES = {"py": "python", "javascript": "js", "mjs": "js", "typescript": "ts", "bash": "sh", "console": "sh"}


@dataclass
class Block:
    path: Path  # the file the block is written in
    line: int  # the line of its first line of code (after the fence), 1-based
    lang: str
    flags: list[str]
    no_run: str | None  # the reason, when the fence says no-run
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, and those of the files it {{#include}}s."""
    found: list[Block] = []
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        if m := INCLUDE.search(lines[i]):
            found += blocks_of((path.parent / m.group(1)).resolve())
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        start = i + 1
        i += 1
        while i < len(lines) and not lines[i].lstrip().startswith(fence):
            i += 1
        code = "\n".join(lines[start:i]) + "\n"
        i += 1
        head, _, rest = info.partition(" ")
        tokens = [t for t in head.split(",") if t]
        lang = ALIASES.get(tokens[0], tokens[0]) if tokens else ""
        no_run = None
        if "no-run" in rest or "no-run" in tokens:
            no_run = rest.partition("no-run")[2].lstrip(":").strip()
            rest = ""
        found.append(Block(path, start + 1, lang, tokens[1:] + rest.split(), no_run, code))
    return found


FRESH = re.compile(r"<!--\s*docs-test:\s*fresh database\b")
SUMMARY_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


def book_order() -> list[Path]:
    """The book's pages in the order a reader meets them: SUMMARY.md's, then any page it does
    not list (sorted)."""
    src = ROOT / "docs" / "src"
    listed = [(src / link).resolve() for link in SUMMARY_LINK.findall((src / "SUMMARY.md").read_text())]
    rest = [p for p in sorted(src.rglob("*.md")) if p.resolve() not in listed]
    return list(dict.fromkeys(listed)) + rest


def pages(selected: list[str]) -> list[Path]:
    every = [ROOT / "README.md", *book_order()]
    if not selected:
        return every
    return [p for p in every if any(str(p).endswith(s) for s in selected)]


def needs_fresh_database(page: Path) -> bool:
    """README.md (not a page of the book), and a page that says it needs a database of its own."""
    return page == ROOT / "README.md" or bool(FRESH.search(page.read_text()))


def pad(block: Block) -> str:
    """The block's code with blank lines above it, so that line N of the result is line N of
    the page: tracebacks, stack traces and compilers then name the page's lines."""
    return "\n" * (block.line - 1) + block.code


# ---------------------------------------------------------------------------------------------
# The page's Python interpreter: a worker reading blocks as JSON lines on stdin.

WORKER = r"""
import contextlib, io, json, sys, traceback
namespace = {"__name__": "__main__"}
out = sys.stdout
sys.stdout = sys.stderr
for request in sys.stdin:
    block = json.loads(request)
    try:
        exec(compile(block["code"], block["path"], "exec"), namespace)
        reply = {"ok": True}
    except BaseException:
        reply = {"ok": False, "error": traceback.format_exc(limit=-6)}
    sys.stderr.flush()
    out.write(json.dumps(reply) + "\n")
    out.flush()
"""


class Python:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env, cwd=cwd,
        )  # fmt: skip

    def run(self, block: Block) -> str | None:
        assert self.proc.stdin and self.proc.stdout
        request = {"code": pad(block), "path": str(block.path.relative_to(ROOT))}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        if not select.select([self.proc.stdout], [], [], TIMEOUT_S)[0]:
            self.proc.kill()
            return f"no answer within {TIMEOUT_S} s"
        line = self.proc.stdout.readline()
        if not line:
            return "the interpreter exited:\n" + (self.proc.stderr.read() if self.proc.stderr else "")
        reply = json.loads(line)
        return None if reply["ok"] else reply["error"]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ---------------------------------------------------------------------------------------------


def not_parsed(parse: Any, error: type[Exception], language: str, code: str) -> str | None:
    """Why `code` is not `language`, or None when `parse` takes it."""
    try:
        parse(code)
    except error as e:
        return f"not {language}: {e}"
    return None


class Runner:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.failures: list[str] = []
        self.ran: dict[str, int] = {}
        self.skipped = 0
        self.took: list[tuple[float, str]] = []
        self.cluster: Any = None  # tests/postgres/cluster.py's Cluster, started by the first page that needs it
        self.databases: set[str] = set()  # made on it so far: the book's, and the fresh ones
        self.mariadb: Any = None  # tests/mysql/server.py's Server, started by the first page with a `mariadb` block
        self.project = self._node_project()
        self.libdir = Path(os.environ.get("SHARDID_DOCS_LIBDIR", ROOT / "target" / "debug"))

    # -- environment ------------------------------------------------------------------------

    def _node_project(self) -> Path:
        project = self.work / "node"
        modules = project / "node_modules"
        modules.mkdir(parents=True)
        (project / "package.json").write_text('{ "name": "docs-snippets", "private": true }\n')
        node = ROOT / "bindings-node"
        (modules / "shardid").symlink_to(node)
        wasm = ROOT / "bindings-wasm" / "pkg" / "npm"
        if wasm.exists():
            (modules / "shardid-wasm").symlink_to(wasm)
        for name in ("pg", "knex", "mysql2", "better-sqlite3", "drizzle-orm", "typescript", "@types", "prom-client", "@opentelemetry"):
            if (node / "node_modules" / name).exists():
                (modules / name).symlink_to(node / "node_modules" / name)
        # The ORMs the book's ORM page shows (tests/docs/package.json, installed by `npm ci` in
        # tests/docs): each with the dependencies npm resolved for it there (its own pg), and
        # their commands (npx prisma) in .bin. bindings-node's packages above come first.
        if ORMS.is_dir():
            for entry in sorted(ORMS.iterdir()):
                if entry.name == ".bin" or not entry.name.startswith((".", "@types")):
                    if not (modules / entry.name).exists():
                        (modules / entry.name).symlink_to(entry)
        # A page that shows no tsconfig.json: --strict, and the libraries' types checked too.
        (project / "tsconfig.json").write_text(json.dumps({
            "compilerOptions": {
                "strict": True, "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
            }
        }))  # fmt: skip
        return project

    def database(self, page: Path) -> dict[str, str]:
        """The page's database, and the environment that names it: the book's one, shared by
        its pages in order, or a fresh one for a page that needs it (README.md's)."""
        if self.cluster is None:
            from cluster import Cluster  # type: ignore[import-not-found]

            self.cluster = Cluster()
        if needs_fresh_database(page):
            name = "docs_" + re.sub(r"[^a-z0-9]+", "_", str(page.relative_to(ROOT)).lower())[:50]
        else:
            name = "docs_book"
        if name not in self.databases:
            self.databases.add(name)
            psql = str(self.cluster.bin / "psql")
            subprocess.run(
                [psql, "-q", "-h", "127.0.0.1", "-p", str(self.cluster.port), "-U", "postgres", "-d", "postgres",
                 "-c", f"CREATE DATABASE {name}"],
                check=True, capture_output=True,
            )  # fmt: skip
        venv_bin = str(Path(sys.executable).parent)
        return {
            **os.environ,
            "PATH": f"{venv_bin}:{self.cluster.bin}:{os.environ['PATH']}",
            "SHARDID": str(ROOT),
            "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{self.cluster.port}/{name}",
            "PGHOST": "127.0.0.1",
            "PGPORT": str(self.cluster.port),
            "PGUSER": "postgres",
            "PGDATABASE": name,
        }

    def mariadb_env(self, env: dict[str, str]) -> dict[str, str]:
        """The page's environment with a throwaway MariaDB: ``MYSQL_URL`` (no database: the
        page's blocks name theirs), and the socket the ``mariadb`` command line reads from
        ``MYSQL_UNIX_PORT``; the database ``app`` for its SQL blocks."""
        if self.mariadb is None:
            from server import Server  # type: ignore[import-not-found]

            self.mariadb = Server()
            self.mariadb.sql("CREATE DATABASE app")
            # The command line reads $MYSQL_HOME/my.cnf: `mariadb -u root` then finds the server.
            (self.work / "mariadb").mkdir()
            (self.work / "mariadb" / "my.cnf").write_text(f"[client]\nsocket={self.mariadb.socket}\n")
        return {**env, "MYSQL_URL": self.mariadb.url, "MYSQL_HOME": str(self.work / "mariadb"),
                "MYSQL_UNIX_PORT": str(self.mariadb.socket)}

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
        if self.mariadb is not None:
            self.mariadb.stop()

    # -- blocks -----------------------------------------------------------------------------

    def page(self, page: Path) -> None:
        blocks = blocks_of(page)
        if not blocks:
            return
        env: dict[str, str] | None = None
        python: Python | None = None
        cwd = self.work / re.sub(r"[^A-Za-z0-9]+", "-", str(page.relative_to(ROOT)))
        cwd.mkdir()
        if any(b.lang == "ts" and "run" in b.flags for b in blocks):
            # A page whose TypeScript runs is the reader's project: its packages where its
            # blocks compile and where `npx` (npx prisma generate) looks for them.
            (cwd / "node_modules").symlink_to(self.project / "node_modules")
        try:
            for block in blocks:
                if block.no_run is not None:
                    if not block.no_run:
                        self.fail(block, "says no-run but not why: write the reason after `no-run:`")
                    self.skipped += 1
                    continue
                if block.lang in NOT_CODE:
                    continue
                target = next((f[len("file="):] for f in block.flags if f.startswith("file=")), None)
                if block.lang in FILE_ONLY and not target:
                    self.fail(block, f"a ```{block.lang} block runs as a file of the project: `{block.lang} file=<path>`")
                    continue
                if block.lang not in RUNNERS | FILE_ONLY:
                    self.fail(block, f"no runner for ```{block.lang}: run it, or mark it `no-run: <why>`")
                    continue
                if block.lang == "rust":
                    self.rust(block)
                    continue
                if env is None:
                    env = self.database(page)
                    if any("mariadb" in b.flags for b in blocks if b.no_run is None):
                        env = self.mariadb_env(env)
                if target:
                    # A file of the reader's project, shown on the page: written where the page's
                    # shell blocks run (configuration checked for its form first).
                    error = self.json(block, env, cwd) if block.lang == "json" else None
                    if error:
                        self.fail(block, error)
                        break
                    (cwd / target).parent.mkdir(parents=True, exist_ok=True)
                    with open(cwd / target, "a" if "append" in block.flags else "w") as f:
                        f.write(block.code)
                    continue
                began = time.monotonic()
                if block.lang == "python":
                    python = python or Python(env, cwd)
                    error = python.run(block)
                else:
                    error = getattr(self, block.lang)(block, env, cwd)
                self.took.append((time.monotonic() - began, f"{block.where} ({block.lang})"))
                self.ran[block.lang] = self.ran.get(block.lang, 0) + 1
                if error and not ORMS.is_dir() and re.search(r"Cannot find (module|package)", error):
                    error += "\n(tests/docs/node_modules is missing: `npm ci` in tests/docs, as scripts/setup.sh does)"
                if error:
                    self.fail(block, error)
                    break  # the page's later blocks build on this one
        finally:
            if python:
                python.close()

    def fail(self, block: Block, error: str) -> None:
        self.failures.append(f"{block.where}: ```{block.lang} block failed:\n{error.rstrip()}")

    def rust(self, block: Block) -> None:
        lib = (ROOT / "core" / "src" / "lib.rs").read_text()
        page = os.path.relpath(block.path, ROOT / "core" / "src")
        if f'include_str!("{page}")' not in lib:
            self.fail(block, f'a Rust block on a page that is no doctest: add `#[doc = include_str!("{page}")]` to core/src/lib.rs')
        else:
            self.ran["rust (doctests)"] = self.ran.get("rust (doctests)", 0) + 1

    def js(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        esm = re.search(r"^\s*(import|export)\s|^[^/\n]*\bawait\b", block.code, re.M)
        name = re.sub(r"[^A-Za-z0-9]+", "-", block.where) + (".mjs" if esm else ".cjs")
        file = self.project / name
        file.write_text(pad(block))
        return self.proc(["node", str(file)], env, self.project)

    def ts(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        if "run" in block.flags:
            return self.ts_run(block, env, cwd)
        file = self.project / (re.sub(r"[^A-Za-z0-9]+", "-", block.where) + ".mts")
        file.write_text(pad(block))
        tsc = self.project / "node_modules" / "typescript" / "bin" / "tsc"
        if not tsc.exists():
            return "typescript is not installed in bindings-node/node_modules (npm install there)"
        # The page's tsconfig.json (a `json file=tsconfig.json` block above), as the reader's.
        base = "./tsconfig.json"
        if (cwd / "tsconfig.json").exists():
            base = f"./{file.stem}.base.json"
            shutil.copyfile(cwd / "tsconfig.json", self.project / base)
        config = self.project / f"{file.stem}.json"
        config.write_text(json.dumps({"extends": base, "files": [file.name], "compilerOptions": {"noEmit": True}}))
        return self.proc(["node", str(tsc), "-p", str(config)], env, self.project)

    def ts_run(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        """A ``ts run`` block: compiled as the reader's project builds it (the page's directory,
        its tsconfig.json or the --strict default, the files earlier blocks wrote there such as
        a generated client), ``tsc`` writing JavaScript, which Node then runs."""
        tsc = self.project / "node_modules" / "typescript" / "bin" / "tsc"
        if not tsc.exists():
            return "typescript is not installed in bindings-node/node_modules (npm install there)"
        name = f"block-{block.line}"
        (cwd / f"{name}.mts").write_text(pad(block))
        base = "./tsconfig.json"
        if not (cwd / "tsconfig.json").exists():
            base = "./default.tsconfig.json"
            shutil.copyfile(self.project / "tsconfig.json", cwd / base)
        (cwd / f"{name}.tsconfig.json").write_text(json.dumps({
            "extends": base, "files": [f"{name}.mts"],
            "compilerOptions": {"noEmit": False, "outDir": f"{name}.out", "rootDir": "."},
        }))  # fmt: skip
        return self.proc(["node", str(tsc), "-p", f"{name}.tsconfig.json"], env, cwd) or self.proc(
            ["node", f"{name}.out/{name}.mjs"], env, cwd
        )

    def sh(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        lines = block.code.rstrip("\n").split("\n")
        if not lines[0].startswith("$ "):
            return self.proc(["bash", "-euo", "pipefail", "-c", block.code], env, cwd)
        # A transcript: each `$ command`, and the output shown under it, if any.
        i = 0
        while i < len(lines):
            command = lines[i][2:]
            expected = []
            i += 1
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
            try:
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], env=env, cwd=cwd,
                                      capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip
            except subprocess.TimeoutExpired:
                return f"$ {command}\nno answer within {TIMEOUT_S} s"
            if done.returncode != 0:
                return f"$ {command}\nexit status {done.returncode}\n{done.stderr}"
            if expected and done.stdout.rstrip("\n").split("\n") != expected:
                return f"$ {command}\nprinted:\n{done.stdout}the page shows:\n" + "\n".join(expected)
        return None

    def toml(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        import tomllib

        return not_parsed(tomllib.loads, tomllib.TOMLDecodeError, "TOML", block.code)

    def json(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        return not_parsed(json.loads, json.JSONDecodeError, "JSON", block.code)

    def sql(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        if "mariadb" in block.flags:
            return self.proc(["mariadb", "--no-defaults", "-uroot", f"--socket={env['MYSQL_UNIX_PORT']}", "app"], env, cwd, block.code)
        return self.proc(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"], env, cwd, block.code)

    def c(self, block: Block, env: dict[str, str], cwd: Path) -> str | None:
        code = block.code
        if not re.search(r"\bmain\s*\(", code):
            includes = [line for line in code.split("\n") if line.startswith("#include")]
            body = [line if not line.startswith("#include") else "" for line in code.split("\n")]
            # Only the block's own includes: a snippet a reader copies must compile as shown.
            code = "\n".join([*includes, "int main(void) {", *body, "return 0; }"])
        else:
            code = pad(block)
        source = cwd / f"block-{block.line}.c"
        source.write_text(code)
        program = cwd / f"block-{block.line}"
        compiler = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unused-variable", f"-I{ROOT / 'include'}",
                    str(source), str(self.libdir / "libshardid.a"), "-lpthread", "-ldl", "-lm", "-o", str(program)]  # fmt: skip
        return self.proc(compiler, env, cwd) or self.proc([str(program)], env, cwd)

    def proc(self, command: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> str | None:
        try:
            done = subprocess.run(command, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"{command[0]}: no answer within {TIMEOUT_S} s"
        if done.returncode == 0:
            return None
        return f"exit status {done.returncode}\n{done.stdout[-2000:]}{done.stderr[:2500]}"


def readme_links() -> int:
    """The README's relative links (into the book, ARCHITECTURE.md, ...) name files that exist,
    anchors aside: mdbook-linkcheck checks the book's links, not the README's."""
    text = (ROOT / "README.md").read_text()
    broken = [
        target
        for target in re.findall(r"\]\(([^)\s]+)\)", text)
        if not re.match(r"[a-z]+:", target) and not (ROOT / target.split("#")[0]).exists()
    ]
    for target in broken:
        print(f"README.md links to {target}, which does not exist")
    return 1 if broken else 0


def anchors(html: Path) -> int:
    """Every link between the rendered pages (book/html) that names an anchor finds it there:
    mdbook-linkcheck 0.7 checks that the page exists, not the anchor."""
    ids = {page: set(re.findall(r'\bid="([^"]+)"', page.read_text())) for page in html.rglob("*.html")}
    broken = []
    for page, _ in ids.items():
        if page.name in ("print.html", "toc.html"):
            continue
        for href in re.findall(r'href="([^"#:]*\.html|)#([^"]+)"', page.read_text()):
            target = (page.parent / href[0]).resolve() if href[0] else page
            if target in ids and href[1] not in ids[target]:
                broken.append(f"{page.relative_to(html)} links to {href[0]}#{href[1]}: no such anchor")
    for line in broken:
        print(line)
    return 1 if broken else 0


def main(argv: list[str]) -> int:
    if "--readme-links" in argv:
        return readme_links()
    if "--anchors" in argv:
        return anchors(Path(argv[argv.index("--anchors") + 1]))
    listing = "--list" in argv
    selected = [a for a in argv if not a.startswith("--")]
    if listing:
        for page in pages(selected):
            for b in blocks_of(page):
                print(f"{b.where}\t{b.lang}\t{'no-run: ' + b.no_run if b.no_run is not None else 'runs'}")
        return 0
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="shardid-docs-"))
    runner = Runner(work)
    try:
        for page in pages(selected):
            runner.page(page)
    finally:
        runner.close()
        shutil.rmtree(work, ignore_errors=True)
    for failure in runner.failures:
        print(f"\n{failure}", file=sys.stderr)
    slowest = ", ".join(f"{where} {seconds:.1f} s" for seconds, where in sorted(runner.took, reverse=True)[:5])
    print(f"slowest blocks: {slowest}")
    ran = ", ".join(f"{n} {lang}" for lang, n in sorted(runner.ran.items()))
    print(f"\nsnippets: {ran}; {runner.skipped} marked no-run; {time.monotonic() - started:.0f} s")
    passed = sum(runner.ran.values()) - len(runner.failures)
    print(f"docs snippets: {passed} passed, {len(runner.failures)} failed")
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
