//! The opaque leased generator: a shard taken from a directory of lock files, so copies of
//! one program on a host never share a shard (the core's `lease` module).

use std::ffi::{CStr, c_char};
use std::path::PathBuf;

use shardid::lease::LeasedGenerator;

use crate::generator::shardid_options;
use crate::layout::{layout_arg, shardid_layout};
use crate::status::{arg, boundary, drop_box, id_array, out, shardid_status};

/// A generator on a shard leased from lock files `shard-<n>.lock` in a directory, held with
/// `flock` until the generator is freed or the process dies (however it dies).
///
/// Each lock file records a ceiling above every ID its holder issued; the next holder starts
/// above it. Thread-safe. After `fork()`, a leased generator used in the child takes a shard
/// of its own there (libshardid's `pthread_atfork` handler tells it).
pub struct shardid_lease {
    inner: LeasedGenerator,
}

/// Leases the first free shard of `first..end` (end excluded) from lock files in
/// `directory` (created if missing) and makes a generator for it; `options` may be NULL for
/// the defaults.
///
/// `SHARDID_ERR_NO_FREE_SHARD` when every shard is held by a live process,
/// `SHARDID_ERR_LEASE_FILE` when a lock file cannot be used (or records another layout),
/// `SHARDID_ERR_SHARD_OUT_OF_RANGE` when the range does not fit the layout,
/// and `SHARDID_ERR_LEASE_FILE` too when `directory` is not UTF-8. Free the lease with
/// `shardid_lease_free`.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `directory` is null or a
/// NUL-terminated string; `options` is null or valid; `out_lease` is null or valid for
/// writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_lease_new(
    layout: *const shardid_layout,
    directory: *const c_char,
    first: u64,
    end: u64,
    options: *const shardid_options,
    out_lease: *mut *mut shardid_lease,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees every pointer is null or valid.
        let (out_lease, layout, directory) =
            unsafe { (out(out_lease)?, layout_arg(layout)?, arg(directory)?) };
        let options = if options.is_null() {
            shardid::Options::new()
        } else {
            // SAFETY: non-null, and the caller guarantees it is valid.
            unsafe { arg(options)? }.into()
        };
        // SAFETY: the caller guarantees a NUL-terminated string.
        let directory = unsafe { CStr::from_ptr(directory) };
        let directory = path(directory)?;
        shardid_fork::register();
        let inner = LeasedGenerator::acquire(directory, first..end, layout, options)?;
        out_lease.write(Box::into_raw(Box::new(shardid_lease { inner })));
        Ok(())
    })
}

/// Frees a lease (and releases its shard). `NULL` is ignored.
///
/// # Safety
/// `lease` is null or a pointer returned by `shardid_lease_new` that has not been freed, and
/// no other thread is using it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_lease_free(lease: *mut shardid_lease) {
    // SAFETY: forwarded from this function's contract.
    let _ = boundary(|| unsafe { drop_box(lease) });
}

/// The shard the lease holds in this process.
///
/// # Safety
/// `lease` is null or a live lease; `out_shard` is null or valid for writing a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_lease_shard(
    lease: *const shardid_lease,
    out_shard: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_shard, lease) = unsafe { (out(out_shard)?, arg(lease)?) };
        out_shard.write(lease.inner.shard()?);
        Ok(())
    })
}

/// Issues one ID now, as `shardid_generator_next`.
///
/// # Safety
/// `lease` is null or a live lease; `out_id` is null or valid for writing a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_lease_next(
    lease: *const shardid_lease,
    out_id: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_id, lease) = unsafe { (out(out_id)?, arg(lease)?) };
        out_id.write(lease.inner.next_id()?);
        Ok(())
    })
}

/// Issues one ID as if the clock read `now_ms`, as `shardid_generator_next_at`.
///
/// # Safety
/// `lease` is null or a live lease; `out_id` is null or valid for writing a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_lease_next_at(
    lease: *const shardid_lease,
    now_ms: u64,
    out_id: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_id, lease) = unsafe { (out(out_id)?, arg(lease)?) };
        out_id.write(lease.inner.next_id_at(now_ms)?);
        Ok(())
    })
}

/// Fills `ids[0..len]` with IDs now, as `shardid_generator_next_batch`.
///
/// # Safety
/// `lease` is null or a live lease; `ids` is null or valid for writing `len` `uint64_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_lease_next_batch(
    lease: *const shardid_lease,
    ids: *mut u64,
    len: usize,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (lease, ids) = unsafe { (arg(lease)?, id_array(ids, len)?) };
        lease.inner.next_ids(ids)?;
        Ok(())
    })
}

/// A path from C: any bytes on Unix (paths need not be UTF-8 there), UTF-8 elsewhere.
#[cfg_attr(unix, allow(clippy::unnecessary_wraps))] // fallible off Unix
fn path(text: &CStr) -> Result<PathBuf, shardid_status> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(text.to_bytes())))
    }
    #[cfg(not(unix))]
    {
        text.to_str()
            .map(PathBuf::from)
            .map_err(|_| shardid_status::SHARDID_ERR_INVALID_ARGUMENT)
    }
}
