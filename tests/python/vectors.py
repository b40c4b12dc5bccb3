"""The conformance vectors and the layouts they name, shared by the Python and PostgreSQL tests."""

from __future__ import annotations

import json
import pathlib
from typing import Any

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
