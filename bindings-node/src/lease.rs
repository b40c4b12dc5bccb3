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
use crate::slots::{own, owned};
use napi::bindgen_prelude::External;
use shardid::ErrorKind;

/// A lease from lock files, owned by its JS `LeasedGenerator` (an `External`: `slots::own`).
pub(crate) struct Entry(LeasedGenerator);

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
        LeaseError::ClockSkew { ahead_ms, max_ms } => throw_kind(
            env,
            ErrorKind::ClockSkew,
            &[
                ("ahead_ms", Field::Int(ahead_ms)),
                ("max_ms", Field::Int(max_ms)),
            ],
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

fn leased<'a>(env: &Env, index: &Unknown<'a>) -> Result<&'a LeasedGenerator> {
    owned::<Entry>(env, index).map(|e| &e.0).ok_or_else(|| {
        invalid_argument(
            env,
            Class::Type,
            "lease",
            "is not a shardid LeasedGenerator",
        )
    })
}

/// Leases the first free shard of `start..end` from lock files in `directory`; returns the
/// lease, for the JS object to hold (freed when it is collected; `leaseClose` frees the shard).
#[napi(ts_return_type = "object")]
pub fn lease_new(
    env: &Env,
    layout_index: u32,
    directory: String,
    start: Unknown<'_>,
    end: Unknown<'_>,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
) -> Result<External<Entry>> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        let start = u64_arg(env, &start, "shards[0]", Arg::Shard)?;
        let end = u64_arg(env, &end, "shards[1]", Arg::Other)?;
        let options = options_arg(env, backwards_tolerance_ms, max_borrow_units)?;
        let generator = LeasedGenerator::acquire(directory, start..end, layout, options)
            .map_err(|e| lease_error(env, e))?;
        Ok(own(Entry(generator)))
    })
}

/// Releases the lease's shard at once; later calls throw `LEASE_LOST`.
#[napi]
pub fn lease_close(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        leased(env, &index)?.close();
        Ok(())
    })
}

/// The shard the lease holds.
#[napi]
pub fn lease_shard(env: &Env, index: Unknown<'_>) -> Result<u32> {
    guard(env, || {
        let shard = leased(env, &index)?
            .shard()
            .map_err(|e| lease_error(env, e))?;
        // Layout shard fields the JS side accepts fit a u32 (checked when the layout was made).
        Ok(u32::try_from(shard).unwrap_or(u32::MAX))
    })
}

/// One ID now.
#[napi]
pub fn lease_next_id(env: &Env, index: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        leased(env, &index)?
            .next_id()
            .map_err(|e| lease_error(env, e))
    })
}

/// One ID now, as a decimal string.
#[napi]
pub fn lease_next_id_string(env: &Env, index: Unknown<'_>) -> Result<String> {
    guard(env, || Ok(lease_next_id(env, index)?.to_string()))
}

/// One ID as if the clock read `now`.
#[napi]
pub fn lease_next_id_at(env: &Env, index: Unknown<'_>, now: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let now = u64_arg(env, &now, "now", Arg::Timestamp)?;
        leased(env, &index)?
            .next_id_at(now)
            .map_err(|e| lease_error(env, e))
    })
}

/// `n` IDs now.
#[napi]
pub fn lease_next_ids(env: &Env, index: Unknown<'_>, n: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        let mut ids = ids_for(env, &n)?;
        leased(env, &index)?
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

fn ceiling_entry<'a>(env: &Env, index: &Unknown<'a>) -> Result<&'a CeilingEntry> {
    owned::<CeilingEntry>(env, index).ok_or_else(|| {
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
/// reported to exporters while it lives): one per `DatabaseLease`, which owns it.
pub(crate) struct TallyEntry(Arc<shardid::lease::Tally>);

fn tally_entry<'a>(env: &Env, index: &Unknown<'a>) -> Result<&'a Arc<shardid::lease::Tally>> {
    owned::<TallyEntry>(env, index)
        .map(|t| &t.0)
        .ok_or_else(|| {
            invalid_argument(env, Class::Type, "lease", "is not a shardid database lease")
        })
}

/// New counters for a lease of the layout at `layout_index` in `table`, which `ceilingNew`
/// takes for each shard the lease takes.
#[napi(ts_return_type = "object")]
pub fn lease_tally_new(
    env: &Env,
    layout_index: u32,
    table: String,
) -> Result<External<TallyEntry>> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        Ok(own(TallyEntry(shardid::lease::Tally::new(&layout, &table))))
    })
}

/// What the lease did: the core's counters in its table's order (`STATS.lease` in
/// core.generated.js names them).
#[napi]
pub fn lease_tally_stats(env: &Env, index: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        Ok(BigUint64Array::new(
            tally_entry(env, &index)?.stats().values().to_vec(),
        ))
    })
}

/// A generator for `shard` above the `recorded` ceiling (0: none); for an expiring lease,
/// `ttl_ms` and `sent_at` (when its claim was sent, by `leaseNow()`) make its hold; it counts
/// into the lease's counters `tally` (one acquisition now). Returns it, for the JS side to hold.
#[napi(ts_return_type = "object")]
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
    tally: Option<Unknown<'_>>,
) -> Result<External<CeilingEntry>> {
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
        if let Some(tally) = tally.filter(|t| !is_nullish(env, t)) {
            generator = generator.with_tally(Arc::clone(tally_entry(env, &tally)?));
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
        Ok(own(CeilingEntry {
            generator,
            recorded,
            hold,
        }))
    })
}

