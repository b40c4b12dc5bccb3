//! Shard leases on Redis (feature `redis`): a shard of a range claimed, renewed, its ceiling
//! raised and released by one script each ([`super::scripts`]: `LEASE_CLAIM`, `LEASE_RENEW`,
//! `LEASE_RECORD`, `LEASE_RELEASE`), expiring by the server's clock, with a fencing token (one
//! more at every claim of the shard) and the ceiling rule of the SQL leases: the generator
//! ([`CeilingGenerator`]) hands out IDs only below a ceiling the server recorded while the
//! lease held, so a holder that lost its lease (stopped by `SIGSTOP` past its time to live, taken over)
//! stops at its next write (`LEASE_LOST`), and a new holder starts above the last holder's
//! ceiling. A shard last written by another server (a promoted replica, a restart that lost
//! writes, a server that restarted empty) starts above the server's clock plus the hosts' skew
//! ([`crate::sql::failover::SKEW_MS`]), as a PostgreSQL row of another timeline does.
//!
//! ```no_run
//! use shardid::Layout;
//! use shardid::redis::Lease;
//!
//! let lease = Lease::acquire("redis://127.0.0.1:6379", Layout::INSTAGRAM, 0..1024, "shardid", 10_000)?;
//! let id = lease.next_id()?;
//! lease.close();
//! # Ok::<(), shardid::lease::LeaseError>(())
//! ```

use std::boxed::Box;
use std::fmt;
use std::format;
use std::ops::Range;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::vec::Vec;

use super::client::RedisClient;
use super::lease_steps::{Claimed, LeaseSteps};
use super::scripts;
use crate::driver::{Client, ConnectError, Owned};
use crate::lease::{
    CeilingGenerator, CeilingStore, DatabaseFailure, Hold, LeaseError, LostLease, Tally,
    monotonic_ms, new_token, wait_for_ceiling,
};
use crate::sql::Cell;
use crate::{Layout, Options};

fn connect(url: &str) -> Result<RedisClient, LeaseError> {
    RedisClient::connect(url).map_err(|e| match e {
        ConnectError::Url(reason) => LeaseError::InvalidArgument {
            argument: "url",
            reason,
        },
        ConnectError::NotMysql { reason, .. } => LeaseError::Database(reason.into()),
        ConnectError::Driver(e) => LeaseError::Unreachable(Box::new(e)),
    })
}

/// What the ceiling store, the heartbeat and the lease share.
struct Shared {
    url: String,
    steps: LeaseSteps,
    shard: u64,
    conn: Mutex<Option<RedisClient>>,
    hold: Arc<Hold>,
    closed: AtomicBool,
    wake: Condvar,
    wake_lock: Mutex<()>,
}

impl Shared {
    /// Runs a lease script for the shard on the connection (reconnecting first when it was
    /// lost): whether the lease holds (its reply's first integer is 1), and for a renewal how
    /// far this host's clock was found ahead of the server's when too far
    /// ([`LeaseSteps::clock_ahead`]).
    fn run(
        &self,
        source: &'static str,
        extra: Option<u64>,
    ) -> Result<(bool, Option<u64>), LeaseError> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if conn.as_ref().is_none_or(RedisClient::is_closed) {
            *conn = Some(connect(&self.url)?);
        }
        let Some(client) = conn.as_mut() else {
            unreachable!("connected above")
        };
        let run_id = client.run_id();
        let command = match (source, extra) {
            (scripts::LEASE_RECORD, Some(units)) => self.steps.record(run_id, self.shard, units),
            (scripts::LEASE_RELEASE, _) => self.steps.release(run_id, self.shard),
            _ => self.steps.renew(run_id, self.shard),
        };
        match client.script(&command) {
            Ok(reply) => {
                let cells: Vec<Cell<'_>> = reply.iter().map(Owned::cell).collect();
                let ahead = match source {
                    scripts::LEASE_RENEW => self.steps.clock_ahead(&cells),
                    _ => None,
                };
                Ok((LeaseSteps::held(&cells), ahead))
            }
            Err(e) => {
                if RedisClient::broken(&e) {
                    *conn = None;
                }
                Err(LeaseError::Database(Box::new(e)))
            }
        }
    }
}

