"""Public IDs through the installed wheel: every case of tests/vectors/public_ids.json (byte for
byte the core's text), hostile input, and that the key never shows."""

from __future__ import annotations

import functools
import pickle
import re
from typing import Any

import pytest

import shardid
from conftest import LAYOUTS, load, outcome
from together import on_threads

FILE = load("public_ids.json")
KEY = b"0123456789abcdef"


def build(spec: dict[str, Any]) -> shardid.PublicIds:
    return shardid.PublicIds(
        bytes.fromhex(spec["key"]),
        spec["prefix"],
        spec["encoding"],
        key_version=spec["key_version"],
        old_keys={k["key_version"]: bytes.fromhex(k["key"]) for k in spec["old_keys"]},
        layout=LAYOUTS[spec["layout"]],
    )


def text_of(args: dict[str, Any]) -> str:
    if "text" in args:
        return str(args["text"])
    return str(args["text_repeat"]["text"]) * int(args["text_repeat"]["times"])


def run(case: dict[str, Any]) -> Any:
    spec, args = case["ids"], case["args"]
    if case["op"] == "check":
        return shardid.check_public_id(text_of(args), spec["prefix"], spec["encoding"])
    ids = build(spec)
    if case["op"] == "encode":
        return ids.encode(int(args["id"]))
    return ids.decode(text_of(args))


@pytest.mark.parametrize("case", FILE["cases"], ids=lambda c: c["name"])
def test_case(case: dict[str, Any]) -> None:
    assert outcome(lambda: run(case), case["expect"]) == case["expect"]


@pytest.mark.parametrize("case", FILE["invalid"], ids=lambda c: c["name"])
def test_invalid(case: dict[str, Any]) -> None:
    got = outcome(lambda: build(case["ids"]), case["expect"])
    assert got == case["expect"]
    with pytest.raises(ValueError):
        build(case["ids"])


@pytest.mark.parametrize("entry", FILE["patterns"], ids=lambda p: f"{p['encoding']}:{p['prefix']}")
def test_patterns_match_every_text_of_their_format(entry: dict[str, Any]) -> None:
    ids = shardid.PublicIds(KEY, entry["prefix"], entry["encoding"], layout=shardid.Layout.DISCORD)
    assert ids.pattern == entry["pattern"]
    assert ids.text_len == entry["text_len"]
    pattern = re.compile(ids.pattern)
    for n in (0, 1, 2**63 - 1, 2**64 - 1, 123456789):
        text = ids.encode(n)
        assert pattern.fullmatch(text), text
        assert pattern.fullmatch(text + "x") is None


@pytest.mark.parametrize("case", FILE["keys_text"], ids=lambda c: c["name"])
def test_keys_as_text(case: dict[str, Any]) -> None:
    def made() -> str:
        ids = shardid.PublicIds.from_keys(case["keys"], case["prefix"], case["encoding"])
        return ids.encode(int(case["id"]))

    assert outcome(made, case["expect"]) == case["expect"]


def test_the_example_in_the_issue_shape() -> None:
    notes = shardid.PublicIds(key=KEY, prefix="note", encoding="base32")
    text = notes.encode(4036916263258161152)
    assert text == "note_0923h26jsg2d8g"
    assert notes.decode(text) == 4036916263258161152
    assert notes.decode(text.upper()) == 4036916263258161152
    assert notes.encode("4036916263258161152") == text
    assert notes.check(text) == 0


def test_errors_are_value_errors_with_their_fields() -> None:
    notes = shardid.PublicIds(KEY, "note")
    with pytest.raises(shardid.PublicIdPrefixError) as prefix:
        notes.decode("user_0923h26jsg2d8g")
    assert isinstance(prefix.value, ValueError) and prefix.value.code == "PUBLIC_ID_PREFIX"
    with pytest.raises(shardid.PublicIdAlphabetError) as alphabet:
        notes.decode("note_0923h26jsg2d8\u043e")
    assert alphabet.value.position == 18
    with pytest.raises(shardid.PublicIdLengthError) as length:
        notes.decode("note_0923")
    assert length.value.expected == 14
    other = shardid.PublicIds(b"another key 16 b", "note", key_version=3)
    with pytest.raises(shardid.UnknownKeyVersionError) as version:
        notes.decode(other.encode(5))
    assert version.value.version == 3
    with pytest.raises(shardid.InvalidIdError):
        notes.encode(2**63)
    with pytest.raises(shardid.InvalidIdError):
        notes.encode(-1)


