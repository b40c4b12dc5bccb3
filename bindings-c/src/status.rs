//! Status codes, and the one panic boundary every exported function runs inside.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// What a `shardid_*` function reports. `SHARDID_OK` is 0; every other value names one kind
/// of failure, one-to-one with the error kinds of the core (and the Python exceptions and JS
/// `err.code`s of the other bindings).
///
/// The values are stable: new kinds get new numbers, old numbers are never reused.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum shardid_status {
    /// Success: the output parameters were written.
    SHARDID_OK = 0,
    /// The layout's parameters do not describe a usable ID space.
    SHARDID_ERR_INVALID_LAYOUT = 1,
    /// A shard number does not fit the layout's shard field.
    SHARDID_ERR_SHARD_OUT_OF_RANGE = 2,
    /// A sequence number does not fit the layout's sequence field.
    SHARDID_ERR_SEQUENCE_OUT_OF_RANGE = 3,
    /// A count of logical shards that is zero or larger than the shard field holds.
    SHARDID_ERR_INVALID_SHARD_COUNT = 4,
    /// The value is not an ID this layout can produce.
    SHARDID_ERR_INVALID_ID = 5,
    /// Scattering would produce a value outside the layout's ID range.
    SHARDID_ERR_SCATTER_OVERFLOW = 6,
    /// A timestamp earlier than the layout's epoch.
    SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH = 7,
    /// A timestamp later than the last one the layout can represent.
    SHARDID_ERR_TIMESTAMP_PAST_EXPIRY = 8,
    /// The clock is further behind the last issued ID than the generator tolerates.
    SHARDID_ERR_CLOCK_MOVED_BACKWARDS = 9,
    /// Every sequence number of the time unit is used; nothing was issued. Retry in the next
    /// time unit.
    SHARDID_ERR_SEQUENCE_EXHAUSTED = 10,
    /// A required pointer argument was `NULL`.
    SHARDID_ERR_NULL_ARGUMENT = 100,
    /// The library hit a bug (a Rust panic), caught before it crossed into C. Nothing was
    /// written; please report it.
    SHARDID_ERR_PANIC = 101,
    /// Leases: every shard of the range is held by a live process.
    SHARDID_ERR_NO_FREE_SHARD = 102,
    /// Leases: a lock file could not be read or written, or records another layout.
    SHARDID_ERR_LEASE_FILE = 103,
}

use shardid_status::{
    SHARDID_ERR_CLOCK_MOVED_BACKWARDS, SHARDID_ERR_INVALID_ID, SHARDID_ERR_INVALID_LAYOUT,
    SHARDID_ERR_INVALID_SHARD_COUNT, SHARDID_ERR_LEASE_FILE, SHARDID_ERR_NO_FREE_SHARD,
    SHARDID_ERR_NULL_ARGUMENT, SHARDID_ERR_PANIC, SHARDID_ERR_SCATTER_OVERFLOW,
    SHARDID_ERR_SEQUENCE_EXHAUSTED, SHARDID_ERR_SEQUENCE_OUT_OF_RANGE,
    SHARDID_ERR_SHARD_OUT_OF_RANGE, SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH,
    SHARDID_ERR_TIMESTAMP_PAST_EXPIRY, SHARDID_OK,
};

impl shardid_status {
    /// Every status, for the lookup in [`shardid_status_str`] and the tests.
    pub(crate) const ALL: [shardid_status; 15] = [
        SHARDID_OK,
        SHARDID_ERR_INVALID_LAYOUT,
        SHARDID_ERR_SHARD_OUT_OF_RANGE,
        SHARDID_ERR_SEQUENCE_OUT_OF_RANGE,
        SHARDID_ERR_INVALID_SHARD_COUNT,
        SHARDID_ERR_INVALID_ID,
        SHARDID_ERR_SCATTER_OVERFLOW,
        SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH,
        SHARDID_ERR_TIMESTAMP_PAST_EXPIRY,
        SHARDID_ERR_CLOCK_MOVED_BACKWARDS,
        SHARDID_ERR_SEQUENCE_EXHAUSTED,
        SHARDID_ERR_NULL_ARGUMENT,
        SHARDID_ERR_PANIC,
        SHARDID_ERR_NO_FREE_SHARD,
        SHARDID_ERR_LEASE_FILE,
    ];

