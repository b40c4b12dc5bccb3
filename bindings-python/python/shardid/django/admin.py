"""shardid's section of the Django admin (imported by the admin's autodiscovery when
``"shardid.django"`` and ``"django.contrib.admin"`` are installed): leases, tags and topics,
read-only, with the figures ``shardid status`` prints (:mod:`shardid.status`; nothing is
computed here).

Each page is a change list with no add, change, history or delete view behind it (their URLs do
not exist), for staff with the "Can view" permission of its model (superusers have it). It reads
the database of the project's lease (``SHARDID["lease"]["using"]``, ``"default"``) and the
schemas the project's migrations install segments and the dictionary in
(:class:`~shardid.django.InstallSegments`, :class:`~shardid.django.InstallDictionary`), once per
page view, over a connection of its own; where a feature's table is absent the page says it is
not installed."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from django.template.response import TemplateResponse
from django.urls import path

from shardid.django.models import Lease, Tag, Topic

__all__ = ["LeaseAdmin", "StatusAdmin", "TagAdmin", "TopicAdmin"]


class StatusAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """A read-only page of one section of :func:`shardid.django.status.page` (``section``:
    ``"leases"``, ``"tags"`` or ``"topics"``)."""

    section = ""

    def has_add_permission(self, request: Any) -> bool:
        """Nothing is added here: the rows are the lease's, the segments' and the dictionary's."""
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        """Nothing is changed here (a lease's row written by hand can repeat IDs)."""
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        """Nothing is deleted here (a tag or topic deleted repeats or loses IDs)."""
        return False

    def get_urls(self) -> list[Any]:
        """The change list only: no add, change, history or delete URL exists."""
        info = self.opts.app_label, self.opts.model_name
        return [path("", self.admin_site.admin_view(self.changelist_view), name="%s_%s_changelist" % info)]

    def changelist_view(self, request: Any, extra_context: dict[str, Any] | None = None) -> Any:
        """The section's rows, one table per database or schema, read once for the page."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        from shardid.django.status import page

        context = {
            **self.admin_site.each_context(request),
            "title": self.opts.verbose_name_plural.capitalize(),
            "subtitle": None,
            "opts": self.opts,
            "app_label": self.opts.app_label,
            **page(self.section),
            **(extra_context or {}),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/shardid/status.html", context)


@admin.register(Lease)
class LeaseAdmin(StatusAdmin):
    """The leases: each shard's holder, since when, ceiling and expiry."""

    section = "leases"


@admin.register(Tag)
class TagAdmin(StatusAdmin):
    """The tags of dense IDs: next number, segment size, last take, burn rate, years left."""

    section = "tags"


@admin.register(Topic)
class TopicAdmin(StatusAdmin):
    """The dictionary's topics: strings and last ID."""

    section = "topics"
