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
    ClosedError,
    DatabaseError,
    DatabaseUnreachableError,
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
    NotMysqlError,
    NullArgumentError,
    PanicError,
    PublicIdAlphabetError,
    PublicIdCheckError,
    PublicIdLengthError,
    PublicIdMismatchError,
    PublicIdOverflowError,
    PublicIdPrefixError,
    ScatterOverflowError,
    SegmentUnavailableError,
    SequenceExhaustedError,
    SequenceOutOfRangeError,
    SerialMismatchError,
    SerialOverflowError,
    SessionPooledError,
    ShardIdError,
    ShardOutOfRangeError,
    TimestampBeforeEpochError,
    TimestampPastExpiryError,
    TopicDroppedError,
    UnknownKeyVersionError,
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
    PublicIds,
    SerialFormat,
    __version__,
    _after_fork,
    check_public_id,
    lease,
    now_ms,
)

__all__ = [
    "ClockMovedBackwardsError",
    "ClosedError",
    "DatabaseError",
    "DatabaseUnreachableError",
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
    "NotMysqlError",
    "NullArgumentError",
    "PanicError",
    "ParsedSerial",
    "Parts",
    "PublicIdAlphabetError",
    "PublicIdCheckError",
    "PublicIdLengthError",
    "PublicIdMismatchError",
    "PublicIdOverflowError",
    "PublicIdPrefixError",
    "PublicIds",
    "ScatterOverflowError",
    "SegmentUnavailableError",
    "SequenceExhaustedError",
    "SequenceOutOfRangeError",
    "SerialFormat",
    "SerialMismatchError",
    "SerialOverflowError",
    "SessionPooledError",
    "ShardIdError",
    "ShardOutOfRangeError",
    "TimestampBeforeEpochError",
    "TimestampPastExpiryError",
    "TopicDroppedError",
    "UnknownKeyVersionError",
    "UnknownTagError",
    "UnknownTimeZoneError",
    "UnknownTopicError",
    "UnsupportedError",
    "check_public_id",
    "lease",
    "now_ms",
    "__version__",
]

# The clock's helper thread does not survive fork(): tell the core in every child, so its
# first burst starts a new one. This also makes a Generator made before the fork refuse to
# work in the child (it holds the parent's shard), and a LeasedGenerator take a new shard.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
