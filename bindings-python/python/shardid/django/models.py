"""The admin's entries for what shardid keeps in the database: leases, tags and topics
(:mod:`shardid.django.admin`). Unmanaged models: Django creates no table for them and no
migration, and nothing reads them through the ORM. They give the admin its index entries, its
URLs and a "Can view" permission to grant to staff who are not superusers; the rows each page
shows come from :mod:`shardid.status`, the figures ``shardid status`` prints."""

from __future__ import annotations

from django.db import models


class _Status(models.Model):
    """What the admin's status pages show: tables shardid's SQL made, read as they are."""

    class Meta:
        """Unmanaged (no table is created, no migration written) and viewable only."""

        abstract = True
        managed = False
        default_permissions = ("view",)


class Lease(_Status):
    """A shard's lease (the table ``shardid_leases``): its holder, since when, its ceiling and
    its expiry."""

    shard = models.BigIntegerField(primary_key=True)

    class Meta(_Status.Meta):
        """The leases' table; unmanaged and viewable only, as every status entry."""

        db_table = "shardid_leases"
        verbose_name = "lease"


class Tag(_Status):
    """A tag of dense IDs from segments (the table ``<schema>.shardid_tags``): its next number,
    segment size, last take, burn rate and years left."""

    tag = models.TextField(primary_key=True)

    class Meta(_Status.Meta):
        """The tags' table; unmanaged and viewable only, as every status entry."""

        db_table = "shardid_tags"
        verbose_name = "tag"


class Topic(_Status):
    """A topic of the string <-> ID dictionary (the table ``<schema>.shardid_topics``): its
    strings and last ID."""

    topic = models.TextField(primary_key=True)

    class Meta(_Status.Meta):
        """The topics' table; unmanaged and viewable only, as every status entry."""

        db_table = "shardid_topics"
        verbose_name = "topic"
