//! The public-ID functions behind the JS `PublicIds` class (the core's `shardid::PublicIds`).

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, Result, ValueType, sys};
use napi_derive::napi;
use shardid::public::{Format, MAX_KEYS, MAX_TEXT_LEN};
use shardid::{Encoding, PublicIds};

use crate::args::{Arg, type_of, typed_array, u64_arg};
use crate::errors::{Class, OrThrow, guard, invalid_argument};
use crate::layout::layout;
use crate::slots::{Slots, full};

static PUBLIC_IDS: Slots<PublicIds> = Slots::new();

fn public_ids(env: &Env, index: u32) -> Result<&'static PublicIds> {
    PUBLIC_IDS.get(index).ok_or_else(|| {
        invalid_argument(env, Class::Type, "publicIds", "is not a shardid PublicIds")
    })
}

fn register(env: &Env, ids: PublicIds) -> Result<u32> {
    PUBLIC_IDS.index_of(ids).ok_or_else(|| {
        full(
            env,
            "PublicIds",
            "is one too many: a process holds 4,096 distinct ones",
        )
    })
}

/// The bytes of a `Uint8Array` (a `Buffer` is one) argument.
fn bytes_arg<'a>(env: &Env, value: &Unknown<'_>, name: &str) -> Result<&'a [u8]> {
    let Some((data, length)) = typed_array(env, value, sys::TypedarrayType::uint8_array) else {
        let reason = "must be a Uint8Array (16 random bytes), not a string or another type";
        return Err(invalid_argument(env, Class::Type, name, reason));
    };
    if length == 0 || data.is_null() {
        return Ok(&[]);
    }
    // SAFETY: `data` holds `length` bytes of the caller's array, alive for this synchronous
    // call, during which no JavaScript runs.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) })
}

/// A string argument, as UTF-8.
fn string_arg(env: &Env, value: &Unknown<'_>, name: &str) -> Result<String> {
    if type_of(env, value.raw()) != ValueType::String {
        return Err(invalid_argument(env, Class::Type, name, "must be a string"));
    }
    let mut len = 0usize;
    // SAFETY: `value` is a live string of this env; a null buffer asks for the length.
    unsafe {
        sys::napi_get_value_string_utf8(
            env.raw(),
            value.raw(),
            std::ptr::null_mut(),
            0,
            &raw mut len,
        );
    }
    let mut buf = vec![0u8; len + 1];
    // SAFETY: `buf` holds `len + 1` bytes.
    unsafe {
        sys::napi_get_value_string_utf8(
            env.raw(),
            value.raw(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            &raw mut len,
        );
    }
    buf.truncate(len);
    String::from_utf8(buf).map_err(|_| invalid_argument(env, Class::Type, name, "must be a string"))
}

fn encoding_arg(env: &Env, value: &Unknown<'_>) -> Result<Encoding> {
    Encoding::from_name(&string_arg(env, value, "encoding")?).or_throw(env)
}

fn version_arg(env: &Env, value: &Unknown<'_>, name: &str) -> Result<u32> {
    // Above u32 is still "must be 0 to 31": the core says so.
    Ok(u32::try_from(u64_arg(env, value, name, Arg::Other)?).unwrap_or(u32::MAX))
}

/// The longest text read from a JS string: one more than any public ID, so that a longer
/// string is still too long.
const TEXT_BUF: usize = MAX_TEXT_LEN + 2;

/// A text argument as the bytes the core reads, without allocating: its UTF-16 units, ASCII
/// as itself and anything else as 0xFF (no alphabet or prefix holds it), cut after one more
/// unit than any public ID has. The core then finds what it would in the whole UTF-8 text:
/// the same prefix, the same first symbol outside the alphabet (every unit before it is
/// ASCII, so its position is the same), and a text too long is too long in both.
fn text_arg<'a>(env: &Env, value: &Unknown<'_>, buf: &'a mut [u8; TEXT_BUF]) -> Result<&'a [u8]> {
    let mut units = [0u16; TEXT_BUF + 1];
    let mut len = 0usize;
    // SAFETY: `value` is a live value of this env; `units` holds TEXT_BUF + 1 units (the last
    // for the terminating NUL N-API writes). For a value that is no string the call only
    // reports `napi_string_expected` (one N-API call, not a `typeof` first).
    let status = unsafe {
        sys::napi_get_value_string_utf16(
            env.raw(),
            value.raw(),
            units.as_mut_ptr(),
            units.len(),
            &raw mut len,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(invalid_argument(
            env,
            Class::Type,
            "text",
            "must be a string",
        ));
    }
    let len = len.min(TEXT_BUF);
    for (byte, &unit) in buf.iter_mut().zip(&units[..len]) {
        *byte = u8::try_from(unit).ok().filter(u8::is_ascii).unwrap_or(0xff);
    }
    Ok(&buf[..len])
}

/// Makes (or finds) public IDs with `key` (a `Uint8Array` of 16 bytes) as version
/// `keyVersion`, `prefix`, `encoding`, for IDs of the layout `layoutIndex`; their index.
#[napi(
    ts_args_type = "key: Uint8Array, keyVersion: number | bigint, prefix: string, encoding: string, layoutIndex: number"
)]
pub fn public_new(
    env: &Env,
    key: Unknown<'_>,
    key_version: Unknown<'_>,
    prefix: Unknown<'_>,
    encoding: Unknown<'_>,
    layout_index: u32,
) -> Result<u32> {
    guard(env, || {
        let key = bytes_arg(env, &key, "key")?;
        let version = version_arg(env, &key_version, "keyVersion")?;
        let prefix = string_arg(env, &prefix, "prefix")?;
        let encoding = encoding_arg(env, &encoding)?;
        let layout = layout(env, layout_index)?;
        let ids = PublicIds::new(key, version, &prefix, encoding)
            .or_throw(env)?
            .with_layout(layout);
        register(env, ids)
    })
}

