"""Shared helpers: the conformance vectors, and a result in the vectors' JSON shape."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Callable

import shardid

VECTORS = pathlib.Path(__file__).resolve().parents[1] / "vectors"


def load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text())


def layout_from_spec(spec: dict[str, Any]) -> shardid.Layout:
    return shardid.Layout(
        epoch_ms=int(spec["epoch_ms"]),
        unit_ms=int(spec["unit_ms"]),
        time_bits=spec["time_bits"],
        shard_bits=spec["shard_bits"],
        sequence_bits=spec["sequence_bits"],
        order=spec["order"],
        signed=spec["signed"],
    )


LAYOUTS = {entry["name"]: layout_from_spec(entry["spec"]) for entry in load("layouts.json")["layouts"]}


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
            if field != "error":
                got[field] = str(getattr(e, field, None))
        return got
