"""Django integration: :class:`ShardIdField`, a ``BigIntegerField`` whose default is a new
shardid ID, usable as ``primary_key=True``; :class:`DenseIdField`; the migration operations
that install shardid's SQL; the dictionary on Django's connections.

``DEFAULT_AUTO_FIELD = "shardid.django.ShardIdAutoField"`` keys every model Django adds an
``id`` to (in apps that do not pin their own) by shardid IDs: see :class:`ShardIdAutoField`.

Add ``"shardid.django"`` to ``INSTALLED_APPS`` (its :class:`~shardid.django.apps.ShardIdConfig`
registers the system checks when Django starts); the fields work without it too.

With no setting at all, or only a layout, each process leases a shard of its own through the
project's database the first time it makes an ID, so workers of a pre-fork server (gunicorn,
uWSGI, Celery) and copies of the app on other hosts never share one::

    SHARDID = {"layout": "instagram"}

On PostgreSQL the lease is an expiring lease (:mod:`shardid.postgres`) on a connection of the
process's own, made with Django's settings and driver (psycopg 3 or psycopg2); it holds behind
a transaction pooler (PgBouncer, Supavisor, RDS Proxy), and each shard's ceiling is kept in the
table ``shardid_leases``. On SQLite, lock files in a directory next to the database file
(``db.sqlite3-shardid``). The shards are ``0`` to ``max_shard - 1``: the last one is left for
the database's own ``next_id()`` (:class:`InstallPostgres`).

``layout`` is a preset name (``"instagram"``, ``"twitter"``, ``"sonyflake"``), a
:class:`shardid.Layout`, or a dict of :class:`shardid.Layout` keyword arguments. ``lease``
chooses the shards and where they are leased: ``{"shards": [0, 64]}``, ``{"using": "other"}``
(another database alias), ``{"ttl_ms": 10000}`` (how long a crashed process's shard stays
taken), ``{"kind": "session"}`` (advisory locks: direct connections only), or ``{"directory":
"/run/myapp/shards", "shards": [0, 64]}`` (lock files, for processes of one host). A fixed
``shard`` is for exactly one process, and warned about (``shardid.W001``).

IDs are made in the application, without a round trip to the database, and fit a signed
``BIGINT``: unsigned layouts such as Discord's are refused. Values saved into the field are
checked against the layout (model and form validation; ``-5`` is nobody's ID), and with Django
REST framework installed, a ``ModelSerializer`` writes the field as a decimal string (see
:mod:`shardid.rest_framework`): JavaScript's ``JSON.parse`` rounds integers above 2**53.

With PostgreSQL, the database can make IDs of the same layout itself (for raw SQL, bulk loads,
other services): install ``<schema>.next_id()`` with the migration operation
:class:`InstallPostgres` and make it the column's database default with :class:`NextId`::

    id = ShardIdField(primary_key=True, db_default=NextId("insta"))

Rows the application saves get the application's shard; rows inserted without an ``id`` get
the database's. Give the database a shard no process leases (the last one, by default): the
system checks say so if a migration's shard is among the leased ones (``shardid.E002``).
"""

from __future__ import annotations

from shardid.django.checks import check_settings
from shardid.django.conf import config_problems, configured_layout
from shardid.django.dictionary import dictionary
from shardid.django.fields import DenseIdField, NextId, ShardIdAutoField, ShardIdField, ShardIdUUIDField, validate_shard_id
from shardid.django.leases import _dense, dense_id, get_generator, next_id, release  # noqa: F401 (_dense: read by tests)
from shardid.django.operations import InstallDictionary, InstallPostgres, InstallSegments
from shardid.django.public import (
    PublicId,
    PublicIdConverter,
    PublicIdManager,
    PublicIdQuerySet,
    public_id_converter,
    public_ids,
    register_public_id_converter,
)
from shardid.django.serials import CreateSerial, NextSerial, SerialField, next_serial

__all__ = [
    "CreateSerial",
    "DenseIdField",
    "InstallDictionary",
    "InstallPostgres",
    "InstallSegments",
    "NextId",
    "NextSerial",
    "PublicId",
    "PublicIdConverter",
    "PublicIdManager",
    "PublicIdQuerySet",
    "SerialField",
    "ShardIdAutoField",
    "ShardIdField",
    "ShardIdUUIDField",
    "check_settings",
    "config_problems",
    "configured_layout",
    "dense_id",
    "dictionary",
    "get_generator",
    "next_id",
    "next_serial",
    "public_id_converter",
    "public_ids",
    "register_public_id_converter",
    "release",
    "validate_shard_id",
]
