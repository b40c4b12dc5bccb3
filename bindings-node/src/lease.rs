//! The functions behind the JS `lease()` and `LeasedGenerator`: a shard leased from a
//! directory of lock files (the core's `lease` module), so N copies of one service (cluster
//! workers, PM2, replicas on one host) never share a shard.

use napi::bindgen_prelude::{BigUint64Array, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use shardid::lease::{
    BackendClaim, CeilingGenerator, CeilingStore, Hold, LeaseError, LeasedGenerator,
};

use crate::args::{Arg, ids_for, options_arg, u64_arg};
use crate::errors::{Class, Field, core_error, guard, invalid_argument, throw, throw_kind};

use crate::layout::layout;
use crate::slots::{Slots, full};
use shardid::ErrorKind;

/// A lease in the table: each call adds one (`push`).
pub(crate) struct Entry(LeasedGenerator);

static LEASES: Slots<Entry> = Slots::new();

fn lease_error(env: &Env, e: LeaseError) -> napi::Error {
    match e {
        LeaseError::Id(e) => core_error(env, e),
        LeaseError::NoFreeShard { directory, shards } => throw_kind(
            env,
            ErrorKind::NoFreeShard,
            &[
                ("first", Field::Int(shards.start)),
                ("end", Field::Int(shards.end)),
                (
                    "held_in",
                    Field::Text(&format!("lock files in {}", directory.display())),
                ),
            ],
        ),
        LeaseError::Lost { shard } => {
            throw_kind(env, ErrorKind::LeaseLost, &[("shard", Field::Int(shard))])
        }
        LeaseError::Closed { shard } => throw_kind(
            env,
            ErrorKind::Closed,
            &[("what", Field::Text(&format!("the lease on shard {shard}")))],
        ),
        LeaseError::SessionPooled { reason } => throw_kind(
            env,
            ErrorKind::SessionPooled,
            &[("reason", Field::Text(&reason))],
        ),
        LeaseError::EmptyShards { shards } => {
            let reason = shardid::lease::empty_shards(&shards).to_string();
            crate::errors::invalid_argument(env, crate::errors::Class::Range, "shards", &reason)
        }
        e => {
            // The reason is the core's message less the kind's own words around it.
            let message = e.to_string();
            let reason = message.strip_prefix("lease file: ").unwrap_or(&message);
            throw_kind(env, e.kind(), &[("reason", Field::Text(reason))])
        }
    }
}

fn leased(env: &Env, index: u32) -> Result<&'static LeasedGenerator> {
    LEASES.get(index).map(|e| &e.0).ok_or_else(|| {
        invalid_argument(
            env,
            Class::Type,
            "lease",
            "is not a shardid LeasedGenerator",
        )
    })
}

/// Leases the first free shard of `start..end` from lock files in `directory`; returns its
/// index.
#[napi]
pub fn lease_new(
    env: &Env,
    layout_index: u32,
    directory: String,
    start: Unknown<'_>,
    end: Unknown<'_>,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
) -> Result<u32> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        let start = u64_arg(env, &start, "shards[0]", Arg::Shard)?;
        let end = u64_arg(env, &end, "shards[1]", Arg::Other)?;
        let options = options_arg(env, backwards_tolerance_ms, max_borrow_units)?;
        let generator = LeasedGenerator::acquire(directory, start..end, layout, options)
            .map_err(|e| lease_error(env, e))?;
        LEASES
            .push(Entry(generator))
            .ok_or_else(|| full(env, "lease", "is one too many: a process holds 2^32 leases"))
    })
}

/// Releases the lease's shard at once; later calls throw `LEASE_LOST`.
#[napi]
pub fn lease_close(env: &Env, index: u32) -> Result<()> {
    guard(env, || {
        leased(env, index)?.close();
        Ok(())
    })
}

/// The shard the lease holds.
#[napi]
pub fn lease_shard(env: &Env, index: u32) -> Result<u32> {
    guard(env, || {
        let shard = leased(env, index)?
            .shard()
            .map_err(|e| lease_error(env, e))?;
        // Layout shard fields the JS side accepts fit a u32 (checked when the layout was made).
        Ok(u32::try_from(shard).unwrap_or(u32::MAX))
    })
}

/// One ID now.
#[napi]
pub fn lease_next_id(env: &Env, index: u32) -> Result<u64> {
    guard(env, || {
        leased(env, index)?
            .next_id()
            .map_err(|e| lease_error(env, e))
    })
}

