//! A shard lease on Redis as steps (sans I/O): the script to run for a claim, a renewal, a
//! ceiling's record and a release ([`super::scripts`]), with its key and arguments, and the
//! reading of each reply, for an executor in any language that holds the connection, reads
//! the server's `run_id` (per connection) and keeps the lease's generator
//! ([`crate::lease::CeilingGenerator`] with its `Hold`, or a binding's). The Rust client
//! (`shardid::redis::lease`, feature `redis`) builds the same commands.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use core::ops::Range;

use super::{Command, prefix_problem, scripts};
use crate::Layout;
use crate::sql::Cell;

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
        })
    }

    /// The lease hash's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The claim of the first free shard, on the server whose identity is `run_id`.
    pub fn claim(&self, run_id: &str) -> Command {
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

    /// What a claim's reply says.
    pub fn claimed(reply: &[Cell<'_>]) -> Claimed {
        match (int(reply.first()), int(reply.get(1)), int(reply.get(2))) {
            (Some(-1), ..) => Claimed::NoFreeShard,
            (Some(shard), Some(ceiling), Some(fence)) if shard >= 0 && fence > 0 => {
                Claimed::Shard {
                    shard: shard.unsigned_abs(),
                    ceiling: u64::try_from(ceiling).ok(),
                    fencing_token: fence.unsigned_abs(),
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

    /// A renewal of `shard`'s lease.
    pub fn renew(&self, run_id: &str, shard: u64) -> Command {
        self.on_shard(scripts::LEASE_RENEW, run_id, shard, None)
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
            LeaseSteps::claimed(&[Cell::Int(2), Cell::Int(-1), Cell::Int(3)]),
            Claimed::Shard {
                shard: 2,
                ceiling: None,
                fencing_token: 3
            }
        );
        assert_eq!(
            LeaseSteps::claimed(&[Cell::Int(-1), Cell::Int(4)]),
            Claimed::NoFreeShard
        );
        assert_eq!(LeaseSteps::claimed(&[Cell::Int(2)]), Claimed::Unusable);
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
}