/// The ceiling the generator is waiting for (after a `CEILING_PENDING` error).
#[napi]
pub fn ceiling_wanted(env: &Env, index: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        Ok(ceiling_entry(env, &index)?
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
    index: Unknown<'_>,
    units: Unknown<'_>,
    sent_at: Option<Unknown<'_>>,
) -> Result<()> {
    guard(env, || {
        let units = u64_arg(env, &units, "units", Arg::Other)?;
        let entry = ceiling_entry(env, &index)?;
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
pub fn ceiling_wait_ms(env: &Env, index: Unknown<'_>, recorded: Unknown<'_>) -> Result<f64> {
    guard(env, || {
        let recorded = u64_arg(env, &recorded, "recorded", Arg::Other)?;
        let layout = ceiling_entry(env, &index)?.generator.layout();
        let recorded = (recorded > 0).then_some(recorded);
        Ok(shardid::lease::ceiling_wait_ms(&layout, recorded) as f64)
    })
}

fn hold_of<'a>(env: &Env, index: &Unknown<'a>) -> Result<&'a Arc<Hold>> {
    ceiling_entry(env, index)?
        .hold
        .as_ref()
        .ok_or_else(|| invalid_argument(env, Class::Type, "lease", "is not an expiring lease"))
}

/// The sending time of a renewal or ceiling write about to be sent, or `null` when the lease
/// is no longer held (lost for good).
#[napi]
#[allow(clippy::cast_precision_loss)]
pub fn ceiling_sending(env: &Env, index: Unknown<'_>) -> Result<Option<f64>> {
    guard(env, || {
        Ok(hold_of(env, &index)?.sending().map(|ms| ms as f64))
    })
}

/// A renewal sent at `sent_at` returned its row.
#[napi]
pub fn ceiling_renewed(env: &Env, index: Unknown<'_>, sent_at: Unknown<'_>) -> Result<()> {
    guard(env, || {
        let sent = u64_arg(env, &sent_at, "sentAt", Arg::Other)?;
        hold_of(env, &index)?.renewed(sent);
        Ok(())
    })
}

/// A renewal failed (the database did not answer): retry sooner.
#[napi]
pub fn ceiling_failed(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        hold_of(env, &index)?.failed();
        Ok(())
    })
}

/// Milliseconds until the heartbeat's next renewal, or `null` once the lease is lost.
#[napi]
#[allow(clippy::cast_precision_loss)]
pub fn ceiling_wait(env: &Env, index: Unknown<'_>) -> Result<Option<f64>> {
    guard(env, || {
        Ok(hold_of(env, &index)?.wait_ms().map(|ms| ms as f64))
    })
}

/// Whether the lease is held now (a session lease: always, until revoked).
#[napi]
pub fn ceiling_holds(env: &Env, index: Unknown<'_>) -> Result<bool> {
    guard(env, || {
        Ok(ceiling_entry(env, &index)?
            .hold
            .as_ref()
            .is_none_or(|hold| hold.holds()))
    })
}

/// Stops the generator for good: the lease is lost (counted as a loss if it was held).
#[napi]
pub fn ceiling_revoke(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        ceiling_entry(env, &index)?.generator.revoke();
        Ok(())
    })
}

/// Stops the generator for good: a renewal found this host's clock `ahead_ms` ahead of the
/// database's (counted as a loss); every later call throws `CLOCK_SKEW`.
#[napi]
pub fn ceiling_revoke_clock_skew(env: &Env, index: Unknown<'_>, ahead_ms: f64) -> Result<()> {
    guard(env, || {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ms of skew
        let ahead_ms = ahead_ms.max(1.0) as u64;
        ceiling_entry(env, &index)?
            .generator
            .revoke_clock_skew(ahead_ms);
        Ok(())
    })
}

/// Stops the generator for good: the lease is closed (no loss).
#[napi]
pub fn ceiling_close(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        ceiling_entry(env, &index)?.generator.close();
        Ok(())
    })
}

/// A session lease's server session, recorded process-wide (see `shardid::lease::claim_backend`).
pub(crate) struct ClaimEntry(std::sync::Mutex<Option<BackendClaim>>);

/// Records the server session of a new session lease; throws `SESSION_POOLED` when another
/// session lease of this process holds a lock on it (a pooler is in front). Returns the claim
/// for `releaseBackend` (the claim is also forgotten when the JS side lets it be collected).
#[napi(ts_return_type = "object")]
pub fn claim_backend(env: &Env, identity: String) -> Result<External<ClaimEntry>> {
    guard(env, || {
        let claim = shardid::lease::claim_backend(&identity).map_err(|e| lease_error(env, e))?;
        Ok(own(ClaimEntry(std::sync::Mutex::new(Some(claim)))))
    })
}

/// Forgets a session lease's server session (the lease is closed).
#[napi]
pub fn release_backend(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        if let Some(entry) = owned::<ClaimEntry>(env, &index) {
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
pub fn ceiling_next_id(env: &Env, index: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        ceiling_entry(env, &index)?
            .generator
            .next_id()
            .map_err(|e| ceiling_error(env, e))
    })
}

/// One ID as if the clock read `now`.
#[napi]
pub fn ceiling_next_id_at(env: &Env, index: Unknown<'_>, now: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let now = u64_arg(env, &now, "now", Arg::Timestamp)?;
        ceiling_entry(env, &index)?
            .generator
            .next_id_at(now)
            .map_err(|e| ceiling_error(env, e))
    })
}

/// `n` IDs now.
#[napi]
pub fn ceiling_next_ids(env: &Env, index: Unknown<'_>, n: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        let mut ids = ids_for(env, &n)?;
        ceiling_entry(env, &index)?
            .generator
            .next_ids(&mut ids)
            .map_err(|e| ceiling_error(env, e))?;
        Ok(BigUint64Array::new(ids))
    })
}
