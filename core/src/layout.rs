//! Bit layouts: where the time, shard and sequence fields sit in a 64-bit ID.
//!
//! A [`Layout`] is a plain `Copy` value, validated once when it is built, so every operation on
//! it (decode, compose, range bounds) is a handful of shifts with no further checks of its own
//! shape. Time always occupies the most significant bits: that is what makes IDs sort by
//! creation time, in memory and in a database index alike.

use crate::Error;

/// The order of the two low fields below the time field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldOrder {
    /// `time | shard | sequence`: Instagram, Twitter Snowflake, Discord.
    TimeShardSequence,
    /// `time | sequence | shard`: Sonyflake, which keeps the machine id in the low bits.
    TimeSequenceShard,
}

impl FieldOrder {
    /// Both orders, in the order bindings list them.
    pub const ALL: [FieldOrder; 2] = [FieldOrder::TimeShardSequence, FieldOrder::TimeSequenceShard];

    /// The name every binding uses for the order: `"time_shard_sequence"`.
    pub const fn name(self) -> &'static str {
        match self {
            FieldOrder::TimeShardSequence => "time_shard_sequence",
            FieldOrder::TimeSequenceShard => "time_sequence_shard",
        }
    }

    /// The order named `name` ([`FieldOrder::name`]).
    ///
    /// # Errors
    /// [`Error::InvalidLayout`] naming the two orders.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|order| order.name() == name)
            .ok_or(Error::InvalidLayout {
                reason: Self::UNKNOWN,
            })
    }

    /// The reason of the error for a name that is not an order's (bindings that look names up
    /// themselves, like the WebAssembly module's JavaScript, report it).
    pub const UNKNOWN: &'static str =
        "the order must be \"time_shard_sequence\" or \"time_sequence_shard\"";
}

/// An ID decoded into its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Parts {
    /// Start of the ID's time unit, in Unix milliseconds.
    pub timestamp_ms: u64,
    /// The shard (worker, machine) field.
    pub shard: u64,
    /// The sequence field.
    pub sequence: u64,
}

/// A validated bit layout: epoch, time unit, field widths and order, and whether IDs must fit a
/// signed 64-bit column.
///
/// Build one with [`Layout::builder`] or use a preset such as [`Layout::INSTAGRAM`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Layout {
    epoch_ms: u64,
    unit_ms: u64,
    time_bits: u8,
    shard_bits: u8,
    sequence_bits: u8,
    order: FieldOrder,
    signed: bool,
}

/// Builds a [`Layout`]; [`LayoutBuilder::build`] validates it.
///
/// Defaults: epoch 0 (the Unix epoch), 1 ms time unit, `time | shard | sequence`, signed (IDs
/// fit a `BIGINT`). The widths have no default: a layout without a time field is rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct LayoutBuilder {
    layout: Layout,
}

/// A mask of the low `bits` bits; `bits` may be 64.
pub(crate) const fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// How far ahead of its run-out date a layout is reported as running out
/// ([`Layout::runs_out_soon`]): five years of 365.2425 days, the Gregorian calendar's mean
/// (157,784,760,000 ms).
pub const RUN_OUT_WARNING_MS: u64 = 5 * 31_556_952_000;

/// Unwraps a preset at compile time: an invalid preset fails the build, not a user's call.
const fn preset(result: Result<Layout, Error>) -> Layout {
    match result {
        Ok(layout) => layout,
        Err(_) => panic!("invalid preset layout"),
    }
}

impl Layout {
    /// Instagram's sharded IDs, as made by its PL/pgSQL `next_id()`.
    ///
    /// ```text
    ///  63                       23 22          10 9         0
    /// +---------------------------+--------------+-----------+
    /// | 41 bits: ms since epoch   | 13 bits:     | 10 bits:  |
    /// |                           | shard        | sequence  |
    /// +---------------------------+--------------+-----------+
    /// ```
    ///
    /// Epoch 1314220021721 (2011-08-24T21:07:01.721Z). The layout fills all 64 bits, but IDs are
    /// stored in a signed `BIGINT`, so the top time bit is never set: the layout runs out at
    /// 2046-06-27T17:00:49.496Z ([`Layout::expires_at_ms`]), and no negative ID is ever made.
    pub const INSTAGRAM: Layout = preset(
        Layout::builder()
            .epoch_ms(1_314_220_021_721)
            .bits(41, 13, 10)
            .build(),
    );