/// The generator's ceiling store: `LEASE_RECORD`.
struct Store(Arc<Shared>);

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisLease")
            .field("shard", &self.0.shard)
            .finish_non_exhaustive()
    }
}

impl CeilingStore for Store {
    fn store(&self, _at_least: u64, wanted: u64) -> std::io::Result<u64> {
        let shared = &self.0;
        if shared.closed.load(Ordering::Acquire) {
            return Err(std::io::Error::other(LostLease));
        }
        let sent = shared
            .hold
            .sending()
            .ok_or_else(|| std::io::Error::other(LostLease))?;
        match shared
            .run(scripts::LEASE_RECORD, Some(wanted))
            .map(|(held, _)| held)
        {
            Ok(true) => {
                shared.hold.renewed(sent);
                Ok(wanted)
            }
            Ok(false) => {
                shared.hold.lose();
                Err(std::io::Error::other(LostLease))
            }
            Err(LeaseError::Database(e) | LeaseError::Unreachable(e)) => {
                Err(std::io::Error::other(DatabaseFailure(e)))
            }
            Err(e) => Err(std::io::Error::other(DatabaseFailure(e.to_string().into()))),
        }
    }
}

/// A generator on a shard leased through a Redis server: see the [module](self) docs.
/// `Sync`: share it (in an `Arc`) between threads.
pub struct Lease {
    shared: Arc<Shared>,
    generator: Arc<CeilingGenerator>,
    heartbeat: Mutex<Option<thread::JoinHandle<()>>>,
    fencing_token: u64,
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("shard", &self.shared.shard)
            .field("fencing_token", &self.fencing_token)
            .finish_non_exhaustive()
    }
}

impl Lease {
    /// Leases the first free shard of `shards` for `layout` through the Redis server `url`
    /// names, its keys under `prefix`, expiring `ttl_ms` after its last renewal by the server's
    /// clock (renewed by a thread of its own); waits, before the first ID, until this host's
    /// clock passes the ceiling the shard starts above.
    ///
    /// # Errors
    /// [`LeaseError::InvalidArgument`] for a bad URL, prefix or time to live,
    /// [`LeaseError::EmptyShards`], [`LeaseError::Unreachable`] when the server cannot be
    /// reached, [`LeaseError::NoFreeShard`] when every shard is held,
    /// [`LeaseError::ClockSkew`] when this host's clock is more than
    /// [`crate::sql::failover::SKEW_MS`] ahead of the server's (the shard claimed is released
    /// first: see [`super::lease_steps`]).
    pub fn acquire(
        url: &str,
        layout: Layout,
        shards: Range<u64>,
        prefix: &str,
        ttl_ms: u64,
    ) -> Result<Self, LeaseError> {
        let holder = format!("pid {} (rust)", std::process::id());
        // The prefix, the time to live, then the range: the core's checks.
        let steps = LeaseSteps::new(
            prefix,
            &layout,
            shards.clone(),
            ttl_ms,
            &new_token(),
            &holder,
        )
        .map_err(|(argument, reason)| match argument {
            "shards" => LeaseError::EmptyShards {
                shards: shards.clone(),
            },
            _ => LeaseError::InvalidArgument {
                argument,
                reason: reason.into(),
            },
        })?;
        let mut client = connect(url)?;
        let sent = monotonic_ms();
        let reply = client
            .script(&steps.claim(client.run_id()))
            .map_err(|e| LeaseError::Database(Box::new(e)))?;
        let cells: Vec<Cell<'_>> = reply.iter().map(Owned::cell).collect();
        let (shard, recorded, fencing_token) = match steps.claimed(&cells) {
            Claimed::Shard {
                shard,
                ceiling,
                fencing_token,
            } => (shard, ceiling, fencing_token),
            Claimed::ClockSkew {
                shard,
                ahead_ms,
                max_ms,
            } => {
                // Nothing may stay claimed by a holder that can hand out no ID: the shard is
                // free for the next holder at once (best effort: else it expires).
                let _ = client.script(&steps.release(client.run_id(), shard));
                return Err(LeaseError::ClockSkew { ahead_ms, max_ms });
            }
            Claimed::NoFreeShard => {
                return Err(LeaseError::NoFreeShard {
                    directory: format!("Redis key {}", steps.key()).into(),
                    shards,
                });
            }
            _ => {
                return Err(LeaseError::Database(
                    format!("the Redis server answered the claim with {reply:?}").into(),
                ));
            }
        };
        let hold = Arc::new(Hold::new(ttl_ms, sent));
        let state = Arc::new(Shared {
            url: url.into(),
            steps,
            shard,
            conn: Mutex::new(Some(client)),
            hold: Arc::clone(&hold),
            closed: AtomicBool::new(false),
            wake: Condvar::new(),
            wake_lock: Mutex::new(()),
        });
        let generator = CeilingGenerator::new(
            layout,
            shard,
            Options::new(),
            recorded,
            Box::new(Store(Arc::clone(&state))),
        )
        .map_err(LeaseError::Id)?
        .with_tally(Tally::new(&layout, "redis"))
        .with_hold(hold);
        let generator = Arc::new(generator);
        let (beat_shared, beat_generator) = (Arc::clone(&state), Arc::clone(&generator));
        let heartbeat = thread::Builder::new()
            .name("shardid-lease".into())
            .spawn(move || heartbeat(&beat_shared, &beat_generator))
            .map_err(LeaseError::Io)?;
        wait_for_ceiling(&layout, recorded);
        Ok(Self {
            shared: state,
            generator,
            heartbeat: Mutex::new(Some(heartbeat)),
            fencing_token,
        })
    }

