//! The table of error kinds every binding shares: one stable number, one code, one class name,
//! the fields and the message of each.
//!
//! The core's [`Error`](crate::Error) covers what the core itself can refuse; the bindings add a
//! few kinds of their own (a `NULL` pointer in C, a lock file that cannot be read, a lease lost
//! on PostgreSQL, an argument of the wrong shape). All of them are listed here, once, so that
//! the C statuses, the WebAssembly module's statuses, the Python exception classes and the
//! JavaScript `err.code`s are derived from one list and can never disagree (as rustls-ffi keeps
//! one `rustls_result`). A test in every language walks [`ErrorKind::ALL`] and fails when its
//! binding misses a kind.
//!
//! Messages are templates: `{name}` stands for the error's field `name`. The core renders them
//! for [`Error`](crate::Error)'s `Display`; the WebAssembly module's JavaScript renders the same
//! templates from a generated table, so every language words an error the same way.

use core::fmt;

/// How a caller should treat an error of a kind: what Python's and JavaScript's standard
/// error classes it maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// The input was wrong: a bad ID, shard, time, layout or argument. Python `ValueError`,
    /// JavaScript `RangeError` (or `TypeError` for a value of the wrong type).
    Input,
    /// The generator's state refuses for now (the clock, the sequence): retrying later can
    /// succeed. A plain Python exception and JavaScript `Error`.
    State,
    /// A resource outside the process: a lock file, a database lease. Python `OSError` or
    /// `RuntimeError`, JavaScript `Error`.
    Resource,
    /// A misuse the type system could not stop (a `NULL` pointer, an object used after `fork()`)
    /// or a bug in shardid itself. Python `RuntimeError`, JavaScript `Error`.
    Usage,
}

macro_rules! kinds {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident = $number:literal, $code:literal, $category:ident, [$($field:literal),*],
        $template:literal;
    )*) => {
        /// Every kind of error shardid reports, in any language. Its number is the C status
        /// (`SHARDID_ERR_<code>`) and the WebAssembly module's status; its code is the
        /// JavaScript `err.code` and the Python class's `code`; its [`ErrorKind::name`] plus
        /// `Error` is the Python class.
        ///
        /// Numbers are stable: a new kind gets a new number, an old number is never reused.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[doc = $doc])* $name = $number,)*
        }

        impl ErrorKind {
            /// Every kind, in order of number.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$name,)*];

            /// The stable name of the kind, e.g. `"INVALID_ID"`.
            pub const fn code(self) -> &'static str {
                match self { $(Self::$name => $code,)* }
            }

            /// The kind in CamelCase, e.g. `"InvalidId"`: Python's class is this plus `Error`.
            pub const fn name(self) -> &'static str {
                match self { $(Self::$name => stringify!($name),)* }
            }

            /// The names of the error's fields, in `snake_case` (JavaScript uses them in
            /// camelCase). Every one appears in [`ErrorKind::template`].
            pub const fn fields(self) -> &'static [&'static str] {
                match self { $(Self::$name => &[$($field),*],)* }
            }

            /// The message, with `{field}` for each field's value.
            pub const fn template(self) -> &'static str {
                match self { $(Self::$name => $template,)* }
            }

            /// What kind of failure this is, for the host language's error classes.
            pub const fn category(self) -> Category {
                match self { $(Self::$name => Category::$category,)* }
            }

            /// One line on what the kind means (the C `shardid_status_str` text, the docs).
            pub const fn summary(self) -> &'static str {
                match self { $(Self::$name => first_line(concat!($($doc, "\n"),*)),)* }
            }
        }
    };
}

