"""Business serial numbers without a database: the conformance vectors (tests/vectors/serials.json),
the error classes, and the arguments shardid.SerialFormat refuses."""

from __future__ import annotations

from typing import Any

import pytest
from vectors import load

import shardid

FILE = load("serials.json")
CLASSES = {
    "INVALID_SERIAL_FORMAT": shardid.InvalidSerialFormatError,
    "UNKNOWN_TIME_ZONE": shardid.UnknownTimeZoneError,
    "INVALID_SERIAL": shardid.InvalidSerialError,
    "SERIAL_OVERFLOW": shardid.SerialOverflowError,
    "INVALID_ARGUMENT": shardid.InvalidArgumentError,
}


def check_error(err: BaseException, expect: dict[str, Any]) -> None:
    assert isinstance(err, CLASSES[expect["error"]]), (err, expect)
    assert err.code == expect["error"]  # type: ignore[attr-defined]
    assert str(err) == expect["message"]
    for name, value in expect.items():
        if name not in ("error", "message"):
            got = getattr(err, name)
            assert str(got) == value, (name, got, value)


@pytest.mark.parametrize("case", FILE["formats"], ids=lambda c: f"{c['format']}@{c['zone']}")
def test_format(case: dict[str, Any]) -> None:
    f = shardid.SerialFormat(case["format"], case["zone"])
    assert (f.canonical, f.zone, f.reset, f.width, f.length) == (
        case["canonical"],
        case["zone_canonical"],
        case["reset"],
        case["width"],
        case["length"],
    )
    assert f.max_number == int(case["max_number"])
    for r in case["render"]:
        number, ms = int(r["number"]), int(r["unix_ms"])
        if "ok" in r["expect"]:
            assert f.render(number, ms) == r["expect"]["ok"], r
            assert f.period_at(ms) == r["period"]
        else:
            with pytest.raises(shardid.ShardIdError) as err:
                f.render(number, ms)
            check_error(err.value, r["expect"])
    for p in case["parse"]:
        if "ok" in p["expect"]:
            parsed = f.parse(p["serial"])
            ok = p["expect"]["ok"]
            assert parsed.number == int(ok["number"])
            assert parsed.period == ok["period"]
            assert (parsed.year, parsed.month, parsed.day, parsed.hour, parsed.week) == (
                ok["year"],
                ok["month"],
                ok["day"],
                ok["hour"],
                ok["week"],
            )
        else:
            with pytest.raises(shardid.InvalidSerialError) as err:
                f.parse(p["serial"])
            check_error(err.value, p["expect"])


@pytest.mark.parametrize("case", FILE["invalid"], ids=lambda c: repr(c["format"]) + "@" + c["zone"])
def test_invalid(case: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as err:
        shardid.SerialFormat(case["format"], case["zone"])
    check_error(err.value, case["expect"])


def test_errors_are_value_errors_with_fields() -> None:
    with pytest.raises(shardid.InvalidSerialFormatError) as bad:
        shardid.SerialFormat("ORD-{yyyy}{MM}-{seq:6:day}", "Asia/Shanghai")
    assert isinstance(bad.value, ValueError)
    assert bad.value.position == 15 and "does not show the day" in bad.value.reason
    f = shardid.SerialFormat("ORD-{yyyy}{MM}{dd}-{seq:2}", "Asia/Shanghai")
    with pytest.raises(shardid.SerialOverflowError) as over:
        f.render(100, 1_795_536_000_000)
    assert not isinstance(over.value, ValueError), "the period's numbers ran out: retry in the next"
    assert (over.value.tag, over.value.max) == ("2026-11-25", 99)
    for number, ms in [(-1, 1_795_536_000_000), (1, -5), (2**64, 1), (1, 2**64)]:
        with pytest.raises(shardid.ShardIdError):
            f.render(number, ms)
    with pytest.raises(TypeError):
        f.render("1", 1_795_536_000_000)
    with pytest.raises(TypeError):
        f.parse(123)  # type: ignore[arg-type]
    parsed = f.parse("ORD-20261125-07")
    assert parsed == f.parse("ORD-20261125-07") and hash(parsed) == hash(f.parse("ORD-20261125-07"))
    assert parsed.period_tag("orders") == "orders@2026-11-25"
    assert repr(parsed) == "ParsedSerial(number=7, period='2026-11-25')"
    assert repr(f) == "SerialFormat('ORD-{yyyy}{MM}{dd}-{seq:2}', 'Asia/Shanghai')"
    assert shardid.SerialFormat("{seq:3}", "asia/shanghai").zone == "Asia/Shanghai"
