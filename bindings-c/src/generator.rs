//! The opaque, thread-safe generator handle.

use shardid::{Generator, Options};

use crate::layout::{layout_arg, shardid_layout};
use crate::status::{arg, boundary, drop_box, id_array, out, shardid_status};

/// A generator's policy for clocks that move back and sequences that run out.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct shardid_options {
    /// How far the clock may read behind the last issued ID before the generator fails with
    /// `SHARDID_ERR_CLOCK_MOVED_BACKWARDS` (default 1000). Within it, the generator continues
    /// from the last issued time unit, which never repeats an ID.
    pub backwards_tolerance_ms: u64,
    /// How many time units ahead of the clock a generator may run when a unit's sequence is
    /// used up (default 0: wait for the next unit).
    pub max_borrow_units: u64,
}

impl From<&shardid_options> for Options {
    fn from(o: &shardid_options) -> Self {
        Options::new()
            .backwards_tolerance_ms(o.backwards_tolerance_ms)
            .max_borrow_units(o.max_borrow_units)
    }
}

/// The default options: 1000 ms backwards tolerance, no borrowing.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_options_default() -> shardid_options {
    let o = Options::new();
    shardid_options {
        backwards_tolerance_ms: o.backwards_tolerance_ms,
        max_borrow_units: o.max_borrow_units,
    }
}

/// Makes unique, strictly increasing IDs for one shard of a layout.
///
/// Thread-safe and lock-free: one generator may be shared by any number of threads without
/// locking. All generators for the same layout and shard in a process share one state (they
/// never issue the same ID), so making a second one for a shard is safe.
///
/// After `fork()`, parent and child hold copies of the state: a generator made before the
/// fork refuses in the child with `SHARDID_ERR_FORKED_GENERATOR` (its IDs would repeat the
/// parent's); make one for another shard there, or lease shards (`shardid_lease_new`).
pub struct shardid_generator {
    inner: Generator<&'static shardid::State>,
    /// The fork generation the generator was made in (`shardid::fork_generation`, moved on
    /// in every child by the `pthread_atfork` handler `shardid_fork::register` installs).
    made_in: u64,
}

impl shardid_generator {
    /// The generator, unless this is a forked child of the process that made it.
    fn here(&self) -> Result<&Generator<&'static shardid::State>, shardid_status> {
        if shardid::fork_generation() == self.made_in {
            Ok(&self.inner)
        } else {
            Err(shardid_status::SHARDID_ERR_FORKED_GENERATOR)
        }
    }
}

/// Makes a generator for `shard` of `layout` with the default options.
///
/// `SHARDID_ERR_SHARD_OUT_OF_RANGE` when the shard does not fit the layout. Free the
/// generator with `shardid_generator_free`.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_generator` is null or valid
/// for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_new(
    layout: *const shardid_layout,
    shard: u64,
    out_generator: *mut *mut shardid_generator,
) -> shardid_status {
    let defaults = shardid_options_default();
    // SAFETY: forwarded from this function's contract; `defaults` is a valid local.
    unsafe { shardid_generator_new_with_options(layout, shard, &raw const defaults, out_generator) }
}

/// Makes a generator for `shard` of `layout` with the given options.
///
/// # Safety
/// `layout` and `options` are null or point to valid values; `out_generator` is null or valid
/// for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_new_with_options(
    layout: *const shardid_layout,
    shard: u64,
    options: *const shardid_options,
    out_generator: *mut *mut shardid_generator,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees every pointer is null or valid.
        let (out_generator, layout, options) =
            unsafe { (out(out_generator)?, layout_arg(layout)?, arg(options)?) };
        // Registered before the generation is read: a fork after this call moves it on.
        shardid_fork::register();
        let inner = Generator::shared(layout, shard, options.into())?;
        let made_in = shardid::fork_generation();
        out_generator.write(Box::into_raw(Box::new(shardid_generator {
            inner,
            made_in,
        })));
        Ok(())
    })
}

