"""The exceptions shardid raises: one class per error kind of the core.

Every class has a stable ``code`` (the same string as the C status names and the JS
``err.code``) and carries the error's fields as attributes, e.g. ``err.retry_at_ms``. Errors
about the input also subclass :class:`ValueError`; the two about the generator's state
(:class:`ClockMovedBackwardsError`, :class:`SequenceExhaustedError`) do not.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "ClockMovedBackwardsError",
    "ForkedGeneratorError",
    "InvalidArgumentError",
    "InvalidIdError",
    "InvalidLayoutError",
    "InvalidShardCountError",
    "LeaseFileError",
    "NoFreeShardError",
    "ScatterOverflowError",
    "SequenceExhaustedError",
    "SequenceOutOfRangeError",
    "ShardIdError",
    "ShardOutOfRangeError",
    "TimestampBeforeEpochError",
    "TimestampPastExpiryError",
]


class ShardIdError(Exception):
    """Base class of every error shardid raises (besides :class:`TypeError` for a wrong type)."""

    code: ClassVar[str] = "SHARDID_ERROR"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        # Plain attributes, so the default exception pickling keeps them.
        self.__dict__.update(fields)


class InvalidLayoutError(ShardIdError, ValueError):
    """The layout's parameters do not describe a usable ID space."""

    code = "INVALID_LAYOUT"
    reason: str


class ShardOutOfRangeError(ShardIdError, ValueError):
    """A shard number does not fit the layout's shard field."""

    code = "SHARD_OUT_OF_RANGE"
    shard: int
    max: int


class SequenceOutOfRangeError(ShardIdError, ValueError):
    """A sequence number does not fit the layout's sequence field."""

    code = "SEQUENCE_OUT_OF_RANGE"
    sequence: int
    max: int


class InvalidShardCountError(ShardIdError, ValueError):
    """A count of logical shards that is zero or more than the shard field holds."""

    code = "INVALID_SHARD_COUNT"
    count: int
    max: int


class InvalidIdError(ShardIdError, ValueError):
    """The value is not an ID the layout can produce (or not an integer ID at all)."""

    code = "INVALID_ID"
    id: object


class ScatterOverflowError(ShardIdError, ValueError):
    """Scattering the ID would leave the layout's ID range."""

    code = "SCATTER_OVERFLOW"
    id: int


class TimestampBeforeEpochError(ShardIdError, ValueError):
    """A timestamp earlier than the layout's epoch."""

    code = "TIMESTAMP_BEFORE_EPOCH"
    timestamp_ms: int
    epoch_ms: int


class TimestampPastExpiryError(ShardIdError, ValueError):
    """A timestamp later than the last one the layout can represent."""

    code = "TIMESTAMP_PAST_EXPIRY"
    timestamp_ms: int
    expires_at_ms: int


class ClockMovedBackwardsError(ShardIdError):
    """The clock is further behind the last issued ID than the generator tolerates."""

    code = "CLOCK_MOVED_BACKWARDS"
    behind_ms: int
    tolerance_ms: int


class SequenceExhaustedError(ShardIdError):
    """The time unit's sequence is used up; nothing was issued. Retry at ``retry_at_ms``."""

    code = "SEQUENCE_EXHAUSTED"
    retry_at_ms: int


class InvalidArgumentError(ShardIdError, ValueError):
    """An argument with no error kind of its own is out of range (a negative count, a naive
    datetime, ...)."""

    code = "INVALID_ARGUMENT"


class ForkedGeneratorError(ShardIdError, RuntimeError):
    """A :class:`Generator` made before ``fork()`` was used in the child. The child shares its
    parent's shard and would repeat the parent's IDs: give each process a shard of its own, or
    use :func:`shardid.lease`, whose generators take a new shard in each child."""

    code = "FORKED_GENERATOR"


class NoFreeShardError(ShardIdError, RuntimeError):
    """Every shard of a lease's range is held by a live process."""

    code = "NO_FREE_SHARD"
    directory: str
    shards: range


class LeaseFileError(ShardIdError, OSError):
    """A lease's lock file could not be read or written, or belongs to another layout."""

    code = "LEASE_FILE"
