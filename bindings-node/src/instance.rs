//! The typed arrays one loaded copy of the addon writes its answers into: the decode buffer
//! (`layout.rs`), the segments' fetch signal (`segment.rs`) and the serials' parse buffer
//! (`serial.rs`).
//!
//! Each is kept per napi env, that is per module instance: every `require` of the `.node` file
//! (a second copy of the package, a cleared `require.cache`, a Jest registry) and every worker
//! gets its own env. A buffer per thread was taken over by the second copy loaded in that
//! thread: the first copy's `decode` then read its own, untouched array (shard 0, sequence 0),
//! and once the second copy's array was collected the addon wrote into freed memory (issue 60).
//!
//! The env holds a strong reference to each array it registered, so the memory the addon
//! writes stays alive as long as the env; the first array registered in an env is the one kept,
//! and every later registration (a second copy of the JavaScript over the same addon instance,
//! as a bundle that duplicates `api.js` makes) gets that array back to read from.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, Result};

/// Which buffer.
#[derive(Clone, Copy)]
pub(crate) enum Buffer {
    /// `decode`'s timestamp, shard and sequence (3).
    Decode = 0,
    /// A segment or serials fetch that became due (3).
    Signal = 1,
    /// A parsed serial (8).
    Parsed = 2,
}

/// One registered array: a strong reference and the memory it owns.
#[derive(Clone, Copy)]
struct Registered {
    reference: napi::sys::napi_ref,
    data: *mut f64,
    len: usize,
}

/// What an env holds (its napi instance data).
#[derive(Default)]
struct Instance {
    buffers: [Option<Registered>; 3],
}

/// This env's instance data, made at the first call.
fn instance(env: &Env) -> Result<&'static mut Instance> {
    if let Some(found) = env.get_instance_data::<Instance>()? {
        return Ok(found);
    }
    // The references die with the env (napi frees an env's references when it is torn down),
    // so nothing is left to do when the data is finalized.
    env.set_instance_data(Instance::default(), (), |_| {})?;
    env.get_instance_data::<Instance>()?
        .ok_or_else(|| napi::Error::from_reason("napi kept no instance data"))
}

/// Registers `value` (a `Float64Array` of at least 3) as this env's `which` buffer unless one
/// is registered already; returns the registered array, which the caller reads from.
pub(crate) fn register<'a>(
    env: &'a Env,
    which: Buffer,
    value: &Unknown<'_>,
) -> Result<Unknown<'a>> {
    let slot = &mut instance(env)?.buffers[which as usize];
    let registered = if let Some(registered) = *slot {
        registered
    } else {
        let memory = crate::layout::float64_array(env, value)?;
        let mut reference = std::ptr::null_mut();
        // SAFETY: `value` is a live value of this env; a count of 1 makes the reference
        // strong, so the array (and the memory behind `memory`) outlives every call of
        // this env.
        let status = unsafe {
            napi::sys::napi_create_reference(env.raw(), value.raw(), 1, &raw mut reference)
        };
        if status != napi::sys::Status::napi_ok {
            return Err(napi::Error::from_reason("napi could not keep the buffer"));
        }
        let registered = Registered {
            reference,
            data: memory.as_mut_ptr(),
            len: memory.len(),
        };
        *slot = Some(registered);
        registered
    };
    let mut array = std::ptr::null_mut();
    // SAFETY: `registered.reference` is a strong reference of this env, never deleted.
    let status = unsafe {
        napi::sys::napi_get_reference_value(env.raw(), registered.reference, &raw mut array)
    };
    if status != napi::sys::Status::napi_ok || array.is_null() {
        return Err(napi::Error::from_reason("napi lost the buffer"));
    }
    // SAFETY: `array` is a live value of this env (held by the reference).
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), array) })
}

/// This env's `which` buffer: its memory and length, or `None` before it is registered.
///
/// The memory belongs to a `Float64Array` this env holds strongly (`register`), and V8 never
/// moves an `ArrayBuffer`'s backing store: it stays valid for every call of this env. Only the
/// JavaScript of this module instance reads it, after the call that wrote it returned.
pub(crate) fn buffer(env: &Env, which: Buffer) -> Option<(*mut f64, usize)> {
    let registered = env.get_instance_data::<Instance>().ok().flatten()?.buffers[which as usize]?;
    Some((registered.data, registered.len))
}
