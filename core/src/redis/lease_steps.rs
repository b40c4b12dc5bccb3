//! A shard lease on Redis as steps (sans I/O): the script to run for a claim, a renewal, a
//! ceiling's record and a release ([`super::scripts`]), with its key and arguments, and the
//! reading of each reply, for an executor in any language that holds the connection, reads
//! the server's `run_id` (per connection) and keeps the lease's generator
//! ([`crate::lease::CeilingGenerator`] with its `Hold`, or a binding's). The Rust client
//! (`shardid::redis::lease`, feature `redis`) builds the same commands.
//!
//! A claim is refused to a client whose clock is too far ahead of the server's, and a renewal
//! that finds it so stops the lease, by the SQL leases' rule
//! ([`crate::sql::LeaseProtocol::clock`]): after a restart or failover that lost
//! writes the claim script raises a shard's ceiling to the server's clock plus
//! [`crate::sql::failover::SKEW_MS`], so a holder further ahead dates IDs above it, which the
//! next holder can hand out again once that holder's writes are lost.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use core::ops::Range;
use core::sync::atomic::{AtomicU64, Ordering};

use super::{Command, prefix_problem, scripts};
use crate::Layout;
use crate::sql::{Cell, LeaseProtocol};

/// What a claim's reply says ([`LeaseSteps::claimed`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Claimed {
    /// The shard claimed, the ceiling it starts above (`None`: none), the fencing token.
    Shard {
        /// The shard.
        shard: u64,
        /// The ceiling recorded (time units of the layout).
        ceiling: Option<u64>,
        /// One more than the shard's last claim's.
        fencing_token: u64,
    },
    /// Every shard of the range is held.
    NoFreeShard,
    /// The shard was claimed, but the client's clock, read when the claim was made
    /// ([`LeaseSteps::claim`]), was more than `max_ms` ahead of the server's clock the reply
    /// carries: release the shard ([`LeaseSteps::release`]), then report
    /// [`ErrorKind::ClockSkew`](crate::ErrorKind::ClockSkew), as the SQL leases do. No ID may
    /// be handed out: they would be dated above the ceiling the next holder starts from after
    /// a step back.
    ClockSkew {
        /// The shard the claim took, to release.
        shard: u64,
        /// How far ahead, at least, in milliseconds.
        ahead_ms: u64,
        /// How far ahead a lease allows ([`crate::sql::failover::SKEW_MS`]).
        max_ms: u64,
    },
    /// A reply no lease script makes.
    Unusable,
}

/// The lease of one shard of a range of one layout under a key prefix, and its token.
#[derive(Clone, Debug)]
pub struct LeaseSteps {
    key: String,
    token: String,
    holder: String,
    ttl_ms: u64,
    shards: Range<u64>,
    epoch_ms: u64,
    unit_ms: u64,
    /// The client's clock, in Unix milliseconds ([`LeaseSteps::clock`]): the generator's
    /// (`shardid::clock::now_ms`) with `std`; none without, and then nothing is compared.
    clock: Option<fn() -> u64>,
    /// What the client's clock read when the last claim was made (0: not read).
    sent: Sent,
    /// What it read when the last renewal was made.
    renew_sent: Sent,
}

/// A clock reading kept by `&self` calls (a lease's steps are shared with its heartbeat).
#[derive(Debug, Default)]
struct Sent(AtomicU64);

impl Sent {
    fn read(&self, clock: Option<fn() -> u64>) {
        self.0
            .store(clock.map_or(0, |clock| clock()), Ordering::Relaxed);
    }

    fn get(&self) -> Option<u64> {
        Some(self.0.load(Ordering::Relaxed)).filter(|&ms| ms > 0)
    }
}