/// One ID now, as a decimal string.
#[napi]
pub fn lease_next_id_string(env: &Env, index: u32) -> Result<String> {
    guard(env, || Ok(lease_next_id(env, index)?.to_string()))
}

/// One ID as if the clock read `now`.
#[napi]
pub fn lease_next_id_at(env: &Env, index: u32, now: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let now = u64_arg(env, &now, "now", Arg::Timestamp)?;
        leased(env, index)?
            .next_id_at(now)
            .map_err(|e| lease_error(env, e))
    })
}

/// `n` IDs now.
#[napi]
pub fn lease_next_ids(env: &Env, index: u32, n: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        let mut ids = ids_for(env, &n)?;
        leased(env, index)?
            .next_ids(&mut ids)
            .map_err(|e| lease_error(env, e))?;
        Ok(BigUint64Array::new(ids))
    })
}

/// The ceiling a database lease has recorded so far, set from JavaScript once its write
/// succeeded (`pg` is asynchronous, the generator is not): the generator hands out nothing
/// above it and says how far it needs it to go.
#[derive(Debug, Default)]
struct Recorded {
    confirmed: AtomicU64,
    wanted: AtomicU64,
}

#[derive(Debug)]
struct RecordedStore(Arc<Recorded>);

impl CeilingStore for RecordedStore {
    fn store(&self, at_least: u64, wanted: u64) -> std::io::Result<u64> {
        let confirmed = self.0.confirmed.load(Ordering::Acquire);
        if at_least <= confirmed {
            return Ok(confirmed);
        }
        self.0.wanted.fetch_max(wanted, Ordering::AcqRel);
        Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "the lease's ceiling must be recorded first",
        ))
    }
}

/// A generator above a ceiling recorded in a database (`shardid/postgres`), with an expiring
/// lease's hold.
pub(crate) struct CeilingEntry {
    generator: CeilingGenerator,
    recorded: Arc<Recorded>,
    hold: Option<Arc<Hold>>,
}

static CEILINGS: Slots<CeilingEntry> = Slots::new();

fn ceiling_entry(env: &Env, index: u32) -> Result<&'static CeilingEntry> {
    CEILINGS.get(index).ok_or_else(|| {
        invalid_argument(env, Class::Type, "lease", "is not a shardid database lease")
    })
}

fn ceiling_error(env: &Env, e: LeaseError) -> napi::Error {
    match e {
        LeaseError::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => {
            throw(env, Class::Plain, "CEILING_PENDING", &io.to_string())
        }
        e => lease_error(env, e),
    }
}

/// The counters of one database lease across the shards it takes (the core's `lease::Tally`,
/// reported to exporters): one per `DatabaseLease`, never freed (as the generators' entries).
static TALLIES: Slots<TallyEntry> = Slots::new();

pub(crate) struct TallyEntry(Arc<shardid::lease::Tally>);

fn tally_entry(env: &Env, index: u32) -> Result<&'static Arc<shardid::lease::Tally>> {
    TALLIES.get(index).map(|t| &t.0).ok_or_else(|| {
        invalid_argument(env, Class::Type, "lease", "is not a shardid database lease")
    })
}

/// New counters for a lease of the layout at `layout_index` in `table`; returns their index,
/// which `ceilingNew` takes for each shard the lease takes.
#[napi]
pub fn lease_tally_new(env: &Env, layout_index: u32, table: String) -> Result<u32> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        TALLIES
            .push(TallyEntry(shardid::lease::Tally::new(&layout, &table)))
            .ok_or_else(|| {
                full(
                    env,
                    "lease",
                    "is one too many: a process makes 4,096 leases",
                )
            })
    })
}

/// What the lease did: the core's counters in its table's order (`STATS.lease` in
/// core.generated.js names them).
#[napi]
pub fn lease_tally_stats(env: &Env, index: u32) -> Result<BigUint64Array> {
    guard(env, || {
        Ok(BigUint64Array::new(
            tally_entry(env, index)?.stats().values().to_vec(),
        ))
    })
}

