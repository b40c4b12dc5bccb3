"""The admin's entries for what shardid keeps in the database: leases, tags and topics
(:mod:`shardid.django.admin`). Unmanaged models: Django creates no table for them and no
migration, and nothing reads them through the ORM. They give the admin its index entries, its
URLs and a "Can view" permission to grant to staff who are not superusers; the rows each page
shows come from :mod:`shardid.status`, the figures ``shardid status`` prints."""

from __future__ import annotations

from django.db import models


class Lease(models.Model):
    """A shard's lease (the table ``shardid_leases``): its holder, since when, its ceiling and
    its expiry."""

    shard = models.BigIntegerField(primary_key=True)

    class Meta:
        """Unmanaged (no table is created, no migration written) and viewable only."""

        managed = False
        db_table = "shardid_leases"
        default_permissions = ("view",)
        verbose_name = "lease"


class Tag(models.Model):
    """A tag of dense IDs from segments (the table ``<schema>.shardid_tags``): its next number,
    segment size, last take, burn rate and years left."""

    tag = models.TextField(primary_key=True)

    class Meta:
        """Unmanaged (no table is created, no migration written) and viewable only."""

        managed = False
        db_table = "shardid_tags"
        default_permissions = ("view",)
        verbose_name = "tag"


class Topic(models.Model):
    """A topic of the string <-> ID dictionary (the table ``<schema>.shardid_topics``): its
    strings and last ID."""

    topic = models.TextField(primary_key=True)

    class Meta:
        """Unmanaged (no table is created, no migration written) and viewable only."""

        managed = False
        db_table = "shardid_topics"
        default_permissions = ("view",)
        verbose_name = "topic"