/// Frees a generator made by `shardid_generator_new`. `NULL` is ignored.
///
/// # Safety
/// `generator` is null or a pointer returned by `shardid_generator_new*` that has not been
/// freed, and no other thread is using it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_free(generator: *mut shardid_generator) {
    // SAFETY: forwarded from this function's contract.
    let _ = boundary(|| unsafe { drop_box(generator) });
}

/// Issues one ID now, reading the process's monotonic clock (anchored to the wall clock).
/// When the time unit's sequence is used up it waits for the next unit (at most 1 ms; 10 ms
/// for Sonyflake).
///
/// `SHARDID_ERR_TIMESTAMP_PAST_EXPIRY` once the layout has run out;
/// `SHARDID_ERR_CLOCK_MOVED_BACKWARDS` only when `shardid_generator_next_at` was given a
/// time further ahead than the tolerance;
/// `SHARDID_ERR_FORKED_GENERATOR` in a forked child of the process that made the generator
/// (the same for every function that issues IDs: nothing is issued).
///
/// # Safety
/// `generator` is null or a live generator; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_next(
    generator: *const shardid_generator,
    out_id: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_id, generator) = unsafe { (out(out_id)?, arg(generator)?) };
        out_id.write(generator.here()?.next_id()?);
        Ok(())
    })
}

/// Issues one ID as if the clock read `now_ms` (Unix ms): deterministic, never waits.
///
/// `SHARDID_ERR_SEQUENCE_EXHAUSTED` when the unit is used up (nothing is issued; retry in the
/// next unit), `SHARDID_ERR_CLOCK_MOVED_BACKWARDS` when `now_ms` is further behind the last
/// issued ID than the tolerance, `SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH`,
/// `SHARDID_ERR_TIMESTAMP_PAST_EXPIRY`, `SHARDID_ERR_FORKED_GENERATOR`.
///
/// # Safety
/// `generator` is null or a live generator; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_next_at(
    generator: *const shardid_generator,
    now_ms: u64,
    out_id: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_id, generator) = unsafe { (out(out_id)?, arg(generator)?) };
        out_id.write(generator.here()?.next_id_at(now_ms)?);
        Ok(())
    })
}

/// Fills all `len` elements of `ids` with IDs now, one atomic step per time unit, waiting for
/// the next unit whenever one is used up. The bulk form of `shardid_generator_next`.
///
/// On an error (the layout ran out) the array's contents are unspecified; IDs that had been
/// written were issued and will not be issued again.
///
/// # Safety
/// `generator` is null or a live generator; `ids` is null or valid for writing `len`
/// `uint64_t`s (it may be null when `len` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_next_batch(
    generator: *const shardid_generator,
    ids: *mut u64,
    len: usize,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (generator, ids) = unsafe { (arg(generator)?, id_array(ids, len)?) };
        generator.here()?.next_ids(ids)?;
        Ok(())
    })
}

/// Issues as many IDs as the time unit holding `now_ms` has left (plus any units the options
/// allow borrowing), up to `len`, in one atomic step; writes them to the front of `ids` and
/// their count to `*out_written`. Deterministic, never waits.
///
/// Errors as `shardid_generator_next_at` when not even one ID can be issued.
///
/// # Safety
/// `generator` is null or a live generator; `ids` is null or valid for writing `len`
/// `uint64_t`s (it may be null when `len` is 0); `out_written` is null or valid for writing a
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_next_batch_at(
    generator: *const shardid_generator,
    now_ms: u64,
    ids: *mut u64,
    len: usize,
    out_written: *mut usize,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees every pointer is null or valid.
        let (out_written, generator, ids) =
            unsafe { (out(out_written)?, arg(generator)?, id_array(ids, len)?) };
        out_written.write(generator.here()?.next_ids_at(now_ms, ids)?);
        Ok(())
    })
}

/// The generator's layout.
///
/// # Safety
/// `generator` is null or a live generator; `out_layout` is null or valid for writing a
/// `shardid_layout`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_layout(
    generator: *const shardid_generator,
    out_layout: *mut shardid_layout,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_layout, generator) = unsafe { (out(out_layout)?, arg(generator)?) };
        out_layout.write(generator.inner.layout().into());
        Ok(())
    })
}

