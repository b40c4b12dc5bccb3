"""Django REST framework: IDs as decimal strings in JSON, validated by the layout.

JavaScript's ``JSON.parse`` rounds numbers above 2**53, and most shardid IDs are above it, so
:class:`ShardIdField` writes IDs as strings and reads an ``int`` or a decimal string. A
``ModelSerializer`` uses it for every :class:`shardid.django.ShardIdField` of its model without
being told (the model field registers it when DRF is installed)::

    class NoteSerializer(serializers.ModelSerializer):
        class Meta:
            model = Note
            fields = ["id", "text"]

    NoteSerializer(note).data   # {"id": "4036916263258161152", "text": "..."}
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from shardid._shardid import Layout, PublicIds

__all__ = ["PublicIdField", "ShardIdField"]


class ShardIdField(serializers.Field):
    """An ID: a decimal string out, an ``int`` or a decimal string in, checked by ``layout``
    (default: the layout of ``settings.SHARDID``)."""

    default_error_messages = {
        "invalid": "A valid ID is required: an integer or a decimal string.",
        "not_an_id": "Not an ID of this layout: {reason}",
    }

    def __init__(self, *, layout: Layout | None = None, **kwargs: Any) -> None:
        # A model serializer passes the model field's numeric bounds: the layout checks those.
        for key in ("min_value", "max_value", "model_field"):
            kwargs.pop(key, None)
        self._layout = layout
        super().__init__(**kwargs)

    @property
    def layout(self) -> Layout:
        if self._layout is None:
            from shardid.django import configured_layout

            self._layout = configured_layout()
        return self._layout

    def to_representation(self, value: Any) -> str:
        return str(int(value))

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, (int, str)):
            self.fail("invalid")
        try:
            return self.layout.validate_id(data)
        except ValueError as e:
            self.fail("not_an_id", reason=str(e))
        raise AssertionError("unreachable")  # fail() raises


class PublicIdField(serializers.Field):
    """An ID as its public ID (:class:`shardid.PublicIds`): ``"note_0923h26jsg2d8g"`` out, the
    same text in (decoded to the ID), anything else refused with the reason. The keys are
    Django's (``settings.SHARDID_PUBLIC_ID_KEYS``) unless ``public_ids`` is given::

        class NoteSerializer(serializers.ModelSerializer):
            id = PublicIdField("note")
            class Meta:
                model = Note
                fields = ["id", "text"]
    """

    default_error_messages = {
        "invalid": "A public ID is required: a string.",
        "not_a_public_id": "Not a public ID of this type: {reason}",
    }

    def __init__(self, prefix: str = "", encoding: str = "base32", *, layout: Layout | None = None, public_ids: PublicIds | None = None, **kwargs: Any) -> None:
        for key in ("min_value", "max_value", "model_field"):
            kwargs.pop(key, None)
        # Not `_args`: DRF keeps the constructor's arguments there, to copy the field.
        self._format = (prefix, encoding, layout)
        self._public_ids = public_ids
        super().__init__(**kwargs)

    @property
    def public_ids(self) -> PublicIds:
        if self._public_ids is not None:
            return self._public_ids
        from shardid.django.public import public_ids

        return public_ids(*self._format)

    def to_representation(self, value: Any) -> str:
        return self.public_ids.encode(value)

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            return self.public_ids.decode(data)
        except ValueError as e:
            self.fail("not_a_public_id", reason=str(e))
        raise AssertionError("unreachable")  # fail() raises


def register() -> None:
    """Makes ``ModelSerializer`` map :class:`shardid.django.ShardIdField` to :class:`ShardIdField`
    (done by the model field itself when DRF is installed)."""
    from shardid.django import ShardIdField as ModelField

    serializers.ModelSerializer.serializer_field_mapping[ModelField] = ShardIdField
