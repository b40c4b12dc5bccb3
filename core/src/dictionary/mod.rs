//! A string ↔ ID dictionary: a string and a topic in, that string's ID out, the same one
//! forever; IDs of a topic are dense, from 0. The database does the assigning
//! ([`crate::sql::Dictionary`]: the DDL and the SQL contract); this module is what every
//! client shares so that they behave alike:
//!
//! - the rules for a topic, a string and an ID ([`check_topic`], [`check_value`], [`check_id`]),
//!   applied before anything is sent;
//! - which server of several holds a topic ([`server_for`]), so that every language sends a
//!   topic to the same one;
//! - (feature `std`) the clients' cache of both directions ([`Cache`]) and the batch logic:
//!   answer what the cache holds, send each distinct miss once, in one round trip, and merge
//!   the answers back in the caller's order ([`Cache::plan_ids`], [`Cache::complete_ids`]).
//! - (feature `sql`) the MySQL family's transaction that numbers new strings, as a protocol
//!   every client executes ([`protocol::MysqlAssign`]).
//!
//! A mapping never changes once assigned, so a cached answer never goes stale; only strings
//! not yet assigned (a `lookup` that found nothing) are never cached.

#[cfg(feature = "std")]
mod cache;
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
mod driver;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sql")]
pub mod protocol;
#[cfg(feature = "sqlite")]
pub mod sqlite;

#[cfg(feature = "std")]
pub use cache::{Cache, DEFAULT_CACHE, IdPlan, Mismatch, Refused, ValuePlan};

use crate::ErrorKind;

/// The longest topic name, in bytes of UTF-8.
pub const MAX_TOPIC_LEN: usize = 200;
/// The longest string, in bytes of UTF-8: what a PostgreSQL B-tree entry holds with room to
/// spare (an entry may take about 2,700 bytes of an 8 kB page).
pub const MAX_VALUE_LEN: usize = 2048;
/// The largest ID (a PostgreSQL `bigint`).
pub const MAX_ID: u64 = i64::MAX as u64;
/// The most strings or IDs one call sends (PostgreSQL arrays hold far more; a bound keeps one
/// call's memory and lock time visible).
pub const MAX_BATCH: usize = 100_000;

/// Why a topic, a string, an ID or a batch was refused: an `INVALID_ARGUMENT` with this
/// reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Invalid {
    /// A topic that is empty, longer than [`MAX_TOPIC_LEN`] or holds a NUL.
    Topic,
    /// A string that is empty, longer than [`MAX_VALUE_LEN`] or holds a NUL (PostgreSQL's
    /// `text` cannot).
    Value,
    /// An ID above [`MAX_ID`].
    Id,
    /// More than [`MAX_BATCH`] in one call.
    Batch,
    /// Text that is not valid Unicode (a Python `str` or JavaScript string holding a lone
    /// surrogate): it has no UTF-8 form, and replacing it would map two strings to one ID.
    Utf8,
}

