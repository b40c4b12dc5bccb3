//! The UUIDv7 bridge ([`shardid::uuid`]): a UUID as its text (a string) or its 16 bytes (a
//! `Uint8Array`; a `Buffer` is one). Every rule is the core's.

use napi::bindgen_prelude::{Buffer, JsValue, Unknown};
use napi::{Env, Result, ValueType, sys};
use napi_derive::napi;

use crate::args::{Arg, text, type_of, typed_array, u64_arg};
use crate::errors::{Class, OrThrow, guard, invalid_argument};
use crate::layout::layout;

/// The 16 bytes of a UUID argument: a string the core parses, or a `Uint8Array` of 16 bytes.
fn uuid_arg(env: &Env, value: &Unknown<'_>) -> Result<[u8; 16]> {
    if type_of(env, value.raw()) == ValueType::String {
        return shardid::uuid::parse(&text(env, value, "uuid")?).or_throw(env);
    }
    let Some((data, length)) = typed_array(env, value, sys::TypedarrayType::uint8_array) else {
        let reason = "must be a string or a Uint8Array of 16 bytes";
        return Err(invalid_argument(env, Class::Type, "uuid", reason));
    };
    if length != 16 || data.is_null() {
        let reason = "must be 16 bytes";
        return Err(invalid_argument(env, Class::Range, "uuid", reason));
    }
    let mut out = [0u8; 16];
    // SAFETY: `data` holds 16 bytes of the caller's array, alive for this synchronous call,
    // during which no JavaScript runs.
    out.copy_from_slice(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), 16) });
    Ok(out)
}

/// The UUIDv7 of an ID, as its text (lowercase, hyphenated).
#[napi]
pub fn to_uuid(env: &Env, layout_index: u32, id: Unknown<'_>) -> Result<String> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let bytes = shardid::uuid::to_uuid(&l, u64_arg(env, &id, "id", Arg::Id)?).or_throw(env)?;
        Ok(shardid::uuid::format(&bytes).to_string())
    })
}

/// The UUIDv7 of an ID, as its 16 bytes.
#[napi]
pub fn to_uuid_bytes(env: &Env, layout_index: u32, id: Unknown<'_>) -> Result<Buffer> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let bytes = shardid::uuid::to_uuid(&l, u64_arg(env, &id, "id", Arg::Id)?).or_throw(env)?;
        Ok(Buffer::from(bytes.to_vec()))
    })
}

/// The ID a bridge UUID holds; with no layout, the one its marker names.
#[napi]
pub fn from_uuid(env: &Env, layout_index: Option<u32>, uuid: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let l = layout_index.map(|i| layout(env, i)).transpose()?;
        shardid::uuid::from_uuid(l.as_ref(), &uuid_arg(env, &uuid)?).or_throw(env)
    })
}
