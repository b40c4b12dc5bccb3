"""The API references are complete: each public name has its documentation where its
ecosystem looks for it (issue 35).

- Python: every class, function, method and property of the hand-written stubs
  (`_shardid.pyi`) that `shardid` exports has a docstring (editors and `help()` show them),
  and so does every public name of the pure-Python modules.
- Node and WebAssembly: every `export` of the hand-written and generated `.d.ts` files has a
  TSDoc comment (`/** ... */`) right above it, and so does every member of an exported class
  (an interface's comment covers its fields: options objects, error fields).
- C: every function declared in `include/shardid.h` has a comment right above it.
- Django: every system check id (`shardid.E001`, ...) is in the table of checks on Django's page.

Prints each missing entry as `file:line: name` and exits 1 when there is one.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "bindings-python" / "python" / "shardid"


# Methods a framework calls on the classes that extend it (Django's fields, expressions,
# migration operations, apps, URL converters; Django REST framework's fields; SQLAlchemy's
# types): their meaning is the framework's documentation, not ours.
FRAMEWORK_HOOKS = {
    "ready", "deconstruct", "contribute_to_class", "get_db_prep_save", "as_sql", "as_sqlite",
    "state_forwards", "database_forwards", "database_backwards", "describe",
    "migration_name_fragment", "to_python", "to_url", "to_representation", "to_internal_value",
    "process_bind_param", "process_result_value",
}


def public(name: str) -> bool:
    return not name.startswith("_") or name in ("__init__", "__new__")


def python_missing(path: Path) -> list[str]:
    """Classes, functions, methods and properties without a docstring: a method or property
    with one of the same name above it (an overload, a setter) counts as documented."""
    tree = ast.parse(path.read_text())
    missing: list[str] = []

    def walk(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        documented: set[str] = set()
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if not public(node.name) or (in_class and node.name in FRAMEWORK_HOOKS):
                continue
            if node.name in ("__init__", "__new__") and not in_class:
                continue
            if ast.get_docstring(node) is not None:
                documented.add(node.name)
            elif node.name not in documented:
                # A class documents its constructor: __init__/__new__ may rely on it.
                if node.name in ("__init__", "__new__"):
                    pass
                else:
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}: {prefix}{node.name}")
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.", True)

    walk(tree.body, "", False)
    return missing


EXPORT = re.compile(
    r"^\s*export\s+(?:declare\s+)?(?:abstract\s+)?(?:class|function|const|let|interface|type|enum|namespace)\s+(\w+)"
)
MEMBER = re.compile(r"^\s+(?:static\s+)?(?:readonly\s+)?(?:get\s+|set\s+)?(\[?[A-Za-z_][\w.]*\]?)\??\s*[(:<]")


def documented_above(lines: list[str], i: int) -> bool:
    j = i - 1
    while j >= 0 and (not lines[j].strip() or lines[j].strip().startswith("@")):
        j -= 1
    return j >= 0 and lines[j].strip().endswith("*/")


def typescript_missing(path: Path) -> list[str]:
    lines = path.read_text().split("\n")
    missing: list[str] = []
    in_class = 0  # brace depth inside an exported class or interface
    depth = 0
    for i, line in enumerate(lines):
        if m := EXPORT.match(line):
            if not documented_above(lines, i):
                missing.append(f"{path.relative_to(ROOT)}:{i + 1}: {m.group(1)}")
            if re.search(r"\bclass\b", line) and "{" in line and "}" not in line:
                in_class = depth + 1
        elif in_class and depth == in_class and (m := MEMBER.match(line)):
            name = m.group(1)
            if name not in ("constructor",) and not name.startswith("[") and not documented_above(lines, i):
                # An overload's later signatures share the first one's comment.
                previous = lines[i - 1].strip() if i else ""
                if not re.match(rf"(?:static\s+)?{re.escape(name)}\s*[(<]", previous):
                    missing.append(f"{path.relative_to(ROOT)}:{i + 1}: {name}")
        depth += line.count("{") - line.count("}")
        if in_class and depth < in_class:
            in_class = 0
    return missing


C_FUNCTION = re.compile(r"^[A-Za-z_][\w \*]*?\b(shardid_\w+)\s*\(")


def c_missing(path: Path) -> list[str]:
    lines = path.read_text().split("\n")
    return [
        f"{path.relative_to(ROOT)}:{i + 1}: {m.group(1)}"
        for i, line in enumerate(lines)
        if (m := C_FUNCTION.match(line)) and not line.startswith(("#", "typedef")) and not documented_above(lines, i)
    ]


CHECK_ID = re.compile(r"""id=["'](shardid\.[EW]\d{3})["']""")
DJANGO_PAGE = ROOT / "docs" / "src" / "start" / "django.md"


def check_ids_missing() -> list[str]:
    """Django's system checks: every id a check of shardid's can report is in the table of
    Django's page, where a project looks up an id that ``manage.py check`` printed."""
    page = DJANGO_PAGE.read_text()
    missing = []
    for path in sorted((PYTHON / "django").glob("*.py")):
        for i, line in enumerate(path.read_text().split("\n")):
            for check_id in CHECK_ID.findall(line):
                if f"| `{check_id}` |" not in page:
                    missing.append(f"{path.relative_to(ROOT)}:{i + 1}: {check_id} (not in {DJANGO_PAGE.relative_to(ROOT)}'s table of checks)")
    return missing


def main() -> int:
    missing: list[str] = []
    checked = 0
    checked += 1
    missing += check_ids_missing()
    for path in [PYTHON / "_shardid.pyi", *sorted(PYTHON.rglob("*.py"))]:
        if path.name.startswith("_") and path.suffix == ".py" and path.name != "__init__.py":
            continue  # private modules (_errors.py is generated, _db.py and _mysql.py internal)
        checked += 1
        missing += python_missing(path)
    for path in sorted((ROOT / "bindings-node").glob("*.d.ts")):
        checked += 1
        missing += typescript_missing(path)
    checked += 1
    missing += c_missing(ROOT / "include" / "shardid.h")
    for entry in missing:
        print(f"{entry}: no documentation")
    print(f"{checked} files checked, {len(missing)} entries without documentation")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