/// The generator's shard.
///
/// # Safety
/// `generator` is null or a live generator; `out_shard` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_shard(
    generator: *const shardid_generator,
    out_shard: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_shard, generator) = unsafe { (out(out_shard)?, arg(generator)?) };
        out_shard.write(generator.inner.shard());
        Ok(())
    })
}

/// What the generators of one (layout, shard) in this process did, counted since the process
/// started: the same figures, named alike, as `stats()` in every binding (the core's table,
/// `shardid::stats::GeneratorStats`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct shardid_stats {
    /// IDs handed out.
    pub ids: u64,
    /// Calls that waited for the next time unit, their own being used up.
    pub waits: u64,
    /// Time units begun ahead of the clock (`max_borrow_units`).
    pub borrowed_units: u64,
    /// Calls that found the clock behind the last ID (by more than the units borrowed) and
    /// went on within the tolerance.
    pub clock_backwards: u64,
    /// Calls refused with `SHARDID_ERR_CLOCK_MOVED_BACKWARDS`.
    pub clock_backwards_refused: u64,
    /// Times this process started its clock's ticker thread (bursts start it).
    pub ticker_starts: u64,
}

impl From<shardid::stats::GeneratorStats> for shardid_stats {
    fn from(s: shardid::stats::GeneratorStats) -> Self {
        // Field by field, by name: a row added to the core's table without a field here
        // fails `the_stats_struct_is_the_cores_table` below.
        Self {
            ids: s.ids,
            waits: s.waits,
            borrowed_units: s.borrowed_units,
            clock_backwards: s.clock_backwards,
            clock_backwards_refused: s.clock_backwards_refused,
            ticker_starts: s.ticker_starts,
        }
    }
}

/// What every generator for this one's layout and shard in the process did: IDs handed out,
/// calls that waited, units borrowed, clock steps back (see `shardid_stats`). `ids` is exact
/// once no call is in flight.
///
/// # Safety
/// `generator` is null or a live generator; `out_stats` is null or valid for writing a
/// `shardid_stats`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_generator_stats(
    generator: *const shardid_generator,
    out_stats: *mut shardid_stats,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_stats, generator) = unsafe { (out(out_stats)?, arg(generator)?) };
        out_stats.write(generator.inner.stats().into());
        Ok(())
    })
}

/// The process's clock as the generators read it: Unix milliseconds from a monotonic clock
/// anchored to the wall clock (it never moves back). Useful for `shardid_generator_next_at`.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_now_ms() -> u64 {
    std::panic::catch_unwind(shardid::now_ms).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use shardid::stats::GeneratorStats;

    use super::shardid_stats;

    /// The C struct has the core table's rows as fields, in order: none missing, none extra.
    #[test]
    fn the_stats_struct_is_the_cores_table() {
        const N: usize = GeneratorStats::LEN;
        assert_eq!(size_of::<shardid_stats>(), N * size_of::<u64>());
        let mut values = [0u64; N];
        for (i, v) in values.iter_mut().enumerate() {
            *v = 1000 + i as u64;
        }
        let c: shardid_stats = GeneratorStats::from_values(values).into();
        // SAFETY: `shardid_stats` is `repr(C)` with N `u64` fields (its size is asserted
        // above), so it has the layout of `[u64; N]`.
        let fields: [u64; N] = unsafe { core::mem::transmute(c) };
        assert_eq!(fields, values);
        let header = include_str!("../../include/shardid.h");
        let body = &header[header.find("typedef struct shardid_stats").unwrap()..];
        let body = &body[..body.find("} shardid_stats;").unwrap()];
        let named: Vec<_> = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("uint64_t "))
            .map(|l| l.trim_end_matches(';'))
            .collect();
        let table: Vec<_> = GeneratorStats::METRICS.iter().map(|m| m.name).collect();
        assert_eq!(named, table);
    }
}
