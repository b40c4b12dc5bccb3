"""Django REST framework: IDs as decimal strings in JSON, validated by the layout.

JavaScript's ``JSON.parse`` rounds numbers above 2**53, and most shardid IDs are above it, so
:class:`ShardIdField` writes IDs as strings and reads an ``int`` or a decimal string. A
``ModelSerializer`` uses it for every :class:`shardid.django.ShardIdField` of its model without
being told (the model field registers it when DRF is installed), and for the relations that
point at one: a ``ForeignKey``, ``OneToOneField`` or ``ManyToManyField`` to a model keyed by a
shard ID, and the reverse relations, are written as strings (lists of strings) and read from
strings or ints::

    class NoteSerializer(serializers.ModelSerializer):
        class Meta:
            model = Note
            fields = ["id", "text", "tags"]     # tags: a reverse relation

    NoteSerializer(note).data   # {"id": "4036916263258161152", "text": "...", "tags": ["4036...", ...]}

A :class:`shardid.django.ShardIdUUIDField` (the ID kept in a ``uuid`` column) and the relations
to a model keyed by one are written as the ID's UUIDv7 by :class:`ShardIdUuidField`, which reads
the UUID or the ID itself.
"""

from __future__ import annotations

import uuid
from typing import Any

from rest_framework import serializers

from shardid._shardid import Layout, PublicIds

__all__ = ["PublicIdField", "ShardIdField", "ShardIdSlugRelatedField", "ShardIdUuidField"]


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
        """The layout values are checked against: the field's own, else ``settings.SHARDID``'s."""
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


class ShardIdUuidField(ShardIdField):
    """An ID shown as its UUIDv7 (``Layout.to_uuid``): the UUID's text out; in, the UUID's text
    or the ID itself (an ``int`` or a decimal string), so clients can move from the number to
    the UUID one by one. A UUID the bridge did not make for the layout is refused with the
    reason, never read as a wrong ID."""

    default_error_messages = {
        "invalid": "A valid ID is required: a UUID, an integer or a decimal string.",
        "not_an_id": "Not an ID or a UUID of this layout: {reason}",
    }

    def to_representation(self, value: Any) -> str:
        return str(self.layout.to_uuid(int(value)))

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, uuid.UUID) or (isinstance(data, str) and not data.isdecimal()):
            try:
                return self.layout.from_uuid(data)
            except ValueError as e:
                self.fail("not_an_id", reason=str(e))
        return super().to_internal_value(data)


class PublicIdField(serializers.Field):
    """An ID as its public ID (:class:`shardid.PublicIds`): ``"note_0923h26jsg2d8g"`` out, the
    same text in (decoded to the ID), anything else refused with the reason. The keys are
    Django's (``settings.SHARDID_PUBLIC_ID_KEYS``) unless ``public_ids`` is given::

        class NoteSerializer(serializers.ModelSerializer):
            id = PublicIdField("note")
            class Meta:
                model = Note
                fields = ["id", "text"]

    Beside the model's :class:`shardid.django.PublicId` the field may take its name
    (``public_id = PublicIdField("note")``, with ``"public_id"`` in ``fields``): it then reads
    and writes the ID that descriptor encodes (the primary key, or its ``field``), with the
    descriptor's prefix and encoding (another prefix or encoding is refused when the serializer
    is built, naming the descriptor's).
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

    def bind(self, field_name: str, parent: Any) -> None:
        """DRF's binding of the field to its serializer; beside a model's
        :class:`~shardid.django.PublicId` of the same name, the field then stands for the ID
        it encodes (``ImproperlyConfigured`` for another prefix or encoding than its)."""
        super().bind(field_name, parent)
        # A model's PublicId descriptor of the same name holds the text already made: read and
        # write the ID it encodes instead (encoding the text again would fail).
        from shardid.django.public import PublicId

        model: Any = getattr(getattr(parent, "Meta", None), "model", None)
        source_attrs: list[str] = getattr(self, "source_attrs", [])  # set by DRF's bind()
        descriptor = getattr(model, self.source, None) if model is not None and len(source_attrs) == 1 else None
        if model is None or not isinstance(descriptor, PublicId):
            return
        prefix, encoding, _ = self._format
        if self._public_ids is None and (prefix, encoding) != (descriptor.prefix, descriptor.encoding):
            from django.core.exceptions import ImproperlyConfigured

            raise ImproperlyConfigured(
                f"{type(parent).__name__}.{field_name} = PublicIdField({prefix!r}, {encoding!r}) reads "
                f"{model.__name__}.{self.source}, a PublicId({descriptor.prefix!r}, {descriptor.encoding!r}): "
                f"use PublicIdField({descriptor.prefix!r}, {descriptor.encoding!r}), the descriptor's"
            )
        if self._format[2] is None:
            self._format = (prefix, encoding, descriptor.layout)
        self.source_attrs = [descriptor._attname(model)]

    @property
    def public_ids(self) -> PublicIds:
        """The :class:`~shardid.PublicIds` that encodes and decodes this field's values."""
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


