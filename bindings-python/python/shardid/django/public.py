"""Django: public IDs (:class:`shardid.PublicIds`) for models and URLs, re-exported by
:mod:`shardid.django`.

A row's ID in a URL tells anyone when it was made and how many were made since; its public
ID (``note_0923h26jsg2d8g``) tells nothing without the key::

    # settings.py: 32 hex digits (python -c "import secrets; print(secrets.token_hex(16))"),
    # or VERSION:HEX pairs when rotating ("2:<new>,1:<old>": the highest version encodes).
    SHARDID_PUBLIC_ID_KEYS = os.environ["SHARDID_PUBLIC_ID_KEYS"]

    # models.py
    class Note(models.Model):
        id = ShardIdField(primary_key=True)
        public_id = PublicId("note")            # note.public_id: "note_0923h26jsg2d8g"
        objects = PublicIdManager()             # Note.objects.get_by_public_id("note_...")

    # urls.py: <note:pk> matches public IDs only and hands the view the primary key
    register_public_id_converter("note", prefix="note")
    urlpatterns = [path("notes/<note:pk>/", NoteDetail.as_view(), name="note")]
    reverse("note", kwargs={"pk": note.pk})     # "/notes/note_0923h26jsg2d8g/"

The keys come from ``settings.SHARDID_PUBLIC_ID_KEYS``, else from the environment variable of
that name; a name with ``KEY`` in it, so Django's error reports hide its value. No message of
this module shows a key, and no frame of it holds one when an exception leaves it: Django's
DEBUG page and Sentry show every frame's local variables, and Django's filter of error reports
(``sensitive_variables``, which this module also uses) is off under ``DEBUG``. A text that is not one of the model's public IDs is
``Note.DoesNotExist`` (so a view answers 404), never another row.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.views.decorators.debug import sensitive_variables

from shardid import Layout, PublicIds, ShardIdError
from shardid._shardid import _public_id_pattern

__all__ = [
    "PublicId",
    "PublicIdConverter",
    "PublicIdManager",
    "PublicIdQuerySet",
    "public_ids",
    "public_id_converter",
    "register_public_id_converter",
]

#: The setting, and the environment variable read when the setting is absent.
SETTING = "SHARDID_PUBLIC_ID_KEYS"
_HOW = (
    "32 hex digits (python -c 'import secrets; print(secrets.token_hex(16))'), or VERSION:HEX "
    "pairs separated by commas when rotating keys, the highest version current"
)

_lock = threading.Lock()
# By a digest of the keys, not the keys: nothing of this module keeps them.
_cache: dict[tuple[bytes, str, str, Layout], PublicIds] = {}


@sensitive_variables()
def _keys() -> str:
    """The keys as text: the setting, else the environment variable. Never shown anywhere: a
    value refused is let go before the error is raised (see the module's docs)."""
    from django.conf import settings

    value = getattr(settings, SETTING, None)
    if value is None:
        value = os.environ.get(SETTING)
    if isinstance(value, str):
        return value
    wrong = None if value is None else type(value).__name__
    del value
    if wrong is None:
        raise ImproperlyConfigured(f"public IDs need a key: set settings.{SETTING} (or the environment variable {SETTING}) to {_HOW}")
    raise ImproperlyConfigured(f"settings.{SETTING} must be a str: {_HOW}, not {wrong}")


def _layout(layout: Layout | None) -> Layout:
    if layout is not None:
        return layout
    from shardid.django import configured_layout

    return configured_layout()


def public_ids(prefix: str, encoding: str = "base32", layout: Layout | None = None) -> PublicIds:
    """The :class:`shardid.PublicIds` of ``prefix`` under the configured keys, for IDs of
    ``layout`` (default: the layout of ``settings.SHARDID``). Made once per keys, prefix,
    encoding and layout (a changed setting makes a new one)."""
    return _made(prefix, encoding, _layout(layout))


@sensitive_variables()
def _made(prefix: str, encoding: str, layout: Layout) -> PublicIds:
    """:func:`public_ids` once the layout is known. The keys are a local of this frame only
    while it runs: whatever leaves it (the core's refusal, a wrong type, an interrupt), they
    are deleted first, so no traceback shows them."""
    keys = _keys()
    refused: str | None = None
    try:
        cache_key = (hashlib.sha256(keys.encode()).digest(), prefix, encoding, layout)
        ids = _cache.get(cache_key)
        if ids is None:
            try:
                ids = PublicIds.from_keys(keys, prefix, encoding, layout=layout)  # type: ignore[arg-type]
            except ShardIdError as e:
                refused = str(e)  # the core's reason names the rule, never the value
            else:
                with _lock:
                    _cache[cache_key] = ids
    finally:
        del keys
    if refused is not None:
        raise ImproperlyConfigured(f"public IDs {prefix!r}: {refused}")
    assert ids is not None
    return ids


def _check_format(prefix: str, encoding: str) -> None:
    """Refuses a bad prefix or encoding when the model or URL is defined, not at first use."""
    try:
        _public_id_pattern(prefix, encoding)  # type: ignore[arg-type]
    except ShardIdError as e:
        raise ImproperlyConfigured(f"PublicId({prefix!r}, {encoding!r}): {e}") from None


class PublicId:
    """A model's public ID, computed from its primary key (or ``field``): ``note.public_id``.

    Not a column: nothing is stored, so adding it needs no migration, and a key rotation
    changes every public ID at once (old links keep working while the old key is listed).
    With :class:`PublicIdManager`, ``Note.objects.get_by_public_id(text)``.
    """

    def __init__(self, prefix: str, encoding: str = "base32", *, field: str | None = None, layout: Layout | None = None) -> None:
        _check_format(prefix, encoding)
        self.prefix = prefix
        self.encoding = encoding
        self.field = field
        self.layout = layout
        self.name = ""

    def contribute_to_class(self, cls: Any, name: str) -> None:
        self.name = name
        setattr(cls, name, self)
        # What get_by_public_id looks for, by attribute name (subclasses inherit it).
        cls._shardid_public_ids = {**getattr(cls, "_shardid_public_ids", {}), name: self}

    @property
    def public_ids(self) -> PublicIds:
        """The :class:`~shardid.PublicIds` of this field's prefix, encoding and layout, under
        the keys of ``SHARDID_PUBLIC_ID_KEYS``."""
        return public_ids(self.prefix, self.encoding, self.layout)

    def _attname(self, model: Any) -> str:
        return self.field if self.field is not None else model._meta.pk.attname

    @property
    def lookup(self) -> str:
        """The field to look a decoded ID up by."""
        return self.field if self.field is not None else "pk"

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = getattr(instance, self._attname(type(instance)))
        return None if value is None else self.public_ids.encode(value)

    def __set__(self, instance: Any, value: Any) -> None:
        raise AttributeError(f"{self.name} is made from the {self.field or 'primary key'}: set that instead")

    def decode(self, text: str) -> int:
        """The ID a public ID stands for (a ``ValueError`` subclass for any other text)."""
        return self.public_ids.decode(text)

    def __repr__(self) -> str:
        return f"PublicId({self.prefix!r}, {self.encoding!r})"


def _descriptor(model: Any, attribute: str | None) -> PublicId:
    found: dict[str, PublicId] = getattr(model, "_shardid_public_ids", {})
    if attribute is not None:
        if attribute not in found:
            raise ImproperlyConfigured(f"{model.__name__} has no PublicId named {attribute!r}")
        return found[attribute]
    if len(found) != 1:
        names = ", ".join(found) or "none"
        raise ImproperlyConfigured(f"{model.__name__} needs exactly one PublicId for get_by_public_id (it has {names}): name it with attribute=")
    return next(iter(found.values()))


class PublicIdQuerySet(models.QuerySet):  # type: ignore[type-arg]
    """A query set that finds rows by their public ID (``PublicIdManager`` returns it)."""

    def get_by_public_id(self, text: str, *, attribute: str | None = None) -> Any:
        """The row whose public ID is ``text``; ``DoesNotExist`` for any text that is not one
        of this model's public IDs (another type's, made under another key, altered)."""
        descriptor = _descriptor(self.model, attribute)
        try:
            value = descriptor.decode(text)
        except ShardIdError as e:
            raise self.model.DoesNotExist(f"no {self.model._meta.object_name} has that public ID: {e}") from e
        return self.get(**{descriptor.lookup: value})


class PublicIdManager(models.Manager.from_queryset(PublicIdQuerySet)):  # type: ignore[misc]
    """``objects = PublicIdManager()``: the default manager with ``get_by_public_id``."""


class PublicIdConverter:
    """A path converter for public IDs: matches their shape, gives the view the ID (an
    ``int``), and refuses (404) any text that is not one of them. Made per prefix by
    :func:`public_id_converter`."""

    prefix = ""
    encoding = "base32"
    layout: Layout | None = None
    regex = ""

    def to_python(self, value: str) -> int:
        # A ValueError (every public-ID error is one) means no match: a 404.
        return public_ids(self.prefix, self.encoding, self.layout).decode(value)

    def to_url(self, value: Any) -> str:
        return public_ids(self.prefix, self.encoding, self.layout).encode(value)

    def __repr__(self) -> str:
        return f"PublicIdConverter({self.prefix!r}, {self.encoding!r})"


def public_id_converter(prefix: str, encoding: str = "base32", layout: Layout | None = None) -> type[PublicIdConverter]:
    """The :class:`PublicIdConverter` of ``prefix`` (Django makes converters from classes)."""
    _check_format(prefix, encoding)
    attributes = {"prefix": prefix, "encoding": encoding, "layout": layout, "regex": _public_id_pattern(prefix, encoding)}  # type: ignore[arg-type]
    return type(f"PublicIdConverter_{prefix}_{encoding}", (PublicIdConverter,), attributes)


def register_public_id_converter(name: str, prefix: str, encoding: str = "base32", layout: Layout | None = None) -> None:
    """Registers ``<name:...>`` in URL patterns for public IDs of ``prefix``."""
    from django.urls import register_converter

    register_converter(public_id_converter(prefix, encoding, layout), name)


def check_public_id_keys(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """``shardid.E010``: a model has a :class:`PublicId` and the keys are missing or not in
    their format (checked at start-up rather than at the first request)."""
    from django.apps import apps

    users = [m for m in apps.get_models() if getattr(m, "_shardid_public_ids", None)]
    if not users:
        return []
    descriptor = next(iter(users[0]._shardid_public_ids.values()))
    try:
        descriptor.public_ids  # noqa: B018 (builds it: the keys are parsed and checked)
    except ImproperlyConfigured as e:
        return [checks.Error(str(e), hint=f"{SETTING}: {_HOW}", obj=users[0], id="shardid.E010")]
    return []