    /// Twitter Snowflake.
    ///
    /// ```text
    ///  63 62                      22 21        12 11         0
    /// +--+--------------------------+------------+-----------+
    /// |0 | 41 bits: ms since epoch  | 10 bits:   | 12 bits:  |
    /// |  |                          | worker     | sequence  |
    /// +--+--------------------------+------------+-----------+
    /// ```
    ///
    /// Epoch 1288834974657 (2010-11-04T01:42:54.657Z); runs out at 2080-07-10T17:30:30.208Z.
    pub const TWITTER: Layout = preset(
        Layout::builder()
            .epoch_ms(1_288_834_974_657)
            .bits(41, 10, 12)
            .build(),
    );

    /// Discord snowflakes (unsigned: Discord sends them as strings of a `u64`).
    ///
    /// ```text
    ///  63                        22 21        12 11         0
    /// +----------------------------+------------+-----------+
    /// | 42 bits: ms since epoch    | 10 bits:   | 12 bits:  |
    /// |                            | worker<<5  | increment |
    /// |                            |  | process |           |
    /// +----------------------------+------------+-----------+
    /// ```
    ///
    /// Epoch 1420070400000 (2015-01-01T00:00:00Z); runs out at 2154-05-15T07:35:11.103Z.
    pub const DISCORD: Layout = preset(
        Layout::builder()
            .epoch_ms(1_420_070_400_000)
            .bits(42, 10, 12)
            .signed(false)
            .build(),
    );

    /// Sonyflake: 10 ms time units, and the sequence sits *above* the machine id.
    ///
    /// ```text
    ///  63 62                       24 23       16 15             0
    /// +--+---------------------------+-----------+----------------+
    /// |0 | 39 bits: 10 ms units      | 8 bits:   | 16 bits:       |
    /// |  | since epoch               | sequence  | machine        |
    /// +--+---------------------------+-----------+----------------+
    /// ```
    ///
    /// Epoch 1409529600000 (2014-09-01T00:00:00Z); runs out at 2188-11-16T03:28:58.879Z.
    pub const SONYFLAKE: Layout = preset(
        Layout::builder()
            .epoch_ms(1_409_529_600_000)
            .unit_ms(10)
            .bits(39, 16, 8)
            .order(FieldOrder::TimeSequenceShard)
            .build(),
    );

    /// Every preset with the name every binding gives it (`Layout.INSTAGRAM` in Python and
    /// JavaScript, `shardid_layout_instagram()` in C).
    pub const PRESETS: [(&'static str, Layout); 4] = [
        ("INSTAGRAM", Layout::INSTAGRAM),
        ("TWITTER", Layout::TWITTER),
        ("DISCORD", Layout::DISCORD),
        ("SONYFLAKE", Layout::SONYFLAKE),
    ];

    /// The preset named `name`, in any case (`"instagram"`, `"INSTAGRAM"`).
    ///
    /// # Errors
    /// [`Error::InvalidLayout`] for a name that is not a preset's.
    pub fn preset(name: &str) -> Result<Layout, Error> {
        Self::PRESETS
            .iter()
            .find(|(preset, _)| preset.eq_ignore_ascii_case(name))
            .map(|(_, layout)| *layout)
            .ok_or(Error::InvalidLayout {
                reason: Self::UNKNOWN_PRESET,
            })
    }

    /// The reason of the error for a name that is not a preset's (for bindings that look names
    /// up themselves).
    pub const UNKNOWN_PRESET: &'static str =
        "there is no preset of that name: use INSTAGRAM, TWITTER, DISCORD or SONYFLAKE";

    /// The name of the preset this layout is, if it is one.
    pub fn preset_name(&self) -> Option<&'static str> {
        Self::PRESETS
            .iter()
            .find(|(_, layout)| layout == self)
            .map(|(name, _)| *name)
    }

