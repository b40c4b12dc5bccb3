//! The generator functions behind the JS `Generator` class.

use napi::bindgen_prelude::{BigUint64Array, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use shardid::{Generator, Layout, Options};

use crate::args::{Arg, generator_args, ids_for, u64_arg};
use crate::errors::{Class, OrThrow, guard, invalid_argument};
use crate::slots::{Slots, full};

/// A generator and what it was made from (equal configurations share one entry).
pub(crate) struct Entry {
    key: (Layout, u64, Options),
    generator: Generator<&'static shardid::State>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

static GENERATORS: Slots<Entry> = Slots::new();

#[inline]
fn generator(env: &Env, index: u32) -> Result<&'static Generator<&'static shardid::State>> {
    GENERATORS.get(index).map(|e| &e.generator).ok_or_else(|| {
        invalid_argument(env, Class::Type, "generator", "is not a shardid Generator")
    })
}

/// Makes (or finds) the generator for a layout, shard and options; returns its index.
#[napi]
pub fn generator_new(
    env: &Env,
    layout_index: u32,
    shard: Unknown<'_>,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
) -> Result<u32> {
    guard(env, || {
        let (layout, shard, options) = generator_args(
            env,
            layout_index,
            &shard,
            backwards_tolerance_ms,
            max_borrow_units,
        )?;
        let generator = Generator::shared(layout, shard, options).or_throw(env)?;
        GENERATORS
            .index_of(Entry {
                key: (layout, shard, options),
                generator,
            })
            .ok_or_else(|| {
                full(
                    env,
                    "generator",
                    "is one too many: a process holds 4,096 distinct generators",
                )
            })
    })
}

/// What every generator for this one's layout and shard in the process did: the core's
/// counters in its table's order (`STATS.generator` in core.generated.js names them).
#[napi]
pub fn generator_stats(env: &Env, generator_index: u32) -> Result<BigUint64Array> {
    guard(env, || {
        let g = generator(env, generator_index)?;
        Ok(BigUint64Array::new(g.stats().values().to_vec()))
    })
}

/// One ID now.
#[napi]
pub fn next_id(env: &Env, generator_index: u32) -> Result<u64> {
    guard(env, || {
        generator(env, generator_index)?.next_id().or_throw(env)
    })
}

/// One ID now, as a decimal string.
#[napi]
pub fn next_id_string(env: &Env, generator_index: u32) -> Result<String> {
    guard(env, || {
        let id = generator(env, generator_index)?.next_id().or_throw(env)?;
        Ok(id.to_string())
    })
}

/// One ID as if the clock read `now`.
#[napi]
pub fn next_id_at(env: &Env, generator_index: u32, now: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let g = generator(env, generator_index)?;
        g.next_id_at(u64_arg(env, &now, "now", Arg::Timestamp)?)
            .or_throw(env)
    })
}

/// `n` IDs now.
#[napi]
pub fn next_ids(env: &Env, generator_index: u32, n: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        let g = generator(env, generator_index)?;
        let mut ids = ids_for(env, &n)?;
        g.next_ids(&mut ids).or_throw(env)?;
        Ok(BigUint64Array::new(ids))
    })
}

/// Up to `n` IDs as if the clock read `now`, in one step.
#[napi]
pub fn next_ids_at(
    env: &Env,
    generator_index: u32,
    now: Unknown<'_>,
    n: Unknown<'_>,
) -> Result<BigUint64Array> {
    guard(env, || {
        let g = generator(env, generator_index)?;
        let now = u64_arg(env, &now, "now", Arg::Timestamp)?;
        let mut ids = ids_for(env, &n)?;
        let written = g.next_ids_at(now, &mut ids).or_throw(env)?;
        ids.truncate(written);
        Ok(BigUint64Array::new(ids))
    })
}
