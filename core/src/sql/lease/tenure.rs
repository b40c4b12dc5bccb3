//! When the holder of an expiring lease must stop, by its own monotonic clock.

use core::fmt::{self, Display, Formatter};

/// The default time to live of an expiring lease: 10 s. A crashed holder's shard is free this
/// long after its last renewal; a holder renews every third of it (one short statement every
/// 3.3 s per process), and stops on its own when it could not renew for four fifths of it.
pub const DEFAULT_TTL_MS: u64 = 10_000;
/// The shortest time to live accepted: renewals every 100 ms.
pub const MIN_TTL_MS: u64 = 300;
/// The longest time to live accepted: an hour.
pub const MAX_TTL_MS: u64 = 3_600_000;

/// Why a lease's kind or time to live was refused: the reason of an `INVALID_ARGUMENT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtlError {
    /// The kind is neither `"expiring"` nor `"session"` (argument `kind`).
    Kind,
    /// The time to live is outside [`MIN_TTL_MS`]..=[`MAX_TTL_MS`] (argument `ttl_ms`).
    Range,
}

impl TtlError {
    /// The argument the error is about.
    pub const fn argument(self) -> &'static str {
        match self {
            Self::Kind => "kind",
            Self::Range => "ttl_ms",
        }
    }
}

impl Display for TtlError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Kind => f.write_str("must be 'expiring' (the default) or 'session'"),
            Self::Range => write!(f, "must be within {MIN_TTL_MS}..={MAX_TTL_MS} ms"),
        }
    }
}

pub(super) const fn check_ttl(ttl_ms: u64) -> Result<u64, TtlError> {
    if ttl_ms >= MIN_TTL_MS && ttl_ms <= MAX_TTL_MS {
        Ok(ttl_ms)
    } else {
        Err(TtlError::Range)
    }
}

/// An expiring lease's hold, by the holder's monotonic clock (milliseconds from any origin).
///
/// The database sets the lease's expiry to its own clock's `now()` plus the time to live when
/// it runs a claim or renewal, which is after the holder sent it. So the holder counts from
/// when it *sent* its last successful claim or renewal: its deadline falls before the
/// database's expiry whatever the network or a pause did in between, and a margin of a fifth
/// of the time to live covers clocks that run at slightly different rates. Past the deadline
/// the lease is lost for good: another process may have taken the shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tenure {
    ttl_ms: u64,
    renewed_at_ms: u64,
    lost: bool,
}

impl Tenure {
    /// A lease claimed (or renewed) by a statement sent at `sent_at_ms`.
    pub const fn new(ttl_ms: u64, sent_at_ms: u64) -> Self {
        Self {
            ttl_ms,
            renewed_at_ms: sent_at_ms,
            lost: false,
        }
    }

    /// The time to live.
    pub const fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// When the holder stops: its last successful renewal's sending, plus four fifths of the
    /// time to live.
    pub const fn deadline_ms(&self) -> u64 {
        self.renewed_at_ms + self.ttl_ms - self.ttl_ms / 5
    }

    /// When the next renewal is due: a third of the time to live after the last, so two can
    /// fail before the deadline.
    pub const fn renew_at_ms(&self) -> u64 {
        self.renewed_at_ms + self.ttl_ms / 3
    }

    /// When a renewal that has not come back yet becomes *late* (the lease's
    /// [`crate::stats::LeaseStats::late_renewals`]): two thirds of the time to live after the
    /// last successful renewal was sent. Past it the renewal due at a third has failed or hung
    /// for a whole third, and less than two fifteenths of the time to live (the time from here
    /// to [`Tenure::deadline_ms`]) was left before the holder stops on its own: one more hiccup
    /// and it would have. A healthy heartbeat's renewals come back a round trip after a third.
    pub const fn late_after_ms(&self) -> u64 {
        self.renewed_at_ms + self.ttl_ms * 2 / 3
    }

    /// Whether the lease is still held at `now_ms`.
    pub const fn holds(&self, now_ms: u64) -> bool {
        !self.lost && now_ms < self.deadline_ms()
    }

    /// Whether the lease was lost (taken over, released, or past its deadline when checked).
    pub const fn is_lost(&self) -> bool {
        self.lost
    }

    /// A renewal (or a ceiling write, which renews) sent at `sent_at_ms` succeeded. One sent
    /// after the deadline counts for nothing: the holder had already stopped.
    pub fn renewed(&mut self, sent_at_ms: u64) {
        if self.holds(sent_at_ms) && sent_at_ms > self.renewed_at_ms {
            self.renewed_at_ms = sent_at_ms;
        }
    }

    /// The lease is lost (taken over, or released); nothing renews it again.
    pub fn lose(&mut self) {
        self.lost = true;
    }
}