    /// Starts building a custom layout.
    pub const fn builder() -> LayoutBuilder {
        LayoutBuilder {
            layout: Layout {
                epoch_ms: 0,
                unit_ms: 1,
                time_bits: 0,
                shard_bits: 0,
                sequence_bits: 0,
                order: FieldOrder::TimeShardSequence,
                signed: true,
            },
        }
    }

    /// The epoch, in Unix milliseconds.
    pub const fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }
    /// Milliseconds per tick of the time field (1, or 10 for Sonyflake).
    pub const fn unit_ms(&self) -> u64 {
        self.unit_ms
    }
    /// Width of the time field, in bits.
    pub const fn time_bits(&self) -> u8 {
        self.time_bits
    }
    /// Width of the shard field, in bits.
    pub const fn shard_bits(&self) -> u8 {
        self.shard_bits
    }
    /// Width of the sequence field, in bits.
    pub const fn sequence_bits(&self) -> u8 {
        self.sequence_bits
    }
    /// The order of the shard and sequence fields.
    pub const fn order(&self) -> FieldOrder {
        self.order
    }
    /// Whether IDs must fit a signed 64-bit column (the top bit is never set).
    pub const fn signed(&self) -> bool {
        self.signed
    }

    /// The largest shard number.
    #[inline]
    pub const fn max_shard(&self) -> u64 {
        mask(self.shard_bits as u32)
    }
    /// The largest sequence number: a time unit holds `max_sequence() + 1` IDs per shard.
    #[inline]
    pub const fn max_sequence(&self) -> u64 {
        mask(self.sequence_bits as u32)
    }
    /// The largest ID the layout can hold.
    #[inline]
    pub const fn max_id(&self) -> u64 {
        mask(self.id_bits())
    }
    /// The number of low bits below the time field.
    #[inline]
    pub(crate) const fn time_shift(&self) -> u32 {
        self.shard_bits as u32 + self.sequence_bits as u32
    }
    /// The position of the shard field's lowest bit.
    #[inline]
    pub(crate) const fn shard_shift(&self) -> u32 {
        match self.order {
            FieldOrder::TimeShardSequence => self.sequence_bits as u32,
            FieldOrder::TimeSequenceShard => 0,
        }
    }
    /// The position of the sequence field's lowest bit.
    #[inline]
    pub(crate) const fn sequence_shift(&self) -> u32 {
        match self.order {
            FieldOrder::TimeShardSequence => 0,
            FieldOrder::TimeSequenceShard => self.shard_bits as u32,
        }
    }
    /// The number of bits an ID may use: all fields, less the sign bit when the fields fill
    /// 64 bits of a signed layout.
    #[inline]
    pub(crate) const fn id_bits(&self) -> u32 {
        let total = self.time_bits as u32 + self.time_shift();
        if self.signed && total == 64 {
            63
        } else {
            total
        }
    }
    /// The ID space this layout draws from: the same layout marked unsigned. Two layouts that
    /// differ only in signedness make the same IDs, so generators for one shard of either must
    /// share one state (see [`Generator::with_state`](crate::Generator::with_state)).
    #[must_use]
    pub const fn id_space(mut self) -> Self {
        self.signed = false;
        self
    }
    /// The largest value of the time field, in units since the epoch.
    #[inline]
    pub(crate) const fn max_time_units(&self) -> u64 {
        self.max_id() >> self.time_shift()
    }

    /// The last Unix millisecond the layout can represent: the end of its last time unit.
    ///
    /// Timestamps after this are errors everywhere ([`Error::TimestampPastExpiry`]); an ID is
    /// never wrapped or made negative instead.
    #[inline]
    pub const fn expires_at_ms(&self) -> u64 {
        // Cannot overflow: `build` checked it.
        self.epoch_ms + self.max_time_units() * self.unit_ms + (self.unit_ms - 1)
    }

    /// Whether the layout runs out within [`RUN_OUT_WARNING_MS`] of `now_ms` (or already has):
    /// its last representable millisecond is at most that far ahead. Moving a table of IDs to a
    /// new layout takes a release cycle or several, so the warning comes years early; Baidu's
    /// uid-generator's default layout ran out on 2024-11-20 with nothing saying so beforehand.
    /// One rule for every report of it (Django's system check `shardid.W002`, ...).
    #[inline]
    #[must_use]
    pub const fn runs_out_soon(&self, now_ms: u64) -> bool {
        self.expires_at_ms().saturating_sub(now_ms) <= RUN_OUT_WARNING_MS
    }

    /// The time unit (ticks since the epoch) that holds `timestamp_ms`.
    #[inline]
    pub(crate) const fn time_units(&self, timestamp_ms: u64) -> Result<u64, Error> {
        if timestamp_ms < self.epoch_ms {
            return Err(Error::TimestampBeforeEpoch {
                timestamp_ms,
                epoch_ms: self.epoch_ms,
            });
        }
        if timestamp_ms > self.expires_at_ms() {
            return Err(Error::TimestampPastExpiry {
                timestamp_ms,
                expires_at_ms: self.expires_at_ms(),
            });
        }
        let elapsed = timestamp_ms - self.epoch_ms;
        // Most layouts count milliseconds: skip the division (~25 cycles) when the layout is
        // not a compile-time constant, as in every binding.
        if self.unit_ms == 1 {
            Ok(elapsed)
        } else {
            Ok(elapsed / self.unit_ms)
        }
    }

    /// The start of time unit `units`, in Unix milliseconds.
    #[inline]
    pub(crate) const fn unit_start_ms(&self, units: u64) -> u64 {
        self.epoch_ms + units * self.unit_ms
    }

    /// Checks that `id` is an ID this layout can hold, and returns it.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `id` has bits set outside the layout.
    #[inline]
    pub const fn validate_id(&self, id: u64) -> Result<u64, Error> {
        if id > self.max_id() {
            Err(Error::InvalidId { id })
        } else {
            Ok(id)
        }
    }

    /// Decodes an ID into its timestamp (start of its time unit, Unix ms), shard and sequence.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `id` has bits set outside the layout (including the sign bit
    /// of a signed layout).
    #[inline]
    pub const fn decode(&self, id: u64) -> Result<Parts, Error> {
        if let Err(e) = self.validate_id(id) {
            return Err(e);
        }
        Ok(Parts {
            timestamp_ms: self.unit_start_ms(id >> self.time_shift()),
            shard: (id >> self.shard_shift()) & self.max_shard(),
            sequence: (id >> self.sequence_shift()) & self.max_sequence(),
        })
    }

    /// Packs fields that are already known to be in range.
    #[inline]
    pub(crate) const fn pack(&self, units: u64, shard: u64, sequence: u64) -> u64 {
        (units << self.time_shift())
            | (shard << self.shard_shift())
            | (sequence << self.sequence_shift())
    }

    /// Builds the ID for a timestamp (Unix ms; floored to its time unit), shard and sequence.
    ///
    /// # Errors
    /// [`Error::TimestampBeforeEpoch`], [`Error::TimestampPastExpiry`],
    /// [`Error::ShardOutOfRange`], [`Error::SequenceOutOfRange`].
    #[inline]
    pub const fn compose(
        &self,
        timestamp_ms: u64,
        shard: u64,
        sequence: u64,
    ) -> Result<u64, Error> {
        let units = match self.time_units(timestamp_ms) {
            Ok(units) => units,
            Err(e) => return Err(e),
        };
        if shard > self.max_shard() {
            return Err(Error::ShardOutOfRange {
                shard,
                max: self.max_shard(),
            });
        }
        if sequence > self.max_sequence() {
            return Err(Error::SequenceOutOfRange {
                sequence,
                max: self.max_sequence(),
            });
        }
        Ok(self.pack(units, shard, sequence))
    }

    /// The smallest ID any generator of this layout can make in the time unit holding
    /// `timestamp_ms`: with [`Layout::max_id_at`], the bounds of `WHERE id BETWEEN ...` range
    /// queries and time-based pagination.
    ///
    /// # Errors
    /// [`Error::TimestampBeforeEpoch`], [`Error::TimestampPastExpiry`].
    #[inline]
    pub const fn min_id_at(&self, timestamp_ms: u64) -> Result<u64, Error> {
        match self.time_units(timestamp_ms) {
            Ok(units) => Ok(units << self.time_shift()),
            Err(e) => Err(e),
        }
    }

    /// The largest ID any generator of this layout can make in the time unit holding
    /// `timestamp_ms`.
    ///
    /// # Errors
    /// [`Error::TimestampBeforeEpoch`], [`Error::TimestampPastExpiry`].
    #[inline]
    pub const fn max_id_at(&self, timestamp_ms: u64) -> Result<u64, Error> {
        match self.min_id_at(timestamp_ms) {
            Ok(min) => Ok(min | mask(self.time_shift())),
            Err(e) => Err(e),
        }
    }

    /// Instagram's mapping of a key (a user id, an account id) to one of `logical_shards`
    /// logical shards: `key % logical_shards`. Rows that belong together get one shard, so
    /// their IDs say where they live.
    ///
    /// # Errors
    /// [`Error::InvalidShardCount`] when `logical_shards` is 0 or more than the shard field
    /// holds.
    pub const fn shard_for_key(&self, key: u64, logical_shards: u64) -> Result<u64, Error> {
        let max = self.max_shard() + 1;
        if logical_shards == 0 || logical_shards > max {
            return Err(Error::InvalidShardCount {
                count: logical_shards,
                max,
            });
        }
        Ok(key % logical_shards)
    }
}

