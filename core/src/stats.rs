//! What the ID makers did, counted: the one table that names every figure in every language,
//! the snapshots the objects hand out, and (with `std`) the process's list of live objects that
//! the bindings' Prometheus exporters read ([`collect`]).
//!
//! Four families, each a snapshot type whose fields are the table's rows, in order:
//!
//! - [`GeneratorStats`]: a generator state (one per layout and shard in a process): IDs made,
//!   calls that waited for the next time unit, units borrowed, clock steps back;
//! - [`SegmentStats`]: a segment allocator (one tag): fetches, failures, their latency, calls
//!   that found both segments empty, numbers skipped, what is left of the current segment;
//! - [`DictionaryStats`]: a dictionary's cache and statements;
//! - [`LeaseStats`]: a database lease (one per lease object, across the shards it took):
//!   acquisitions, renewals, ceiling writes, late renewals, losses, and whether it holds now.
//!
//! The counters are atomics the objects bump where they already take a slow path: the
//! generator's per-ID path gains no store (its count of IDs is derived from its state word and
//! the slots its jumps skipped, see [`crate::State`]). Every binding builds its `stats()` from
//! these snapshots and its names from [`Family::metrics`]: `snake_case` in Rust, Python and C,
//! `camelCase` in JavaScript (`tests/vectors-gen` renders the table for JavaScript).

use core::fmt::{self, Display, Formatter};

/// What a figure is, for exporters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// Only ever grows (a Prometheus counter, an OpenTelemetry observable counter). Objects that
    /// share one set of labels add up.
    Counter,
    /// Goes up and down (a gauge); objects that share one set of labels add up.
    Gauge,
    /// A gauge of which objects that share one set of labels report the largest.
    GaugeMax,
    /// A bucket of histogram `histogram`: how many observations were at most `le_ms`
    /// milliseconds (cumulative, as Prometheus counts; `u64::MAX` is `+Inf`, the count of all).
    Bucket {
        /// The histogram's name in the table (without the unit).
        histogram: &'static str,
        /// The bucket's upper bound, in milliseconds (`u64::MAX`: `+Inf`).
        le_ms: u64,
    },
    /// The sum of the observations of histogram `histogram`, in milliseconds.
    Sum {
        /// The histogram's name in the table.
        histogram: &'static str,
    },
}

/// One row of the table: a figure's name, kind and meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Metric {
    /// The name in Rust, Python and C (`snake_case`; `camelCase` in JavaScript).
    pub name: &'static str,
    /// What it is.
    pub kind: Kind,
    /// What it counts, one sentence (Prometheus' `HELP`, OpenTelemetry's description),
    /// without a unit: Prometheus exposes a duration in seconds, OpenTelemetry in milliseconds,
    /// and each says which in the name (`_seconds`) or the instrument's unit (`ms`).
    pub help: &'static str,
    /// The same for every object of the process (the ticker's starts): exporters report it
    /// once, without labels.
    pub process_wide: bool,
}

impl Metric {
    /// Whether the figure is in milliseconds: exporters that want seconds (Prometheus) divide
    /// it by 1,000.
    pub fn in_ms(&self) -> bool {
        self.name.ends_with("_ms") || matches!(self.kind, Kind::Bucket { .. } | Kind::Sum { .. })
    }
}

/// The families of figures: which objects they describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Family {
    /// A generator state ([`GeneratorStats`]).
    Generator,
    /// A segment allocator ([`SegmentStats`]).
    Segments,
    /// A dictionary ([`DictionaryStats`]).
    Dictionary,
    /// A database lease ([`LeaseStats`]).
    Lease,
}

impl Family {
    /// Every family, in the order exporters report them.
    pub const ALL: [Self; 4] = [
        Self::Generator,
        Self::Segments,
        Self::Dictionary,
        Self::Lease,
    ];

