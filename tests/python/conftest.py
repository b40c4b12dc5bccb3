"""Shared helpers: the conformance vectors, and a result in the vectors' JSON shape."""

from __future__ import annotations

from typing import Any, Callable

import shardid

from vectors import LAYOUTS, VECTORS, layout_from_spec, load  # noqa: F401 (the tests import them from here)


def as_json(value: Any) -> Any:
    """A result the way the vectors write it: 64-bit values as decimal strings."""
    if isinstance(value, shardid.Parts):
        return {
            "timestamp_ms": str(value.timestamp_ms),
            "shard": str(value.shard),
            "sequence": str(value.sequence),
        }
    if isinstance(value, list):
        return [str(v) for v in value]
    return str(value)


def outcome(call: Callable[[], Any], expect: dict[str, Any]) -> dict[str, Any]:
    """Runs `call` and describes its result like `expect`: {"ok": ...} or {"error": CODE, fields}."""
    try:
        return {"ok": as_json(call())}
    except shardid.ShardIdError as e:
        got: dict[str, Any] = {"error": e.code}
        for field in expect:
            if field == "message":
                got[field] = str(e)
            elif field != "error":
                got[field] = str(getattr(e, field, None))
        return got