impl Invalid {
    /// The argument's name, as the error reports it.
    pub const fn argument(self) -> &'static str {
        match self {
            Self::Topic => "topic",
            Self::Value | Self::Utf8 => "value",
            Self::Id => "id",
            Self::Batch => "batch",
        }
    }

    /// What the argument must be: the error's `reason`.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::Topic => "must be 1 to 200 bytes of UTF-8 text without NUL characters",
            Self::Value => "must be 1 to 2048 bytes of UTF-8 text without NUL characters",
            Self::Id => "must be an integer in 0..=9223372036854775807",
            Self::Batch => "must hold at most 100000 items",
            Self::Utf8 => {
                "must be valid Unicode text (it holds a lone surrogate, which has no UTF-8 form)"
            }
        }
    }

    /// The kind it is reported as.
    pub const fn kind(self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

/// Checks a topic name.
///
/// # Errors
/// [`Invalid::Topic`].
pub fn check_topic(topic: &str) -> Result<(), Invalid> {
    check_text(topic, MAX_TOPIC_LEN).map_err(|()| Invalid::Topic)
}

/// Checks a string before it is sent.
///
/// # Errors
/// [`Invalid::Value`].
pub fn check_value(value: &str) -> Result<(), Invalid> {
    check_text(value, MAX_VALUE_LEN).map_err(|()| Invalid::Value)
}

/// Checks an ID before it is sent.
///
/// # Errors
/// [`Invalid::Id`].
pub const fn check_id(id: u64) -> Result<(), Invalid> {
    if id > MAX_ID {
        Err(Invalid::Id)
    } else {
        Ok(())
    }
}

/// Checks the size of a batch.
///
/// # Errors
/// [`Invalid::Batch`].
pub const fn check_batch(len: usize) -> Result<(), Invalid> {
    if len > MAX_BATCH {
        Err(Invalid::Batch)
    } else {
        Ok(())
    }
}

fn check_text(text: &str, max: usize) -> Result<(), ()> {
    if text.is_empty() || text.len() > max || text.as_bytes().contains(&0) {
        Err(())
    } else {
        Ok(())
    }
}

/// Which of `servers` servers holds `topic` (`0..servers`; 0 when `servers` is 0 or 1).
///
/// The rule, so that any language can compute it: the 64-bit FNV-1a hash of the topic's UTF-8
/// bytes, then Lamping and Veach's jump consistent hash of it over `servers` buckets. Adding a
/// server to a list of `n` moves only about `1/(n + 1)` of the topics (each to the new server),
/// but it does move them: a topic's strings live on the server that assigned them, so the list
/// is part of the data — grow it only together with moving those topics.
pub fn server_for(topic: &str, servers: u32) -> u32 {
    jump_hash(fnv1a64(topic.as_bytes()), servers)
}

/// FNV-1a, 64 bits.
pub(crate) const fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// Lamping and Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm" (2014).
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn jump_hash(mut key: u64, buckets: u32) -> u32 {
    let mut b: i64 = -1;
    let mut j: i64 = 0;
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        let r = ((key >> 33) + 1) as f64;
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / r)) as i64;
    }
    // b is in 0..buckets (or -1 when there are none).
    u32::try_from(b).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_its_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn jump_hash_matches_published_values() {
        // ClickHouse's tests of its jumpConsistentHash (the paper's code).
        assert_eq!(jump_hash(1, 1), 0);
        assert_eq!(jump_hash(42, 57), 43);
        assert_eq!(jump_hash(256, 1024), 520);
        assert_eq!(jump_hash(3_735_883_980, 1), 0);
        assert_eq!(jump_hash(3_735_883_980, 666), 361);
        assert_eq!(jump_hash(16_045_690_984_833_335_023, 255), 237);
        for key in 0..1000u64 {
            for n in 1..20 {
                assert!(jump_hash(key, n) < n);
            }
        }
    }

    #[test]
    fn adding_a_server_moves_only_to_the_new_one() {
        let mut moved = 0;
        for i in 0..10_000 {
            let topic = alloc_free_name(i);
            let before = server_for(topic.as_str(), 4);
            let after = server_for(topic.as_str(), 5);
            if before != after {
                assert_eq!(after, 4, "a topic moved between old servers");
                moved += 1;
            }
        }
        // About a fifth.
        assert!((1_500..2_500).contains(&moved), "{moved} of 10000 moved");
    }

    #[test]
    fn zero_or_one_server_is_server_zero() {
        assert_eq!(server_for("orders", 0), 0);
        assert_eq!(server_for("orders", 1), 0);
    }

    #[test]
    fn checks() {
        assert_eq!(check_topic(""), Err(Invalid::Topic));
        assert_eq!(check_topic("a\0b"), Err(Invalid::Topic));
        assert!(check_topic(&"t".repeat(MAX_TOPIC_LEN)).is_ok());
        assert_eq!(check_value(""), Err(Invalid::Value));
        assert_eq!(check_value("\0"), Err(Invalid::Value));
        assert!(check_value("ü").is_ok());
        assert_eq!(check_id(MAX_ID + 1), Err(Invalid::Id));
        assert!(check_id(MAX_ID).is_ok());
        assert_eq!(check_batch(MAX_BATCH + 1), Err(Invalid::Batch));
        // The reasons state the constants.
        assert!(Invalid::Value.reason().contains("2048"));
        assert!(Invalid::Topic.reason().contains("200"));
        assert!(Invalid::Batch.reason().contains("100000"));
    }

    /// A short name without allocating (the core tests build without `alloc` too).
    fn alloc_free_name(i: u32) -> Name {
        let mut name = Name([0; 16], 0);
        for b in b"topic-" {
            name.push(*b);
        }
        let mut digits = [0u8; 10];
        let mut n = i;
        let mut len = 0;
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for d in digits[..len].iter().rev() {
            name.push(*d);
        }
        name
    }

    struct Name([u8; 16], usize);
    impl Name {
        fn push(&mut self, b: u8) {
            self.0[self.1] = b;
            self.1 += 1;
        }
        fn as_str(&self) -> &str {
            core::str::from_utf8(&self.0[..self.1]).unwrap()
        }
    }
}