/// A generator for `shard` above the `recorded` ceiling (0: none); for an expiring lease,
/// `ttl_ms` and `sent_at` (when its claim was sent, by `leaseNow()`) make its hold; it counts
/// into the lease's counters at `tally_index` (one acquisition now). Returns its index.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn ceiling_new(
    env: &Env,
    layout_index: u32,
    shard: Unknown<'_>,
    recorded: Unknown<'_>,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
    ttl_ms: Option<Unknown<'_>>,
    sent_at: Option<Unknown<'_>>,
    tally_index: Option<u32>,
) -> Result<u32> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        let shard = u64_arg(env, &shard, "shard", Arg::Shard)?;
        let recorded_units = u64_arg(env, &recorded, "recorded", Arg::Other)?;
        let options = options_arg(env, backwards_tolerance_ms, max_borrow_units)?;
        let recorded = Arc::new(Recorded::default());
        recorded.confirmed.store(recorded_units, Ordering::Release);
        let start = (recorded_units > 0).then_some(recorded_units);
        let mut generator = CeilingGenerator::new(
            layout,
            shard,
            options,
            start,
            Box::new(RecordedStore(recorded.clone())),
        )
        .map_err(|e| core_error(env, e))?;
        if let Some(tally) = tally_index {
            generator = generator.with_tally(Arc::clone(tally_entry(env, tally)?));
        }
        let hold = match (ttl_ms, sent_at) {
            (Some(ttl), Some(sent)) if !is_nullish(env, &ttl) => {
                let ttl = u64_arg(env, &ttl, "ttlMs", Arg::Other)?;
                let sent = u64_arg(env, &sent, "sentAt", Arg::Other)?;
                let hold = Arc::new(Hold::new(ttl, sent));
                generator = generator.with_hold(Arc::clone(&hold));
                Some(hold)
            }
            _ => None,
        };
        CEILINGS
            .push(CeilingEntry {
                generator,
                recorded,
                hold,
            })
            .ok_or_else(|| full(env, "lease", "is one too many: a process holds 2^32 leases"))
    })
}

/// The ceiling the generator is waiting for (after a `CEILING_PENDING` error).
#[napi]
pub fn ceiling_wanted(env: &Env, index: u32) -> Result<u64> {
    guard(env, || {
        Ok(ceiling_entry(env, index)?
            .recorded
            .wanted
            .load(Ordering::Acquire))
    })
}

/// Tells the generator that `units` is now recorded, by a write sent at `sent_at` (which
/// renews an expiring lease).
#[napi]
pub fn ceiling_confirm(
    env: &Env,
    index: u32,
    units: Unknown<'_>,
    sent_at: Option<Unknown<'_>>,
) -> Result<()> {
    guard(env, || {
        let units = u64_arg(env, &units, "units", Arg::Other)?;
        let entry = ceiling_entry(env, index)?;
        if let (Some(hold), Some(sent)) = (&entry.hold, sent_at) {
            hold.renewed(u64_arg(env, &sent, "sentAt", Arg::Other)?);
        }
        entry.recorded.confirmed.fetch_max(units, Ordering::AcqRel);
        Ok(())
    })
}

fn is_nullish(env: &Env, value: &Unknown<'_>) -> bool {
    matches!(
        crate::args::type_of(env, napi::JsValue::raw(value)),
        napi::ValueType::Undefined | napi::ValueType::Null
    )
}

/// The monotonic clock leases count with, in milliseconds (since the process's first use: far
/// below 2^53).
#[napi]
#[allow(clippy::cast_precision_loss)]
pub fn lease_now(env: &Env) -> Result<f64> {
    guard(env, || Ok(shardid::lease::monotonic_ms() as f64))
}

/// Milliseconds a new holder waits for its clock to pass the ceiling of the generator at
/// `index` (after a failover the database raises it to its own clock plus the hosts' skew).
#[napi]
#[allow(clippy::cast_precision_loss)]
pub fn ceiling_wait_ms(env: &Env, index: u32, recorded: Unknown<'_>) -> Result<f64> {
    guard(env, || {
        let recorded = u64_arg(env, &recorded, "recorded", Arg::Other)?;
        let layout = ceiling_entry(env, index)?.generator.layout();
        let recorded = (recorded > 0).then_some(recorded);
        Ok(shardid::lease::ceiling_wait_ms(&layout, recorded) as f64)
    })
}

fn hold_of(env: &Env, index: u32) -> Result<&'static Arc<Hold>> {
    ceiling_entry(env, index)?
        .hold
        .as_ref()
        .ok_or_else(|| invalid_argument(env, Class::Type, "lease", "is not an expiring lease"))
}

