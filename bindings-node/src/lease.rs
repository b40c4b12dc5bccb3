//! The functions behind the JS `lease()` and `LeasedGenerator`: a shard leased from a
//! directory of lock files (the core's `lease` module), so N copies of one service (cluster
//! workers, PM2, replicas on one host) never share a shard.

use napi::bindgen_prelude::{BigUint64Array, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use shardid::Options;
use shardid::lease::{LeaseError, LeasedGenerator};

use crate::args::{Arg, u64_arg};
use crate::errors::{Class, core_error, throw};
use crate::layout::layout;
use crate::slots::Slots;

/// A lease in the table: leases are never equal, so each call adds one.
pub(crate) struct Entry(LeasedGenerator);

impl PartialEq for Entry {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}

static LEASES: Slots<Entry> = Slots::new();

fn lease_error(env: &Env, e: LeaseError) -> napi::Error {
    match e {
        LeaseError::Id(e) => core_error(env, e),
        e @ LeaseError::NoFreeShard { .. } => {
            throw(env, Class::Plain, "NO_FREE_SHARD", &e.to_string())
        }
        e => throw(env, Class::Plain, "LEASE_FILE", &e.to_string()),
    }
}

fn leased(env: &Env, index: u32) -> Result<&'static LeasedGenerator> {
    LEASES.get(index).map(|e| &e.0).ok_or_else(|| {
        throw(
            env,
            Class::Type,
            "INVALID_ARGUMENT",
            "not a shardid LeasedGenerator",
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
    let layout = layout(env, layout_index)?;
    let start = u64_arg(env, &start, "shards[0]", Arg::Shard)?;
    let end = u64_arg(env, &end, "shards[1]", Arg::Other)?;
    let mut options = Options::new();
    if let Some(ms) = backwards_tolerance_ms {
        options =
            options.backwards_tolerance_ms(u64_arg(env, &ms, "backwardsToleranceMs", Arg::Other)?);
    }
    if let Some(units) = max_borrow_units {
        options = options.max_borrow_units(u64_arg(env, &units, "maxBorrowUnits", Arg::Other)?);
    }
    let generator = LeasedGenerator::acquire(directory, start..end, layout, options)
        .map_err(|e| lease_error(env, e))?;
    LEASES.index_of(Entry(generator)).ok_or_else(|| {
        throw(
            env,
            Class::Range,
            "INVALID_ARGUMENT",
            "too many leases in one process",
        )
    })
}

/// The shard the lease holds.
#[napi]
pub fn lease_shard(env: &Env, index: u32) -> Result<u32> {
    let shard = leased(env, index)?
        .shard()
        .map_err(|e| lease_error(env, e))?;
    // Layout shard fields the JS side accepts fit a u32 (checked when the layout was made).
    Ok(u32::try_from(shard).unwrap_or(u32::MAX))
}

/// One ID now.
#[napi]
pub fn lease_next_id(env: &Env, index: u32) -> Result<u64> {
    leased(env, index)?
        .next_id()
        .map_err(|e| lease_error(env, e))
}

/// One ID now, as a decimal string.
#[napi]
pub fn lease_next_id_string(env: &Env, index: u32) -> Result<String> {
    Ok(lease_next_id(env, index)?.to_string())
}

/// One ID as if the clock read `now`.
#[napi]
pub fn lease_next_id_at(env: &Env, index: u32, now: Unknown<'_>) -> Result<u64> {
    let now = u64_arg(env, &now, "now", Arg::Timestamp)?;
    leased(env, index)?
        .next_id_at(now)
        .map_err(|e| lease_error(env, e))
}

/// `n` IDs now.
#[napi]
pub fn lease_next_ids(env: &Env, index: u32, n: Unknown<'_>) -> Result<BigUint64Array> {
    let n = u64_arg(env, &n, "n", Arg::Other)?;
    let n = usize::try_from(n)
        .map_err(|_| throw(env, Class::Range, "INVALID_ARGUMENT", "n is too large"))?;
    let mut ids = vec![0u64; n];
    leased(env, index)?
        .next_ids(&mut ids)
        .map_err(|e| lease_error(env, e))?;
    Ok(BigUint64Array::new(ids))
}