    /// Its name (`"generator"`, `"segments"`, `"dictionary"`, `"lease"`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Generator => "generator",
            Self::Segments => "segments",
            Self::Dictionary => "dictionary",
            Self::Lease => "lease",
        }
    }

    /// Its rows, in the order of its snapshot's fields.
    pub const fn metrics(self) -> &'static [Metric] {
        match self {
            Self::Generator => GeneratorStats::METRICS,
            Self::Segments => SegmentStats::METRICS,
            Self::Dictionary => DictionaryStats::METRICS,
            Self::Lease => LeaseStats::METRICS,
        }
    }

    /// The labels exporters put on its figures, in order: which object of the family the
    /// figures are of.
    ///
    /// A lease's are its layout and shard, as its generator's (so `shardid_ids_total` and
    /// `shardid_lease_held` join on them: which process holds which shard, and how fast it
    /// spends it), and its table (two tables are two independent sets of leases). The shard
    /// is the one the lease holds, or held last: a lease that lost its shard and took another
    /// (`retake`) goes on counting under the new one.
    pub const fn labels(self) -> &'static [&'static str] {
        match self {
            Self::Generator => &["layout", "shard"],
            Self::Segments => &["schema", "tag"],
            Self::Dictionary => &["schema", "topic"],
            Self::Lease => &["layout", "shard", "table"],
        }
    }

    /// What comes between `shardid_` and a figure's name in Prometheus, and between
    /// `shardid.` and it in OpenTelemetry: nothing for generators (`shardid_ids_total`, as
    /// the figure every user reads first), else the family's.
    const fn prefix(self) -> (&'static str, &'static str) {
        match self {
            Self::Generator => ("", ""),
            Self::Segments => ("segment_", "segment."),
            Self::Dictionary => ("dictionary_", "dictionary."),
            Self::Lease => ("lease_", "lease."),
        }
    }

    /// The Prometheus name of `metric` (one of this family's): `shardid_` and the family's
    /// prefix, then the name, with `_ms` as `_seconds` (base units) and `_total` after a
    /// counter; a histogram's buckets and sum share the histogram's name.
    pub const fn prometheus(self, metric: &'static Metric) -> MetricName {
        MetricName {
            family: self,
            metric,
            style: Style::Prometheus,
        }
    }

    /// The OpenTelemetry name of `metric`: `shardid.` and the family's prefix, then the name
    /// (in milliseconds, unit `ms`); a histogram's buckets are one counter
    /// (`<histogram>.bucket`, attribute `le`) and its sum another (`<histogram>.sum`).
    pub const fn opentelemetry(self, metric: &'static Metric) -> MetricName {
        MetricName {
            family: self,
            metric,
            style: Style::OpenTelemetry,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Prometheus,
    OpenTelemetry,
}

/// A figure's name in an exporter's convention; render it with [`Display`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetricName {
    family: Family,
    metric: &'static Metric,
    style: Style,
}

impl Display for MetricName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (prometheus, opentelemetry) = self.family.prefix();
        let m = self.metric;
        match self.style {
            Style::Prometheus => {
                f.write_str("shardid_")?;
                f.write_str(prometheus)?;
                match m.kind {
                    Kind::Bucket { histogram, .. } | Kind::Sum { histogram } => {
                        write!(f, "{histogram}_seconds")
                    }
                    Kind::Counter => write!(f, "{}_total", m.name),
                    Kind::Gauge | Kind::GaugeMax => match m.name.strip_suffix("_ms") {
                        Some(base) => write!(f, "{base}_seconds"),
                        None => f.write_str(m.name),
                    },
                }
            }
            Style::OpenTelemetry => {
                f.write_str("shardid.")?;
                f.write_str(opentelemetry)?;
                match m.kind {
                    Kind::Bucket { histogram, .. } => write!(f, "{histogram}.bucket"),
                    Kind::Sum { histogram } => write!(f, "{histogram}.sum"),
                    _ => f.write_str(m.name.strip_suffix("_ms").unwrap_or(m.name)),
                }
            }
        }
    }
}