/// The sending time of a renewal or ceiling write about to be sent, or `null` when the lease
/// is no longer held (lost for good).
#[napi]
#[allow(clippy::cast_precision_loss)]
pub fn ceiling_sending(env: &Env, index: u32) -> Result<Option<f64>> {
    guard(env, || {
        Ok(hold_of(env, index)?.sending().map(|ms| ms as f64))
    })
}

/// A renewal sent at `sent_at` returned its row.
#[napi]
pub fn ceiling_renewed(env: &Env, index: u32, sent_at: Unknown<'_>) -> Result<()> {
    guard(env, || {
        let sent = u64_arg(env, &sent_at, "sentAt", Arg::Other)?;
        hold_of(env, index)?.renewed(sent);
        Ok(())
    })
}

/// A renewal failed (the database did not answer): retry sooner.
#[napi]
pub fn ceiling_failed(env: &Env, index: u32) -> Result<()> {
    guard(env, || {
        hold_of(env, index)?.failed();
        Ok(())
    })
}

/// Milliseconds until the heartbeat's next renewal, or `null` once the lease is lost.
#[napi]
#[allow(clippy::cast_precision_loss)]
pub fn ceiling_wait(env: &Env, index: u32) -> Result<Option<f64>> {
    guard(env, || {
        Ok(hold_of(env, index)?.wait_ms().map(|ms| ms as f64))
    })
}

/// Whether the lease is held now (a session lease: always, until revoked).
#[napi]
pub fn ceiling_holds(env: &Env, index: u32) -> Result<bool> {
    guard(env, || {
        Ok(ceiling_entry(env, index)?
            .hold
            .as_ref()
            .is_none_or(|hold| hold.holds()))
    })
}

/// Stops the generator for good: the lease is lost (counted as a loss if it was held).
#[napi]
pub fn ceiling_revoke(env: &Env, index: u32) -> Result<()> {
    guard(env, || {
        ceiling_entry(env, index)?.generator.revoke();
        Ok(())
    })
}

/// Stops the generator for good: the lease is closed (no loss).
#[napi]
pub fn ceiling_close(env: &Env, index: u32) -> Result<()> {
    guard(env, || {
        ceiling_entry(env, index)?.generator.close();
        Ok(())
    })
}

/// A session lease's server session, recorded process-wide (see `shardid::lease::claim_backend`).
pub(crate) struct ClaimEntry(std::sync::Mutex<Option<BackendClaim>>);

static CLAIMS: Slots<ClaimEntry> = Slots::new();

/// Records the server session of a new session lease; throws `SESSION_POOLED` when another
/// session lease of this process holds a lock on it (a pooler is in front). Returns an index
/// for `releaseBackend`.
#[napi]
pub fn claim_backend(env: &Env, identity: String) -> Result<u32> {
    guard(env, || {
        let claim = shardid::lease::claim_backend(&identity).map_err(|e| lease_error(env, e))?;
        CLAIMS
            .push(ClaimEntry(std::sync::Mutex::new(Some(claim))))
            .ok_or_else(|| full(env, "lease", "is one too many"))
    })
}

/// Forgets a session lease's server session (the lease is closed).
#[napi]
pub fn release_backend(env: &Env, index: u32) -> Result<()> {
    guard(env, || {
        if let Some(entry) = CLAIMS.get(index) {
            drop(
                entry
                    .0
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take(),
            );
        }
        Ok(())
    })
}

/// One ID now; `CEILING_PENDING` when a new ceiling must be recorded first.
#[napi]
pub fn ceiling_next_id(env: &Env, index: u32) -> Result<u64> {
    guard(env, || {
        ceiling_entry(env, index)?
            .generator
            .next_id()
            .map_err(|e| ceiling_error(env, e))
    })
}

/// One ID as if the clock read `now`.
#[napi]
pub fn ceiling_next_id_at(env: &Env, index: u32, now: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let now = u64_arg(env, &now, "now", Arg::Timestamp)?;
        ceiling_entry(env, index)?
            .generator
            .next_id_at(now)
            .map_err(|e| ceiling_error(env, e))
    })
}

/// `n` IDs now.
#[napi]
pub fn ceiling_next_ids(env: &Env, index: u32, n: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        let mut ids = ids_for(env, &n)?;
        ceiling_entry(env, index)?
            .generator
            .next_ids(&mut ids)
            .map_err(|e| ceiling_error(env, e))?;
        Ok(BigUint64Array::new(ids))
    })
}