    /// The shard leased.
    pub fn shard(&self) -> u64 {
        self.shared.shard
    }

    /// The fencing token of this claim: larger than every earlier claim's of the shard on
    /// this server's data (a store that writes on the holder's behalf can refuse a smaller one).
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// Whether the lease is still held.
    pub fn is_held(&self) -> bool {
        !self.shared.closed.load(Ordering::Acquire) && self.shared.hold.holds()
    }

    /// The next ID.
    ///
    /// # Errors
    /// [`LeaseError::Lost`] once the lease is lost, [`LeaseError::Closed`] after `close`,
    /// [`LeaseError::ClockSkew`] once a renewal found this host's clock too far ahead of the
    /// server's, the generator's errors.
    pub fn next_id(&self) -> Result<u64, LeaseError> {
        self.generator.next_id().map_err(|e| {
            if self.shared.closed.load(Ordering::Acquire) {
                LeaseError::Closed {
                    shard: self.shared.shard,
                }
            } else {
                e
            }
        })
    }

    /// Stops the heartbeat and frees the shard at once (best effort: an unreleased lease
    /// expires on its own).
    pub fn close(&self) {
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.generator.close();
        {
            let _wake = self
                .shared
                .wake_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.shared.wake.notify_all();
        }
        let handle = self
            .heartbeat
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
        let _ = self.shared.run(scripts::LEASE_RELEASE, None);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.close();
    }
}

/// The heartbeat: renews when due, and stops the generator once the lease is lost.
fn heartbeat(shared: &Shared, generator: &CeilingGenerator) {
    loop {
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        let Some(wait) = shared.hold.wait() else {
            generator.revoke();
            return;
        };
        if !wait.is_zero() {
            let guard = shared
                .wake_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let _ = shared
                .wake
                .wait_timeout(guard, wait)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        let Some(sent) = shared.hold.sending() else {
            generator.revoke();
            return;
        };
        match shared.run(scripts::LEASE_RENEW, None) {
            Ok((true, Some(ahead_ms))) => {
                // This host's clock moved too far ahead of the server's since the claim: the
                // generator stops, and says why (CLOCK_SKEW), as a SQL lease's does.
                generator.revoke_clock_skew(ahead_ms);
                return;
            }
            Ok((true, None)) => shared.hold.renewed(sent),
            Ok((false, _)) => {
                shared.hold.lose();
                if !shared.closed.load(Ordering::Acquire) {
                    generator.revoke();
                }
                return;
            }
            Err(_) => shared.hold.failed(),
        }
    }
}