def test_wrong_types_are_type_errors() -> None:
    notes = shardid.PublicIds(KEY, "note")
    for bad in (None, 5, b"note_0923h26jsg2d8g", ["note_0923h26jsg2d8g"]):
        with pytest.raises(TypeError):
            notes.decode(bad)  # type: ignore[arg-type]
    for key in ("0123456789abcdef", None, 16, memoryview(KEY)):
        with pytest.raises(TypeError):
            shardid.PublicIds(key, "note")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        shardid.PublicIds(KEY, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        shardid.PublicIds(KEY, "note", old_keys=[(1, KEY)])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        notes.encode(1.5)  # type: ignore[arg-type]
    # A bytearray key is a key.
    assert shardid.PublicIds(bytearray(KEY), "note").encode(5) == notes.encode(5)


def test_a_lone_surrogate_is_refused_not_crashed_on() -> None:
    notes = shardid.PublicIds(KEY, "note")
    with pytest.raises(shardid.ShardIdError) as e:
        notes.decode("note_0923h26jsg2d8\udc80")
    assert isinstance(e.value, ValueError)


def test_the_key_never_shows() -> None:
    old = b"\x01" * 16
    notes = shardid.PublicIds(KEY, "note", key_version=2, old_keys={1: old})
    shown = repr(notes)
    assert shown == (
        "PublicIds(prefix=\"note\", encoding=\"base32\", key_versions=[2, 1], layout=Layout.INSTAGRAM)"
    )
    assert "0123456789" not in shown and "\\x01" not in shown
    assert not hasattr(notes, "__dict__")
    with pytest.raises(TypeError):
        pickle.dumps(notes)
    # An error's message never shows the value a refused text decodes to.
    other = shardid.PublicIds(b"another key 16 b", "note").encode(12345)
    try:
        value = notes.decode(other)
    except shardid.PublicIdMismatchError as e:
        assert re.search(r"\d{6}", str(e)) is None
    except shardid.UnknownKeyVersionError:
        pass
    else:
        assert value != 12345


def test_rotation() -> None:
    old = shardid.PublicIds(KEY, "note", "base58", key_version=1)
    new = shardid.PublicIds(b"another key 16 b", "note", "base58", key_version=2, old_keys={1: KEY})
    assert new.key_version == 2 and new.key_versions == [2, 1]
    for n in range(1000, 2000):
        assert new.decode(old.encode(n)) == n
        assert new.decode(new.encode(n)) == n
        assert new.encode(n) != old.encode(n)


def test_threads_share_one_object() -> None:
    notes = shardid.PublicIds(KEY, "note", "base62")
    errors: list[BaseException] = []

    def work(start: int) -> None:
        try:
            for n in range(start, start + 20000):
                assert notes.decode(notes.encode(n)) == n
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    on_threads(functools.partial(work, i * 100000) for i in range(4))
    assert errors == []


def test_check_public_id_needs_no_key() -> None:
    text = shardid.PublicIds(KEY, "sk_live", "base32check", key_version=9).encode(77)
    assert shardid.check_public_id(text, "sk_live", "base32check") == 9
    with pytest.raises(shardid.PublicIdCheckError):
        shardid.check_public_id(text[:-1] + ("0" if text[-1] != "0" else "1"), "sk_live", "base32check")
    with pytest.raises(shardid.InvalidArgumentError):
        shardid.check_public_id(text, "sk_live", "base64")  # type: ignore[arg-type]