kinds! {
    /// The layout's parameters do not describe a usable ID space.
    InvalidLayout = 1, "INVALID_LAYOUT", Input, ["reason"],
        "invalid layout: {reason}";
    /// A shard number does not fit the layout's shard field.
    ShardOutOfRange = 2, "SHARD_OUT_OF_RANGE", Input, ["shard", "max"],
        "shard {shard} is out of range: the layout holds 0..={max}";
    /// A sequence number does not fit the layout's sequence field.
    SequenceOutOfRange = 3, "SEQUENCE_OUT_OF_RANGE", Input, ["sequence", "max"],
        "sequence {sequence} is out of range: the layout holds 0..={max}";
    /// A count of logical shards that is zero or larger than the layout's shard field holds.
    InvalidShardCount = 4, "INVALID_SHARD_COUNT", Input, ["count", "max"],
        "logical shard count {count} is invalid: it must be in 1..={max}";
    /// The value is not an ID this layout can produce.
    InvalidId = 5, "INVALID_ID", Input, ["id"],
        "{id} is not a valid ID for this layout";
    /// Scattering the ID would give a value outside the layout's ID range.
    ScatterOverflow = 6, "SCATTER_OVERFLOW", Input, ["id"],
        "scattering {id} gives a value outside the layout's ID range";
    /// A timestamp earlier than the layout's epoch.
    TimestampBeforeEpoch = 7, "TIMESTAMP_BEFORE_EPOCH", Input, ["timestamp_ms", "epoch_ms"],
        "timestamp {timestamp_ms} ms is before the layout's epoch {epoch_ms} ms";
    /// A timestamp later than the last one the layout can represent.
    TimestampPastExpiry = 8, "TIMESTAMP_PAST_EXPIRY", Input, ["timestamp_ms", "expires_at_ms"],
        "timestamp {timestamp_ms} ms is past the layout's last representable time {expires_at_ms} ms";
    /// The clock is further behind the last issued ID than the generator tolerates.
    ClockMovedBackwards = 9, "CLOCK_MOVED_BACKWARDS", State, ["behind_ms", "tolerance_ms"],
        "clock moved backwards: {behind_ms} ms behind the last issued ID (tolerance {tolerance_ms} ms)";
    /// Every sequence number of the time unit is used; nothing was issued. Retry at `retry_at_ms`.
    SequenceExhausted = 10, "SEQUENCE_EXHAUSTED", State, ["retry_at_ms"],
        "sequence exhausted for this time unit; retry at {retry_at_ms} ms";
    /// A required pointer argument was `NULL` (C).
    NullArgument = 100, "NULL_ARGUMENT", Usage, [],
        "a required pointer argument was NULL";
    /// shardid hit a bug (a Rust panic), caught before it reached the caller; please report it.
    Panic = 101, "PANIC", Usage, [],
        "internal error in shardid (a caught Rust panic); please report it";
    /// Every shard of the lease's range is held by a live process.
    NoFreeShard = 102, "NO_FREE_SHARD", Resource, ["first", "end", "held_in"],
        "no free shard: every shard in {first}..{end} is leased by a live process ({held_in})";
    /// A lease's lock file could not be read or written, or records another layout.
    LeaseFile = 103, "LEASE_FILE", Resource, ["reason"],
        "lease file: {reason}";
    /// An argument with no error kind of its own has the wrong value or shape.
    InvalidArgument = 104, "INVALID_ARGUMENT", Input, ["argument", "reason"],
        "{argument} {reason}";
    /// A lease's hold on its shard was lost (taken over, expired, released, or its database
    /// session ended): it makes no ID above the ceiling it recorded.
    LeaseLost = 105, "LEASE_LOST", Resource, ["shard"],
        "the lease on shard {shard} is no longer held: take a new lease";
    /// A generator made before `fork()` was used in the child, which would repeat the parent's IDs.
    ForkedGenerator = 106, "FORKED_GENERATOR", Usage, [],
        "this generator was made before fork(): in the child it shares its parent's shard and would repeat the parent's IDs; make generators after forking, each with a shard of its own, or use a lease, which takes a new shard in each child";
    /// The operation is not available in this build or environment.
    Unsupported = 107, "UNSUPPORTED", Usage, ["reason"],
        "unsupported: {reason}";
    /// Dense IDs: both segments are used up and the database did not answer in time; retry.
    SegmentUnavailable = 108, "SEGMENT_UNAVAILABLE", State, ["tag", "reason"],
        "no segment of tag {tag} is available: {reason}";
    /// Dense IDs and serials: the tag does not exist (create it first; a typo never creates one).
    ///
    /// `create` names the call that creates it, in the caller's language: `create_tag` (the
    /// SQL function of dense tags), `create_serial` (Python, Rust), `createSerial` (Node).
    UnknownTag = 109, "UNKNOWN_TAG", Input, ["tag", "create"],
        "no tag {tag}: create it first ({create})";
    /// Dictionary: the topic does not exist (create it first; a typo never creates one).
    ///
    /// `create` names the call that creates it, in the caller's language:
    /// `Dictionary.create` (Python, Node), `AsyncDictionary.create` (Python's asyncio),
    /// `Dictionary::create` (Rust), `create_topic` (the SQL function).
    UnknownTopic = 110, "UNKNOWN_TOPIC", Input, ["topic", "create"],
        "no topic {topic}: create it first ({create})";
    /// Dictionary: the topic was dropped: its strings stay readable, it assigns no new IDs, and
    /// its name is never used again.
    TopicDropped = 111, "TOPIC_DROPPED", State, ["topic"],
        "topic {topic} was dropped: it assigns no new IDs and its name is not used again";
    /// A statement of shardid's failed in the database, or could not reach it.
    ///
    /// Rust's drivers report it with the driver's error as its source; Python's and Node's
    /// raise their driver's own error.
    Database = 112, "DATABASE", Resource, ["reason"],
        "database: {reason}";
    /// A session lease shares its server session with another connection (a transaction pooler).
    ///
    /// Advisory locks belong to server sessions, which a pooler shares between clients: a
    /// session lease cannot hold a shard there; the default expiring lease can.
    SessionPooled = 113, "SESSION_POOLED", Usage, ["reason"],
        "a session lease needs a direct connection to the database: {reason}; behind a transaction pooler use the default expiring lease";
    /// A database lease: this host's clock is too far ahead of the database's (a failover could repeat its IDs).
    ///
    /// Ahead by more than the skew the failover rule allows (`shardid::sql::failover::SKEW_MS`),
    /// measured at the lease's claim or renewal; the lease is refused (or stops). After a failover a ceiling is raised
    /// to the database's clock plus that skew: a host further ahead dated IDs above it, which
    /// could be handed out again. Fix the host's time (NTP); retrying later can succeed.
    ClockSkew = 114, "CLOCK_SKEW", State, ["ahead_ms", "max_ms"],
        "this host's clock is at least {ahead_ms} ms ahead of the database's, more than the {max_ms} ms a lease allows (a failover could repeat its IDs): fix the host's time";
    /// Public IDs: the text does not start with the expected type prefix and its `_`.
    PublicIdPrefix = 120, "PUBLIC_ID_PREFIX", Input, [],
        "the public ID does not start with its type's prefix";
    /// Public IDs: the body after the prefix has the wrong number of symbols for the encoding.
    PublicIdLength = 121, "PUBLIC_ID_LENGTH", Input, ["expected"],
        "the public ID has the wrong length: its encoding has {expected} symbols after the prefix";
    /// Public IDs: a character outside the encoding's alphabet (counted from 0, prefix included).
    PublicIdAlphabet = 122, "PUBLIC_ID_ALPHABET", Input, ["position"],
        "the public ID has a character outside its encoding's alphabet at position {position}";
    /// Public IDs: the check symbol does not match the body (a mistyped or swapped symbol).
    PublicIdCheck = 123, "PUBLIC_ID_CHECK", Input, [],
        "the public ID's check symbol does not match: a symbol is mistyped";
    /// Public IDs: the text names a key version the decoder does not hold.
    UnknownKeyVersion = 124, "UNKNOWN_KEY_VERSION", Input, ["version"],
        "the public ID was made with key version {version}, which is not held here";
    /// Public IDs: the body's digits spell a value of 2^64 or more.
    PublicIdOverflow = 125, "PUBLIC_ID_OVERFLOW", Input, [],
        "the public ID's digits spell a value above 64 bits";
    /// Public IDs: the text decodes to a value that is not an ID of the layout: made under
    /// another key or type, or forged.
    PublicIdMismatch = 126, "PUBLIC_ID_MISMATCH", Input, [],
        "the public ID is not one of these IDs: it was made under another key or type, or altered";
    /// Serials: a format that cannot be parsed, or that could print one serial twice.
    InvalidSerialFormat = 130, "INVALID_SERIAL_FORMAT", Input, ["position", "reason"],
        "invalid serial format at character {position}: {reason}";
    /// Serials: a time zone that is not in the IANA tz database.
    UnknownTimeZone = 131, "UNKNOWN_TIME_ZONE", Input, ["zone"],
        "unknown time zone {zone}: not a name of the IANA tz database (such as Asia/Shanghai, America/New_York, UTC)";
    /// Serials: text that this format cannot have made (mistyped, or an impossible date).
    ///
    /// Another format's serial, a wrong check digit, a date or hour that does not exist.
    InvalidSerial = 132, "INVALID_SERIAL", Input, ["position", "reason"],
        "invalid serial at character {position}: {reason}";
    /// Serials: the period's numbers went past the format's width; the next period starts at 1.
    SerialOverflow = 133, "SERIAL_OVERFLOW", State, ["tag", "max"],
        "no serial number left in {tag}: the format holds numbers up to {max}";
    /// Serials: the tag is registered in the database with another format or zone.
    SerialMismatch = 134, "SERIAL_MISMATCH", Input, ["tag", "reason"],
        "serial tag {tag} {reason}";
    /// The server a `mysql://` URL names did not answer as MySQL or MariaDB (no greeting in
    /// time, or one of another protocol: a PostgreSQL port, say).
    NotMysql = 140, "NOT_MYSQL", Resource, ["server", "reason"],
        "{server} did not answer as a MySQL or MariaDB server: {reason}";
    /// The object was closed (`close()`, or leaving its `with` / `using` block); it makes no
    /// more calls. Make a new one: retrying this one cannot succeed.
    Closed = 160, "CLOSED", Usage, ["what"],
        "{what} was closed: make a new one";
    /// The database could not be reached: the connection was refused, timed out, failed to
    /// log in, or broke and could not be opened again. Retrying later can succeed.
    ///
    /// The database driver's error is its cause (Python `__cause__`, JavaScript `cause`,
    /// Rust `source()`), and its message is in `reason`.
    DatabaseUnreachable = 161, "DATABASE_UNREACHABLE", Resource, ["reason"],
        "the database cannot be reached: {reason}";
}

