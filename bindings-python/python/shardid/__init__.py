"""Time-sortable 64-bit unique IDs, made in-process: Instagram's, Twitter Snowflake's,
Discord's and Sonyflake's layouts, or your own.

>>> from shardid import Generator, Layout
>>> gen = Generator(layout=Layout.INSTAGRAM, shard=5)
>>> Layout.INSTAGRAM.decode(gen.next_id()).shard
5
"""

from __future__ import annotations

import os

# The exception classes are generated from the core's table of error kinds (the same codes and
# numbers as the C statuses and the JS err.code); tests/python/test_errors.py fails when one is
# missing here.
from shardid._errors import (
    ClockMovedBackwardsError,
    ForkedGeneratorError,
    InvalidArgumentError,
    InvalidIdError,
    InvalidLayoutError,
    InvalidSerialError,
    InvalidSerialFormatError,
    InvalidShardCountError,
    LeaseFileError,
    LeaseLostError,
    NoFreeShardError,
    NullArgumentError,
    PanicError,
    ScatterOverflowError,
    SegmentUnavailableError,
    SequenceExhaustedError,
    SequenceOutOfRangeError,
    SerialMismatchError,
    SerialOverflowError,
    ShardIdError,
    ShardOutOfRangeError,
    TimestampBeforeEpochError,
    TimestampPastExpiryError,
    TopicDroppedError,
    UnknownTagError,
    UnknownTimeZoneError,
    UnknownTopicError,
    UnsupportedError,
)
from shardid._shardid import (
    DEFAULT_BACKWARDS_TOLERANCE_MS,
    Generator,
    Layout,
    LeasedGenerator,
    ParsedSerial,
    Parts,
    SerialFormat,
    __version__,
    _after_fork,
    lease,
    now_ms,
)

__all__ = [
    "ClockMovedBackwardsError",
    "DEFAULT_BACKWARDS_TOLERANCE_MS",
    "ForkedGeneratorError",
    "Generator",
    "InvalidArgumentError",
    "InvalidIdError",
    "InvalidLayoutError",
    "InvalidSerialError",
    "InvalidSerialFormatError",
    "InvalidShardCountError",
    "Layout",
    "LeaseFileError",
    "LeaseLostError",
    "LeasedGenerator",
    "NoFreeShardError",
    "NullArgumentError",
    "PanicError",
    "ParsedSerial",
    "Parts",
    "SerialFormat",
    "ScatterOverflowError",
    "SegmentUnavailableError",
    "SequenceExhaustedError",
    "SequenceOutOfRangeError",
    "SerialMismatchError",
    "SerialOverflowError",
    "ShardIdError",
    "ShardOutOfRangeError",
    "TimestampBeforeEpochError",
    "TimestampPastExpiryError",
    "TopicDroppedError",
    "UnknownTagError",
    "UnknownTimeZoneError",
    "UnknownTopicError",
    "UnsupportedError",
    "lease",
    "now_ms",
    "__version__",
]

# The clock's helper thread does not survive fork(): tell the core in every child, so its
# first burst starts a new one. This also makes a Generator made before the fork refuse to
# work in the child (it holds the parent's shard), and a LeasedGenerator take a new shard.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