impl Clone for Sent {
    fn clone(&self) -> Self {
        Self(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

/// An integer of a reply.
fn int(cell: Option<&Cell<'_>>) -> Option<i64> {
    match cell? {
        Cell::Int(n) => Some(*n),
        Cell::Text(text) => text.parse().ok(),
        _ => None,
    }
}

impl LeaseSteps {
    /// The steps of a lease of a shard of `shards` for `layout`, its key under `prefix`,
    /// expiring `ttl_ms` after each renewal by the server's clock, claimed with `token` (unique
    /// to this lease object) by `holder` (a description: the process).
    ///
    /// # Errors
    /// `(argument, reason)`: a prefix that is not plain, a time to live outside 1 s to a day,
    /// an empty range or one past the layout's shards.
    pub fn new(
        prefix: &str,
        layout: &Layout,
        shards: Range<u64>,
        ttl_ms: u64,
        token: &str,
        holder: &str,
    ) -> Result<Self, (&'static str, &'static str)> {
        if let Some(why) = prefix_problem(prefix) {
            return Err(("schema", why));
        }
        if !(1_000..=86_400_000).contains(&ttl_ms) {
            // The argument's name is the SQL leases' (`TtlError::argument`): the parameter's in
            // Rust and Python, which Node's binding renames `ttlMs` as it does theirs.
            return Err(("ttl_ms", "must be 1 s to 1 day"));
        }
        if shards.is_empty() || shards.end > layout.max_shard() + 1 {
            return Err(("shards", "must be a non-empty range of the layout's shards"));
        }
        Ok(Self {
            key: format!("{prefix}:lease:{{{}}}", crate::sql::LeaseSignature(*layout)),
            token: token.into(),
            holder: holder.into(),
            ttl_ms,
            shards,
            epoch_ms: layout.epoch_ms(),
            unit_ms: layout.unit_ms(),
            #[cfg(feature = "std")]
            clock: Some(crate::clock::now_ms),
            #[cfg(not(feature = "std"))]
            clock: None,
            sent: Sent::default(),
            renew_sent: Sent::default(),
        })
    }

    /// The same steps with the client's clock read from `clock` (Unix milliseconds), as tests
    /// script it; by default the generator's own clock. It is read when a claim is made
    /// ([`LeaseSteps::claim`], made just before it is sent) and compared with the server's
    /// clock its reply carries ([`LeaseSteps::claimed`]) by the SQL leases' rule: the script
    /// reads the server's clock after it was sent, so a slow round trip is never taken for
    /// skew.
    #[must_use]
    pub fn clock(mut self, clock: fn() -> u64) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The lease hash's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The claim of the first free shard, on the server whose identity is `run_id`. Make it
    /// just before sending it (once more for each sending): it reads the client's clock, which
    /// [`LeaseSteps::claimed`] compares with the server's.
    pub fn claim(&self, run_id: &str) -> Command {
        self.sent.read(self.clock);
        Command::Script {
            source: scripts::LEASE_CLAIM,
            keys: vec![self.key.clone()],
            args: vec![
                run_id.into(),
                self.token.clone(),
                self.holder.clone(),
                self.ttl_ms.to_string(),
                self.shards.start.to_string(),
                self.shards.end.to_string(),
                self.epoch_ms.to_string(),
                self.unit_ms.to_string(),
            ],
        }
    }

    /// What the reply to the last [`LeaseSteps::claim`] says: a shard taken by a client whose
    /// clock was too far ahead of the server's (the reply's last integer) is
    /// [`Claimed::ClockSkew`].
    pub fn claimed(&self, reply: &[Cell<'_>]) -> Claimed {
        match (int(reply.first()), int(reply.get(1)), int(reply.get(2))) {
            (Some(-1), ..) => Claimed::NoFreeShard,
            (Some(shard), Some(ceiling), Some(fence)) if shard >= 0 && fence > 0 => {
                match LeaseProtocol::ahead_of(self.sent.get(), int(reply.get(4))) {
                    Some(ahead_ms) => Claimed::ClockSkew {
                        shard: shard.unsigned_abs(),
                        ahead_ms,
                        max_ms: crate::sql::failover::SKEW_MS,
                    },
                    None => Claimed::Shard {
                        shard: shard.unsigned_abs(),
                        ceiling: u64::try_from(ceiling).ok(),
                        fencing_token: fence.unsigned_abs(),
                    },
                }
            }
            _ => Claimed::Unusable,
        }
    }

    fn on_shard(
        &self,
        source: &'static str,
        run_id: &str,
        shard: u64,
        extra: Option<u64>,
    ) -> Command {
        let mut args = vec![
            String::from(run_id),
            self.token.clone(),
            self.ttl_ms.to_string(),
            shard.to_string(),
            self.epoch_ms.to_string(),
            self.unit_ms.to_string(),
        ];
        if let Some(extra) = extra {
            args.push(extra.to_string());
        }
        Command::Script {
            source,
            keys: vec![self.key.clone()],
            args,
        }
    }

    /// A renewal of `shard`'s lease. Make it just before sending it: it reads the client's
    /// clock, which [`LeaseSteps::clock_ahead`] compares with the server's.
    pub fn renew(&self, run_id: &str, shard: u64) -> Command {
        self.renew_sent.read(self.clock);
        self.on_shard(scripts::LEASE_RENEW, run_id, shard, None)
    }

    /// How far the client's clock, read when the last renewal was made, was ahead of the
    /// server's clock its reply carries (`{1, now}`), when more than
    /// [`crate::sql::failover::SKEW_MS`]: the lease must stop, reporting
    /// [`ErrorKind::ClockSkew`](crate::ErrorKind::ClockSkew), as a SQL lease's renewal does
    /// ([`crate::sql::LeaseProtocol::clock_ahead`]): the clock moved ahead after the claim.
    /// `None`: within the skew, or the lease is lost ([`LeaseSteps::held`] says so).
    pub fn clock_ahead(&self, reply: &[Cell<'_>]) -> Option<u64> {
        if !Self::held(reply) {
            return None;
        }
        LeaseProtocol::ahead_of(self.renew_sent.get(), int(reply.get(1)))
    }

    /// A ceiling of `units` recorded for `shard` (and a renewal).
    pub fn record(&self, run_id: &str, shard: u64, units: u64) -> Command {
        self.on_shard(scripts::LEASE_RECORD, run_id, shard, Some(units))
    }

    /// The release of `shard`.
    pub fn release(&self, run_id: &str, shard: u64) -> Command {
        self.on_shard(scripts::LEASE_RELEASE, run_id, shard, None)
    }

    /// Whether a renewal's, record's or release's reply says the lease still held (`false`:
    /// another claim took the shard, or the server lost it: the lease is lost for good).
    pub fn held(reply: &[Cell<'_>]) -> bool {
        int(reply.first()) == Some(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_replies() {
        let layout = Layout::INSTAGRAM;
        let steps = LeaseSteps::new("app", &layout, 0..4, 5_000, "tok", "pid 1").unwrap();
        let Command::Script { source, keys, args } = steps.claim("rid");
        assert_eq!(source, scripts::LEASE_CLAIM);
        assert!(keys[0].starts_with("app:lease:{"), "{keys:?}");
        assert_eq!(&args[..6], ["rid", "tok", "pid 1", "5000", "0", "4"]);
        let Command::Script { source, args, .. } = steps.record("rid", 2, 77);
        assert_eq!(source, scripts::LEASE_RECORD);
        assert_eq!((args[3].as_str(), args[6].as_str()), ("2", "77"));
        assert_eq!(
            steps.claimed(&[Cell::Int(2), Cell::Int(-1), Cell::Int(3)]),
            Claimed::Shard {
                shard: 2,
                ceiling: None,
                fencing_token: 3
            }
        );
        assert_eq!(
            steps.claimed(&[Cell::Int(-1), Cell::Int(4)]),
            Claimed::NoFreeShard
        );
        assert_eq!(steps.claimed(&[Cell::Int(2)]), Claimed::Unusable);
        assert!(LeaseSteps::held(&[Cell::Int(1), Cell::Int(5)]));
        assert!(!LeaseSteps::held(&[Cell::Int(0)]));
        assert_eq!(
            LeaseSteps::new("a:b", &layout, 0..4, 5_000, "t", "h")
                .unwrap_err()
                .0,
            "schema"
        );
        assert_eq!(
            LeaseSteps::new("a", &layout, 0..4, 10, "t", "h")
                .unwrap_err()
                .0,
            "ttl_ms"
        );
        assert_eq!(
            LeaseSteps::new("a", &layout, 3..3, 5_000, "t", "h")
                .unwrap_err()
                .0,
            "shards"
        );
    }

    /// The client's clock in the tests below: 1,000,000 ms past the epoch of Unix.
    fn client_clock() -> u64 {
        1_000_000
    }

    /// Issue 57: a claim by a client whose clock is 3 s ahead of the server's (the reply's
    /// `now`) is refused with the SQL leases' rule and error, and the shard it took is to be
    /// released; within the allowance (2 s), and 2 s behind, it is claimed. A renewal that
    /// finds it 3 s ahead says so (the lease stops, as a SQL lease's renewal does).
    #[test]
    fn a_client_clock_too_far_ahead_is_refused_and_its_shard_released() {
        let steps = LeaseSteps::new("app", &Layout::INSTAGRAM, 0..4, 5_000, "tok", "h")
            .unwrap()
            .clock(client_clock);
        let reply = |now: i64| {
            [
                Cell::Int(2),
                Cell::Int(7),
                Cell::Int(3),
                Cell::Int(0),
                Cell::Int(now),
            ]
        };
        let _ = steps.claim("rid");
        let claimed = steps.claimed(&reply(1_000_000 - 3_000));
        assert_eq!(
            claimed,
            Claimed::ClockSkew {
                shard: 2,
                ahead_ms: 3_000,
                max_ms: crate::sql::failover::SKEW_MS
            }
        );
        // What the executor sends next: the release of the shard taken, by this claim's token.
        let Claimed::ClockSkew { shard, .. } = claimed else {
            unreachable!()
        };
        let Command::Script { source, args, .. } = steps.release("rid", shard);
        assert_eq!(source, scripts::LEASE_RELEASE);
        assert_eq!((args[1].as_str(), args[3].as_str()), ("tok", "2"));
        let shard = |now: i64| {
            Claimed::Shard {
                shard: 2,
                ceiling: Some(7),
                fencing_token: 3,
            } == steps.claimed(&reply(now))
        };
        assert!(
            shard(1_000_000 - 2_000),
            "exactly the allowance ahead is claimed"
        );
        assert!(shard(1_000_000 - 500), "within the allowance");
        assert!(shard(1_000_000 + 2_000), "a client behind the server");
        // A renewal that finds the clock 3 s ahead stops the lease; within the allowance, or a
        // renewal that found the lease lost, does not.
        let _ = steps.renew("rid", 2);
        assert_eq!(
            steps.clock_ahead(&[Cell::Int(1), Cell::Int(1_000_000 - 3_000)]),
            Some(3_000)
        );
        assert_eq!(
            steps.clock_ahead(&[Cell::Int(1), Cell::Int(1_000_000 - 2_000)]),
            None
        );
        assert_eq!(steps.clock_ahead(&[Cell::Int(0)]), None);
        // A reply without the server's clock: nothing to compare.
        assert!(matches!(
            steps.claimed(&reply(0)[..3]),
            Claimed::Shard { .. }
        ));
    }
}