impl LayoutBuilder {
    /// The epoch, in Unix milliseconds.
    pub const fn epoch_ms(mut self, epoch_ms: u64) -> Self {
        self.layout.epoch_ms = epoch_ms;
        self
    }
    /// Milliseconds per tick of the time field.
    pub const fn unit_ms(mut self, unit_ms: u64) -> Self {
        self.layout.unit_ms = unit_ms;
        self
    }
    /// Widths of the time, shard and sequence fields, in bits.
    pub const fn bits(mut self, time: u8, shard: u8, sequence: u8) -> Self {
        self.layout.time_bits = time;
        self.layout.shard_bits = shard;
        self.layout.sequence_bits = sequence;
        self
    }
    /// The order of the shard and sequence fields.
    pub const fn order(mut self, order: FieldOrder) -> Self {
        self.layout.order = order;
        self
    }
    /// Whether IDs must fit a signed 64-bit column such as PostgreSQL's `BIGINT` (default
    /// `true`): then the top bit is never set, even if the fields fill 64 bits.
    pub const fn signed(mut self, signed: bool) -> Self {
        self.layout.signed = signed;
        self
    }

    /// Validates the layout.
    ///
    /// # Errors
    /// [`Error::InvalidLayout`] saying which rule was broken: no time field, fields wider than
    /// 64 bits, a signed layout with no usable time bit, a zero time unit, or an expiry beyond
    /// `u64` milliseconds.
    pub const fn build(self) -> Result<Layout, Error> {
        let l = self.layout;
        let total = l.time_bits as u32 + l.shard_bits as u32 + l.sequence_bits as u32;
        let reason = if l.time_bits == 0 {
            Some("the time field needs at least 1 bit")
        } else if total > 64 {
            Some("the fields add up to more than 64 bits")
        } else if l.signed && total == 64 && l.time_bits < 2 {
            Some("a signed 64-bit layout needs at least 2 time bits (the top one is the sign)")
        } else if l.unit_ms == 0 {
            Some("the time unit must be at least 1 ms")
        } else {
            // The last representable millisecond must fit in a u64.
            match l.max_time_units().checked_add(1) {
                None => Some("the layout's lifetime overflows u64 milliseconds"),
                Some(units) => match units.checked_mul(l.unit_ms) {
                    None => Some("the layout's lifetime overflows u64 milliseconds"),
                    Some(span) => match span.checked_add(l.epoch_ms) {
                        None => Some("the layout's lifetime overflows u64 milliseconds"),
                        Some(_) => None,
                    },
                },
            }
        };
        match reason {
            Some(reason) => Err(Error::InvalidLayout { reason }),
            None => Ok(l),
        }
    }
}