    /// The status's name and meaning, NUL-terminated for C.
    const fn description(self) -> &'static std::ffi::CStr {
        match self {
            SHARDID_OK => c"SHARDID_OK: success",
            SHARDID_ERR_INVALID_LAYOUT => {
                c"SHARDID_ERR_INVALID_LAYOUT: the layout does not describe a usable ID space"
            }
            SHARDID_ERR_SHARD_OUT_OF_RANGE => {
                c"SHARDID_ERR_SHARD_OUT_OF_RANGE: the shard does not fit the layout's shard field"
            }
            SHARDID_ERR_SEQUENCE_OUT_OF_RANGE => {
                c"SHARDID_ERR_SEQUENCE_OUT_OF_RANGE: the sequence does not fit the layout's sequence field"
            }
            SHARDID_ERR_INVALID_SHARD_COUNT => {
                c"SHARDID_ERR_INVALID_SHARD_COUNT: the logical shard count is 0 or larger than the shard field holds"
            }
            SHARDID_ERR_INVALID_ID => {
                c"SHARDID_ERR_INVALID_ID: the value is not an ID this layout can produce"
            }
            SHARDID_ERR_SCATTER_OVERFLOW => {
                c"SHARDID_ERR_SCATTER_OVERFLOW: scattering the ID would leave the layout's ID range"
            }
            SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH => {
                c"SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH: the timestamp is before the layout's epoch"
            }
            SHARDID_ERR_TIMESTAMP_PAST_EXPIRY => {
                c"SHARDID_ERR_TIMESTAMP_PAST_EXPIRY: the timestamp is past the last one the layout can represent"
            }
            SHARDID_ERR_CLOCK_MOVED_BACKWARDS => {
                c"SHARDID_ERR_CLOCK_MOVED_BACKWARDS: the clock is further behind the last issued ID than the generator tolerates"
            }
            SHARDID_ERR_SEQUENCE_EXHAUSTED => {
                c"SHARDID_ERR_SEQUENCE_EXHAUSTED: the time unit's sequence is used up; retry in the next unit"
            }
            SHARDID_ERR_NULL_ARGUMENT => {
                c"SHARDID_ERR_NULL_ARGUMENT: a required pointer argument was NULL"
            }
            SHARDID_ERR_PANIC => {
                c"SHARDID_ERR_PANIC: internal error in libshardid (a caught Rust panic); please report it"
            }
            SHARDID_ERR_NO_FREE_SHARD => {
                c"SHARDID_ERR_NO_FREE_SHARD: every shard of the lease's range is held by a live process"
            }
            SHARDID_ERR_LEASE_FILE => {
                c"SHARDID_ERR_LEASE_FILE: a lease lock file could not be read or written, or records another layout"
            }
        }
    }
}

impl From<shardid::Error> for shardid_status {
    fn from(e: shardid::Error) -> Self {
        use shardid::Error;
        match e {
            Error::InvalidLayout { .. } => SHARDID_ERR_INVALID_LAYOUT,
            Error::ShardOutOfRange { .. } => SHARDID_ERR_SHARD_OUT_OF_RANGE,
            Error::SequenceOutOfRange { .. } => SHARDID_ERR_SEQUENCE_OUT_OF_RANGE,
            Error::InvalidShardCount { .. } => SHARDID_ERR_INVALID_SHARD_COUNT,
            Error::InvalidId { .. } => SHARDID_ERR_INVALID_ID,
            Error::ScatterOverflow { .. } => SHARDID_ERR_SCATTER_OVERFLOW,
            Error::TimestampBeforeEpoch { .. } => SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH,
            Error::TimestampPastExpiry { .. } => SHARDID_ERR_TIMESTAMP_PAST_EXPIRY,
            Error::ClockMovedBackwards { .. } => SHARDID_ERR_CLOCK_MOVED_BACKWARDS,
            Error::SequenceExhausted { .. } => SHARDID_ERR_SEQUENCE_EXHAUSTED,
            // The core's enum is non_exhaustive; `every_core_error_has_its_own_status` keeps
            // this arm unreachable by failing when a kind is added without a status.
            _ => SHARDID_ERR_PANIC,
        }
    }
}

impl From<shardid::lease::LeaseError> for shardid_status {
    fn from(e: shardid::lease::LeaseError) -> Self {
        use shardid::lease::LeaseError;
        match e {
            LeaseError::Id(e) => e.into(),
            LeaseError::NoFreeShard { .. } => SHARDID_ERR_NO_FREE_SHARD,
            _ => SHARDID_ERR_LEASE_FILE,
        }
    }
}

/// The name and a one-line explanation of a status, e.g.
/// `"SHARDID_ERR_INVALID_ID: the value is not an ID this layout can produce"`.
///
/// Takes the status as a plain integer so that any value is safe to pass; unknown values give
/// `"SHARDID_ERR_UNKNOWN: ..."`. The string is static: never free it.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_status_str(status: u32) -> *const std::ffi::c_char {
    shardid_status::ALL
        .iter()
        .find(|s| **s as u32 == status)
        .map_or(
            c"SHARDID_ERR_UNKNOWN: not a status this version of libshardid returns",
            |s| s.description(),
        )
        .as_ptr()
}

/// Runs an exported function's body: a panic becomes `SHARDID_ERR_PANIC` instead of
/// unwinding into C (undefined behaviour), and `Err(status)` becomes that status.
pub(crate) fn boundary(body: impl FnOnce() -> Result<(), shardid_status>) -> shardid_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SHARDID_OK,
        Ok(Err(status)) => status,
        Err(_) => SHARDID_ERR_PANIC,
    }
}

/// Borrows a `const T *` argument.
///
/// # Safety
/// `ptr` is null or points to a valid, aligned `T` that stays unmodified for `'a`.
pub(crate) unsafe fn arg<'a, T>(ptr: *const T) -> Result<&'a T, shardid_status> {
    // SAFETY: the caller guarantees a non-null `ptr` is valid for reads for 'a.
    unsafe { ptr.as_ref() }.ok_or(SHARDID_ERR_NULL_ARGUMENT)
}

/// Borrows an output parameter, which may point to uninitialised memory.
///
/// Callers take every output before doing any work, so a null output is reported before an
/// ID is issued (and lost).
///
/// # Safety
/// `ptr` is null or points to memory valid for writing a `T`, aligned, and not accessed
/// through any other pointer for `'a`.
pub(crate) unsafe fn out<'a, T>(
    ptr: *mut T,
) -> Result<&'a mut std::mem::MaybeUninit<T>, shardid_status> {
    // SAFETY: the caller guarantees a non-null `ptr` is valid for writes of a `T` for 'a;
    // `MaybeUninit` makes no claim about what is there now.
    unsafe { ptr.cast::<std::mem::MaybeUninit<T>>().as_mut() }.ok_or(SHARDID_ERR_NULL_ARGUMENT)
}
