"""pydantic v2 types for shardid IDs: exact in JSON, validated by a layout.

IDs above 2**53 lose digits in JavaScript's ``JSON.parse``, so in JSON mode they are written as
decimal strings; in Python mode they stay ``int``. Input is an ``int`` or a decimal string that
the layout could have made; a ``float`` (``4.036916426399811e18`` has already lost digits), a
``bool``, a sign or a space is refused::

    from pydantic import BaseModel
    from shardid.pydantic import ShardId

    class Note(BaseModel):
        id: ShardId                      # any ID of a signed 64-bit column: 0 ..= 2**63 - 1

    Note(id="4036916263258161152").model_dump_json()   # '{"id":"4036916263258161152"}'

For one layout's IDs (Discord's are unsigned), use ``shard_id(Layout.DISCORD)``.

Public IDs (:class:`shardid.PublicIds`) instead of the numbers: ``public_id(ids)`` is an ``int``
in Python and its public ID in JSON, and JSON input must be one of its public IDs::

    notes = PublicIds.from_keys(os.environ["SHARDID_PUBLIC_ID_KEYS"], "note")

    class Note(BaseModel):
        id: public_id(notes)

    Note(id=4036916263258161152).model_dump_json()      # '{"id":"note_0923h26jsg2d8g"}'
    Note.model_validate_json('{"id":"note_0923h26jsg2d8g"}').id   # 4036916263258161152

An API that shows its keys as UUIDs (a ``uuid`` column; ``Layout.to_uuid``, the UUIDv7 bridge) while
the code keeps the 64-bit ID: ``ShardIdUuid`` (or ``shard_id_uuid(layout)``) is an ``int`` in
Python and the ID's UUIDv7 in JSON; input is the UUID (text or ``uuid.UUID``) or, from clients
that still send the number, the ID itself::

    class Note(BaseModel):
        id: ShardIdUuid

    Note(id=4036916263258161152).model_dump_json()   # '{"id":"01813ba5-...-..."}'
    Note.model_validate_json('{"id":"01813ba5-..."}').id   # 4036916263258161152
"""

from __future__ import annotations

import uuid as _uuid
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import core_schema

from shardid._shardid import Layout, PublicIds

__all__ = [
    "PublicIdValidator",
    "ShardId",
    "ShardIdUuid",
    "ShardIdUuidValidator",
    "ShardIdValidator",
    "public_id",
    "shard_id",
    "shard_id_uuid",
]


class ShardIdValidator:
    """The pydantic schema of an ID of ``layout``: put it in ``Annotated[int, ...]``."""

    def __init__(self, layout: Layout = Layout.INSTAGRAM) -> None:
        self.layout = layout

    def _validate(self, value: Any) -> int:
        if isinstance(value, (bool, float)):
            # A float has already lost digits above 2**53; a bool is not a number here.
            raise ValueError(f"an ID must be an int or a decimal string, not {type(value).__name__}")
        try:
            return self.layout.validate_id(value)
        except TypeError as e:  # pydantic reports ValueErrors, not TypeErrors
            raise ValueError(str(e)) from None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            self._validate,
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json"),
        )

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return {
            "type": "string",
            "pattern": "^[0-9]{1,20}$",
            "description": f"a 64-bit ID of {self.layout!r}, as a decimal string",
        }

    def __repr__(self) -> str:
        return f"ShardIdValidator({self.layout!r})"


class PublicIdValidator:
    """The pydantic schema of an ID shown as its public ID under ``ids``: put it in
    ``Annotated[int, ...]`` (or use :func:`public_id`). JSON input is a public ID only (a raw
    number there would let clients bypass the public form); Python input is a public ID or an
    ``int`` of the layout (a row read from the database)."""

    def __init__(self, ids: PublicIds) -> None:
        self.ids = ids

    def _validate(self, value: Any, info: core_schema.ValidationInfo) -> int:
        if isinstance(value, str):
            return self.ids.decode(value)
        if info.mode == "json" or isinstance(value, (bool, float)) or not isinstance(value, int):
            raise ValueError(f"a public ID ({self.ids.prefix or 'no prefix'}, {self.ids.encoding}) is a string, not {type(value).__name__}")
        return self.ids.layout.validate_id(value)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.with_info_plain_validator_function(
            self._validate,
            serialization=core_schema.plain_serializer_function_ser_schema(self.ids.encode, when_used="json"),
        )

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return {
            "type": "string",
            "pattern": f"^{self.ids.pattern}$",
            "description": f"a public ID ({self.ids.encoding}, prefix {self.ids.prefix!r})",
        }

    def __repr__(self) -> str:
        # Never the key: PublicIds' own repr shows none.
        return f"PublicIdValidator({self.ids!r})"


class ShardIdUuidValidator:
    """The pydantic schema of an ID of ``layout`` shown as its UUIDv7 (``Layout.to_uuid``): put it
    in ``Annotated[int, ...]`` (or use :func:`shard_id_uuid`). The value is the ID, an ``int``;
    JSON has its UUID. Input is a UUID made by ``to_uuid`` of this layout (text or
    ``uuid.UUID``; any other UUID is refused, never read as a wrong ID) or the ID itself (an
    ``int`` or a decimal string), so clients can move from the number to the UUID one by one."""

    def __init__(self, layout: Layout = Layout.INSTAGRAM) -> None:
        self.layout = layout

    def _validate(self, value: Any) -> int:
        if isinstance(value, (bool, float)):
            raise ValueError(f"an ID must be a UUID, an int or a decimal string, not {type(value).__name__}")
        try:
            if isinstance(value, _uuid.UUID) or (isinstance(value, str) and not value.isdecimal()):
                return self.layout.from_uuid(value)
            return self.layout.validate_id(value)
        except TypeError as e:  # pydantic reports ValueErrors, not TypeErrors
            raise ValueError(str(e)) from None

    def _serialize(self, value: int) -> str:
        return str(self.layout.to_uuid(value))

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            self._validate,
            serialization=core_schema.plain_serializer_function_ser_schema(self._serialize, when_used="json"),
        )

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return {
            "type": "string",
            "format": "uuid",
            "description": f"a 64-bit ID of {self.layout!r}, as its UUIDv7",
        }

    def __repr__(self) -> str:
        return f"ShardIdUuidValidator({self.layout!r})"


def shard_id_uuid(layout: Layout) -> Any:
    """The type of an ID of ``layout`` shown as its UUIDv7: ``id: shard_id_uuid(Layout.TWITTER)``."""
    return Annotated[int, ShardIdUuidValidator(layout)]


def public_id(ids: PublicIds) -> Any:
    """The type of an ID shown as its public ID under ``ids``: ``id: public_id(notes)``."""
    return Annotated[int, PublicIdValidator(ids)]


def shard_id(layout: Layout) -> Any:
    """The type of an ID of ``layout``: ``id: shard_id(Layout.DISCORD)``."""
    return Annotated[int, ShardIdValidator(layout)]


#: An ID of a signed 64-bit column (Instagram's, Twitter's, Sonyflake's layouts): 0 ..= 2**63 - 1.
ShardId = Annotated[int, ShardIdValidator(Layout.INSTAGRAM)]

#: An ID of Instagram's layout (``shard_id_uuid`` for another), shown as its UUIDv7 in JSON.
ShardIdUuid = Annotated[int, ShardIdUuidValidator(Layout.INSTAGRAM)]