/// One family's snapshot type and table, from one list of rows.
macro_rules! family {
    (
        $(#[$meta:meta])*
        $snapshot:ident {
            $( $name:ident: $kind:expr, $process_wide:literal, $help:literal; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub struct $snapshot {
            $( #[doc = $help] pub $name: u64, )*
        }

        impl $snapshot {
            /// The table: one row per field, in order.
            pub const METRICS: &'static [Metric] = &[
                $( Metric { name: stringify!($name), kind: $kind, help: $help, process_wide: $process_wide }, )*
            ];

            /// How many figures.
            pub const LEN: usize = Self::METRICS.len();

            /// The figures in the table's order.
            pub const fn values(&self) -> [u64; Self::LEN] {
                [ $( self.$name, )* ]
            }

            /// A snapshot from figures in the table's order (what [`Self::values`] gives).
            pub const fn from_values(values: [u64; Self::LEN]) -> Self {
                let mut _i = 0;
                $( let $name = values[_i]; _i += 1; )*
                Self { $( $name, )* }
            }
        }
    };
}

family! {
    /// What a generator state did ([`crate::Generator::stats`]). Every handle on one (layout,
    /// shard) of a process shares one state, and so these figures.
    GeneratorStats {
        ids: Kind::Counter, false,
            "IDs handed out";
        waits: Kind::Counter, false,
            "Calls that waited for the next time unit, their own being used up";
        borrowed_units: Kind::Counter, false,
            "Time units begun ahead of the clock (`max_borrow_units`)";
        clock_backwards: Kind::Counter, false,
            "Calls that found the clock behind the last ID (by more than the units borrowed) and went on within the tolerance: continued the last unit or waited for the clock";
        clock_backwards_refused: Kind::Counter, false,
            "Calls refused because the clock was further behind the last ID than the tolerance (`CLOCK_MOVED_BACKWARDS`)";
        ticker_starts: Kind::Counter, true,
            "Times this process started its ticker thread (bursts of several IDs per millisecond start it; it stops after 256 ms without one)";
    }
}

family! {
    /// What a segment allocator did ([`crate::segment::SegmentAllocator::stats`]).
    SegmentStats {
        fetches: Kind::Counter, false,
            "Segments fetched";
        failed_fetches: Kind::Counter, false,
            "Fetches that failed (the database down or slow, an unknown tag)";
        fetch_latency_last_ms: Kind::GaugeMax, false,
            "How long the last fetch took";
        fetch_latency_max_ms: Kind::GaugeMax, false,
            "How long the slowest fetch took";
        fetch_latency_le_1ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 1 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_5ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 5 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_10ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 10 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_50ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 50 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_100ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 100 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_500ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 500 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_1000ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 1_000 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_5000ms: Kind::Bucket { histogram: "fetch_latency", le_ms: 5_000 }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`";
        fetch_latency_le_inf: Kind::Bucket { histogram: "fetch_latency", le_ms: u64::MAX }, false,
            "Fetches (failed ones too) that took at most the bucket's bound, `le`: all of them (`+Inf`)";
        fetch_latency_sum_ms: Kind::Sum { histogram: "fetch_latency" }, false,
            "How long the fetches took, added up (failed ones too)";
        empty_waits: Kind::Counter, false,
            "Calls that found both segments used up and waited for a fetch";
        skipped: Kind::Counter, false,
            "Numbers taken from the database and neither handed out nor given back on close: the holes this allocator made";
        remaining: Kind::Gauge, false,
            "IDs left in the current segment";
    }
}

family! {
    /// What a dictionary did ([`crate::dictionary::Cache::stats`]).
    DictionaryStats {
        id_hits: Kind::Counter, false,
            "Strings whose ID the cache held";
        id_misses: Kind::Counter, false,
            "Strings whose ID the cache did not hold (asked of the database)";
        value_hits: Kind::Counter, false,
            "IDs whose string the cache held";
        value_misses: Kind::Counter, false,
            "IDs whose string the cache did not hold (asked of the database)";
        statements: Kind::Counter, false,
            "Statements sent to the database (retries included)";
        retries: Kind::Counter, false,
            "Statements sent again on a new connection after the old one broke";
    }
}

family! {
    /// What a database lease did ([`crate::lease::Tally::stats`]): one lease object of a
    /// binding (`shardid.postgres.lease()`, `lease()` of `shardid/postgres`, Rust's
    /// `PostgresLease`, and their MySQL twins), over every shard it took. Counted by the core's
    /// lease machinery ([`crate::lease::Hold`], [`crate::lease::CeilingGenerator`]), never by
    /// the bindings.
    LeaseStats {
        acquisitions: Kind::Counter, false,
            "Shards taken: the first claim, and each one after a loss (`retake`) or in a forked child";
        renewals: Kind::Counter, false,
            "Statements that pushed an expiring lease's expiry forward: heartbeats, and ceiling writes (which renew it too)";
        ceiling_writes: Kind::Counter, false,
            "Ceilings recorded in the lease's row before IDs above the last one were handed out";
        late_renewals: Kind::Counter, false,
            "Renewals whose answer came back more than two thirds of the time to live after the last renewal was sent: the one due at a third had failed or hung, and less than two fifteenths of the time to live was left before the holder stops on its own";
        losses: Kind::Counter, false,
            "Times the lease was lost while held: taken over, its row no longer holding its token, or past its deadline without a renewal (closing is not a loss)";
        held: Kind::Gauge, false,
            "1 while the lease holds its shard, 0 once lost or closed";
    }
}

/// The upper bounds of the segments' fetch latency histogram, in milliseconds (the last is
/// `+Inf`), in the order of [`SegmentStats`]' bucket fields.
pub const FETCH_LATENCY_BOUNDS_MS: [u64; 9] = [1, 5, 10, 50, 100, 500, 1_000, 5_000, u64::MAX];

/// The `layout` label of a layout: its preset's name (`TWITTER`), or its numbers
/// (`epoch_ms=1288834974657 unit_ms=1 bits=41/10/12`).
#[cfg(feature = "alloc")]
pub fn layout_label(layout: &crate::Layout) -> alloc::string::String {
    match layout.preset_name() {
        Some(name) => name.into(),
        None => alloc::format!(
            "epoch_ms={} unit_ms={} bits={}/{}/{}",
            layout.epoch_ms(),
            layout.unit_ms(),
            layout.time_bits(),
            layout.shard_bits(),
            layout.sequence_bits()
        ),
    }
}

#[cfg(all(feature = "std", target_has_atomic = "64"))]
mod live;
#[cfg(all(feature = "std", target_has_atomic = "64"))]
pub use live::{
    Sample, collect, register_dictionary, register_segments, unregister_dictionary,
    unregister_segments,
};
#[cfg(all(feature = "lease", target_has_atomic = "64"))]
pub(crate) use live::{register_generator, register_lease};
#[cfg(all(feature = "serial", feature = "std", target_has_atomic = "64"))]
pub use live::{register_serials, unregister_serials};