/// The public IDs at `index` that also decode texts of `key` as version `keyVersion`.
#[napi(ts_args_type = "index: number, keyVersion: number | bigint, key: Uint8Array")]
pub fn public_with_old_key(
    env: &Env,
    index: u32,
    key_version: Unknown<'_>,
    key: Unknown<'_>,
) -> Result<u32> {
    guard(env, || {
        let ids = public_ids(env, index)?.clone();
        let version = version_arg(env, &key_version, "oldKeys")?;
        let key = bytes_arg(env, &key, "oldKeys")?;
        register(env, ids.with_old_key(version, key).or_throw(env)?)
    })
}

/// Public IDs from keys written as text (`PublicIds::from_keys`); their index.
#[napi(ts_args_type = "keys: string, prefix: string, encoding: string, layoutIndex: number")]
pub fn public_from_keys(
    env: &Env,
    keys: Unknown<'_>,
    prefix: Unknown<'_>,
    encoding: Unknown<'_>,
    layout_index: u32,
) -> Result<u32> {
    guard(env, || {
        let keys = string_arg(env, &keys, "keys")?;
        let prefix = string_arg(env, &prefix, "prefix")?;
        let encoding = encoding_arg(env, &encoding)?;
        let layout = layout(env, layout_index)?;
        let ids = PublicIds::from_keys(&keys, &prefix, encoding)
            .or_throw(env)?
            .with_layout(layout);
        register(env, ids)
    })
}

/// What the JS `PublicIds` reads once and keeps.
#[napi(object, object_from_js = false)]
pub struct PublicIdsInfo {
    pub key_version: u32,
    pub key_versions: Vec<u32>,
    pub text_length: u32,
    pub pattern: String,
}

/// The key versions, text length and pattern of public IDs (the JS side knows their prefix
/// and encoding: the core took them as given).
#[napi]
pub fn public_info(env: &Env, index: u32) -> Result<PublicIdsInfo> {
    guard(env, || {
        let ids = public_ids(env, index)?;
        let mut versions = [0; MAX_KEYS];
        let n = ids.key_versions(&mut versions);
        Ok(PublicIdsInfo {
            key_version: ids.key_version(),
            key_versions: versions[..n].to_vec(),
            // At most MAX_TEXT_LEN.
            text_length: u32::try_from(ids.text_len()).unwrap_or(u32::MAX),
            pattern: ids.format().pattern().to_string(),
        })
    })
}

/// The public ID of `id` (a bigint, a decimal string or a safe integer).
#[napi(
    ts_args_type = "index: number, id: bigint | string | number",
    ts_return_type = "string"
)]
pub fn public_encode<'env>(env: &'env Env, index: u32, id: Unknown<'_>) -> Result<Unknown<'env>> {
    guard(env, || {
        let ids = public_ids(env, index)?;
        let text = ids
            .encode(u64_arg(env, &id, "id", Arg::Id)?)
            .or_throw(env)?;
        let bytes = text.as_bytes();
        // At most MAX_TEXT_LEN (79) bytes.
        let len = isize::try_from(bytes.len()).unwrap_or(0);
        let mut value = std::ptr::null_mut();
        // SAFETY: `bytes` is ASCII (so Latin-1) of its length; `value` is a valid out-pointer.
        unsafe {
            sys::napi_create_string_latin1(env.raw(), bytes.as_ptr().cast(), len, &raw mut value);
        }
        // SAFETY: `value` is a string just made in this env.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
    })
}

/// The ID a public ID stands for.
#[napi(ts_args_type = "index: number, text: string")]
pub fn public_decode(env: &Env, index: u32, text: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let ids = public_ids(env, index)?;
        let mut buf = [0u8; TEXT_BUF];
        ids.decode_bytes(text_arg(env, &text, &mut buf)?)
            .or_throw(env)
    })
}

/// The shape of a public ID checked without its key; the key version it names.
#[napi(ts_args_type = "text: string, prefix: string, encoding: string")]
pub fn public_check(
    env: &Env,
    text: Unknown<'_>,
    prefix: Unknown<'_>,
    encoding: Unknown<'_>,
) -> Result<u32> {
    guard(env, || {
        let prefix = string_arg(env, &prefix, "prefix")?;
        let format = Format::new(&prefix, encoding_arg(env, &encoding)?).or_throw(env)?;
        let mut buf = [0u8; TEXT_BUF];
        format
            .check_bytes(text_arg(env, &text, &mut buf)?)
            .or_throw(env)
    })
}