class ShardIdSlugRelatedField(serializers.SlugRelatedField):
    """A ``SlugRelatedField`` whose slug is a shard ID (a ``ForeignKey(to_field=...)`` naming a
    :class:`shardid.django.ShardIdField` that is not the primary key): the ID as a string out,
    an ``int`` or a decimal string in."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.id_field = ShardIdField()
        super().__init__(*args, **kwargs)

    def to_representation(self, obj: Any) -> str:
        return self.id_field.to_representation(super().to_representation(obj))

    def to_internal_value(self, data: Any) -> Any:
        return super().to_internal_value(self.id_field.to_internal_value(data))


def _uuid_field() -> Any:
    from shardid.django import ShardIdUUIDField

    return ShardIdUUIDField


def _shard_id_field(field: Any, model_field: Any = None) -> bool:
    """Whether the model field ``field`` holds shard IDs: a :class:`shardid.django.ShardIdField`
    (or ``model_field``), or a relation whose target field does (a child model's
    ``parent_ptr``)."""
    from shardid.django import ShardIdField

    ModelField = model_field or ShardIdField  # noqa: N806 - a class

    seen = 0
    while field is not None and seen < 16:
        if isinstance(field, ModelField):
            return True
        field = getattr(field, "target_field", None) if getattr(field, "is_relation", False) else None
        seen += 1
    return False


def _as_string(field_class: Any, field_kwargs: dict[str, Any], relation_info: Any) -> tuple[Any, dict[str, Any]]:
    """A relational field of ``ModelSerializer`` to a model keyed by shard IDs, made to write
    them as strings: ``pk_field`` for a primary-key relation, a slug relation's own class."""
    related = relation_info.related_model
    if related is None or isinstance(related, str):
        return field_class, field_kwargs
    if issubclass(field_class, serializers.PrimaryKeyRelatedField):
        if field_kwargs.get("pk_field") is None and _shard_id_field(related._meta.pk):
            field_kwargs = {**field_kwargs, "pk_field": ShardIdField()}
        elif field_kwargs.get("pk_field") is None and _shard_id_field(related._meta.pk, _uuid_field()):
            field_kwargs = {**field_kwargs, "pk_field": ShardIdUuidField()}
    elif field_class is serializers.SlugRelatedField and "slug_field" in field_kwargs:
        if _shard_id_field(related._meta.get_field(field_kwargs["slug_field"])):
            field_class = ShardIdSlugRelatedField
    return field_class, field_kwargs


def register() -> None:
    """Makes ``ModelSerializer`` map :class:`shardid.django.ShardIdField` to :class:`ShardIdField`,
    and the relations to models keyed by one to fields that write strings (done by the model
    field itself when DRF is installed; once).

    DRF builds relational fields in ``ModelSerializer.build_relational_field`` with no table to
    extend (unlike ``serializer_field_mapping``): it is wrapped, leaving every other relation as
    DRF makes it, and a serializer's own declarations (``pk_field=``, its own
    ``serializer_related_field``) win."""
    from shardid.django import ShardIdField as ModelField

    serializers.ModelSerializer.serializer_field_mapping[ModelField] = ShardIdField
    serializers.ModelSerializer.serializer_field_mapping[_uuid_field()] = ShardIdUuidField
    build = serializers.ModelSerializer.build_relational_field
    if getattr(build, "_shardid", False):
        return

    def build_relational_field(self: Any, field_name: str, relation_info: Any) -> tuple[Any, dict[str, Any]]:
        field_class, field_kwargs = build(self, field_name, relation_info)
        return _as_string(field_class, field_kwargs, relation_info)

    build_relational_field._shardid = True  # type: ignore[attr-defined]
    build_relational_field.__doc__ = build.__doc__
    serializers.ModelSerializer.build_relational_field = build_relational_field  # type: ignore[method-assign]