impl ErrorKind {
    /// The stable number: the C status and the WebAssembly module's status.
    pub const fn number(self) -> u32 {
        self as u32
    }

    /// The kind with this number, if any.
    pub fn from_number(number: u32) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.number() == number)
    }

    /// The kind with this code (`"INVALID_ID"`), if any.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.code() == code)
    }

    /// Whether the field `name` holds a text (a reason, a place, an argument's name) rather
    /// than a number: `reason`, `held_in`, `argument`, `tag`, `topic`, `server`, `what`, `zone` and `create` do.
    pub fn is_text_field(name: &str) -> bool {
        matches!(
            name,
            "reason"
                | "held_in"
                | "argument"
                | "tag"
                | "topic"
                | "server"
                | "what"
                | "zone"
                | "create"
        )
    }

    /// Writes [`ErrorKind::template`] with each `{field}` replaced by `value(field, out)`.
    ///
    /// # Errors
    /// Whatever `out` or `value` return.
    pub fn render<W: fmt::Write + ?Sized>(
        self,
        out: &mut W,
        mut value: impl FnMut(&str, &mut W) -> fmt::Result,
    ) -> fmt::Result {
        let mut rest = self.template();
        while let Some(open) = rest.find('{') {
            out.write_str(&rest[..open])?;
            let after = &rest[open + 1..];
            let close = after.find('}').unwrap_or(after.len());
            value(&after[..close], out)?;
            rest = after.get(close + 1..).unwrap_or("");
        }
        out.write_str(rest)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A `snake_case` field name in `camelCase` (`retry_at_ms` → `retryAtMs`), as JavaScript
/// names an error's fields: `format!("{}", CamelCase("retry_at_ms"))`.
#[derive(Clone, Copy, Debug)]
pub struct CamelCase<'a>(pub &'a str);

impl fmt::Display for CamelCase<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, word) in self.0.split('_').enumerate() {
            let mut chars = word.chars();
            if let (true, Some(first)) = (i > 0, chars.next()) {
                write!(f, "{}", first.to_ascii_uppercase())?;
                f.write_str(chars.as_str())?;
            } else {
                f.write_str(word)?;
            }
        }
        Ok(())
    }
}

/// The first line of a doc comment, without its leading space.
const fn first_line(doc: &'static str) -> &'static str {
    let bytes = doc.as_bytes();
    let mut start = 0;
    while start < bytes.len() && bytes[start] == b' ' {
        start += 1;
    }
    let mut end = start;
    while end < bytes.len() && bytes[end] != b'\n' {
        end += 1;
    }
    match doc.split_at(end).0.split_at_checked(start) {
        Some((_, line)) => line,
        None => "",
    }
}
