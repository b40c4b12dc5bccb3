"""The Django app ``shardid.django``: add ``"shardid.django"`` to ``INSTALLED_APPS`` and its
:class:`ShardIdConfig` registers the system checks of ``settings.SHARDID`` and the test
runner's hook when Django starts. Without it the fields still work, and register both the
first time a model uses one."""

from __future__ import annotations

from django.apps import AppConfig


class ShardIdConfig(AppConfig):
    """The app ``shardid.django`` (optional in ``INSTALLED_APPS``): its ``ready()`` registers
    the system checks of ``settings.SHARDID`` and the test runner's hook."""

    name = "shardid.django"
    label = "shardid"
    verbose_name = "shardid"

    def ready(self) -> None:
        from shardid.django.checks import register

        register()
