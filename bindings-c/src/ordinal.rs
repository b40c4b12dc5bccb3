//! A shard from a Kubernetes `StatefulSet` pod's ordinal (`shardid::ordinal`): the hostname and
//! the range passed on as they came; every rule, and the default hostname, is the core's.

use std::ffi::{CStr, c_char};

use crate::layout::{layout_arg, shardid_layout};
use crate::status::{boundary, out, shardid_status};

/// The shard of this `StatefulSet` pod into `*out_shard`: the ordinal at the end of `hostname`
/// (`app-3` is shard 3; NULL: the `HOSTNAME` environment variable, then the host's name),
/// which must be a shard of `layout` and of `first..end` (end excluded), the range this
/// service was given.
///
/// `SHARDID_ERR_INVALID_ARGUMENT` for a hostname with no ordinal as Kubernetes writes it, or
/// with one outside `first..end`, or an empty range (`shardid_last_error_message()` names the
/// argument and the expected shape); `SHARDID_ERR_SHARD_OUT_OF_RANGE` for an ordinal or a range
/// past the layout's shards. `*out_shard` is written only on success.
///
/// # Safety
/// `layout` is null or a valid `shardid_layout`; `hostname` is null or a NUL-terminated
/// string; `out_shard` is null or valid for writing a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_shard_from_ordinal(
    layout: *const shardid_layout,
    first: u64,
    end: u64,
    hostname: *const c_char,
    out_shard: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_shard, layout) = unsafe { (out(out_shard)?, layout_arg(layout)?) };
        let hostname = if hostname.is_null() {
            None
        } else {
            // SAFETY: non-null, and the caller guarantees a NUL-terminated string.
            let bytes = unsafe { CStr::from_ptr(hostname) };
            Some(
                bytes
                    .to_str()
                    .map_err(|_| shardid::Error::InvalidArgument {
                        argument: shardid::ordinal::HOSTNAME_ARGUMENT,
                        reason: shardid::ordinal::NOT_UTF8,
                    })?,
            )
        };
        out_shard.write(shardid::ordinal::shard_of_pod(
            hostname,
            &layout,
            first..end,
        )?);
        Ok(())
    })
}
