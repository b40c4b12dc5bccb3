//! An expiring lease's hold on its shard, shared by the generator (which stops on its own at
//! the deadline), the heartbeat that renews it, and the ceiling writes (which renew it too).

use std::string::String;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::Tally;
use crate::sql::Tenure;

/// The monotonic clock leases count with: milliseconds since its first use in this process.
/// A wall clock stepped by NTP or by hand changes nothing here.
pub fn monotonic_ms() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let elapsed = ORIGIN.get_or_init(Instant::now).elapsed();
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// A token for a new lease: 128 bits that no other lease, here or on another host, will have.
/// From the standard library's per-process random keys (the OS's randomness), the time and a
/// counter, so two leases of one process, or of a parent and its forked child, differ too.
pub fn new_token() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let word = |salt: u64| {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(salt);
        hasher.write_u64(count);
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        hasher.finish()
    };
    std::format!("{:016x}{:016x}", word(1), word(2))
}

/// The longest a new holder waits for its clock to pass the ceiling it starts above: a clock
/// further behind is not skew between hosts, and the generator refuses it
/// ([`crate::Error::ClockMovedBackwards`]).
pub const MAX_CEILING_WAIT_MS: u64 = 10_000;

/// How long a new holder of a shard should wait, by the wall clock, before its first ID: until
/// its clock passes `recorded`, the ceiling it starts above (after a failover the database
/// raises it to its own clock plus the hosts' skew, which a holder whose clock is behind has
/// not reached yet). 0 when the clock is past it, or more than [`MAX_CEILING_WAIT_MS`] behind.
pub fn ceiling_wait_ms(layout: &crate::Layout, recorded: Option<u64>) -> u64 {
    let Some(units) = recorded else {
        return 0;
    };
    let after = layout
        .epoch_ms()
        .saturating_add(units.saturating_add(1).saturating_mul(layout.unit_ms()));
    let wait = after.saturating_sub(crate::now_ms());
    if wait > MAX_CEILING_WAIT_MS { 0 } else { wait }
}

/// Sleeps [`ceiling_wait_ms`]: what a new holder that may block does before its first ID (Node's
/// waits on a timer instead).
pub fn wait_for_ceiling(layout: &crate::Layout, recorded: Option<u64>) {
    let wait = ceiling_wait_ms(layout, recorded);
    if wait > 0 {
        std::thread::sleep(Duration::from_millis(wait));
    }
}

/// How long a failed renewal waits before the next try: a tenth of the time to live, at most a
/// second, so a database that is back is found well before the deadline.
const fn retry_ms(ttl_ms: u64) -> u64 {
    let tenth = ttl_ms / 10;
    if tenth < 1_000 { tenth } else { 1_000 }
}

/// The hold an expiring lease has on its shard, by this process's monotonic clock
/// ([`monotonic_ms`]); see [`Tenure`] for the rule.
///
/// Drivers call [`Hold::sending`] before each renewal or ceiling write, which refuses once the
/// deadline has passed, then [`Hold::renewed`] with its answer when one row was updated, or
/// [`Hold::lose`] when none was (the lease was taken over). The heartbeat sleeps
/// [`Hold::wait_ms`] between renewals.
///
/// With a [`Tally`] (given by [`super::CeilingGenerator::with_hold`]) it counts the renewals,
/// the late ones, and the loss: the bindings only report what the database answered.
#[derive(Debug)]
pub struct Hold {
    tenure: Mutex<Tenure>,
    /// When the next renewal is due after a failed one (0: none failed since the last success).
    retry_at_ms: AtomicU64,
    tally: OnceLock<Arc<Tally>>,
}

impl Hold {
    /// A hold taken by a claim sent at `sent_at_ms` ([`monotonic_ms`]).
    pub fn new(ttl_ms: u64, sent_at_ms: u64) -> Self {
        Self {
            tenure: Mutex::new(Tenure::new(ttl_ms, sent_at_ms)),
            retry_at_ms: AtomicU64::new(0),
            tally: OnceLock::new(),
        }
    }

    /// Counts into `tally` from now on (a hold counts into one tally only: later ones are
    /// ignored).
    pub(super) fn count_into(&self, tally: &Arc<Tally>) {
        let _ = self.tally.set(Arc::clone(tally));
    }

    fn tenure(&self) -> std::sync::MutexGuard<'_, Tenure> {
        self.tenure.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks `tenure` lost, counting a loss if it was held.
    fn lose_tenure(&self, tenure: &mut Tenure) {
        tenure.lose();
        if let Some(tally) = self.tally.get() {
            tally.lost();
        }
    }

    /// Marks the lease ended by its holder (closed): lost for good, but not counted as a
    /// loss.
    pub(super) fn end(&self) {
        if let Some(tally) = self.tally.get() {
            tally.closed();
        }
        self.tenure().lose();
    }

    /// Whether the lease is held now.
    pub fn holds(&self) -> bool {
        self.tenure().holds(monotonic_ms())
    }

    /// Whether the lease is lost: taken over, released, or past its deadline.
    pub fn is_lost(&self) -> bool {
        let mut tenure = self.tenure();
        if !tenure.is_lost() && !tenure.holds(monotonic_ms()) {
            self.lose_tenure(&mut tenure);
        }
        tenure.is_lost()
    }

    /// The time to live.
    pub fn ttl_ms(&self) -> u64 {
        self.tenure().ttl_ms()
    }

    /// A renewal or ceiling write is about to be sent: its sending time, to pass to
    /// [`Hold::renewed`], or `None` when the lease is no longer held (it is then lost for good).
    pub fn sending(&self) -> Option<u64> {
        let now = monotonic_ms();
        let mut tenure = self.tenure();
        if tenure.holds(now) {
            Some(now)
        } else {
            self.lose_tenure(&mut tenure);
            None
        }
    }

    /// A renewal or ceiling write sent at `sent_at_ms` updated the lease's row. Counted as a
    /// renewal (late if it came back after [`Tenure::late_after_ms`]), even when the lease was
    /// closed or found past its deadline meanwhile: the row was renewed.
    pub fn renewed(&self, sent_at_ms: u64) {
        let landed = monotonic_ms();
        let mut tenure = self.tenure();
        if let Some(tally) = self.tally.get() {
            tally.renewed(landed > tenure.late_after_ms());
        }
        tenure.renewed(sent_at_ms);
        drop(tenure);
        self.retry_at_ms.store(0, Ordering::Release);
    }

    /// A renewal could not be made (the database did not answer): the next try is due sooner
    /// than a renewal would be.
    pub fn failed(&self) {
        let retry = monotonic_ms() + retry_ms(self.ttl_ms());
        self.retry_at_ms.store(retry, Ordering::Release);
    }

    /// The lease is lost (its row no longer holds the token, or it was released).
    pub fn lose(&self) {
        self.lose_tenure(&mut self.tenure());
    }

    /// How long the heartbeat sleeps before its next renewal (0: due now), or `None` once the
    /// lease is lost: the heartbeat ends.
    pub fn wait_ms(&self) -> Option<u64> {
        let now = monotonic_ms();
        let mut tenure = self.tenure();
        if !tenure.holds(now) {
            self.lose_tenure(&mut tenure);
            return None;
        }
        let mut due = tenure.renew_at_ms();
        let retry = self.retry_at_ms.load(Ordering::Acquire);
        if retry > 0 {
            due = due.min(retry);
        }
        Some(due.saturating_sub(now).min(tenure.deadline_ms() - now))
    }

    /// [`Hold::wait_ms`] as a duration.
    pub fn wait(&self) -> Option<Duration> {
        self.wait_ms().map(Duration::from_millis)
    }
}
