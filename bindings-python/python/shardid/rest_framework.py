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

from shardid._shardid import Layout

__all__ = ["ShardIdField"]


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


def register() -> None:
    """Makes ``ModelSerializer`` map :class:`shardid.django.ShardIdField` to :class:`ShardIdField`
    (done by the model field itself when DRF is installed)."""
    from shardid.django import ShardIdField as ModelField

    serializers.ModelSerializer.serializer_field_mapping[ModelField] = ShardIdField
