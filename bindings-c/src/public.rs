//! Public IDs (`shardid::PublicIds`): an ID as short, opaque text for URLs and APIs, and back.

use std::ffi::c_char;

use shardid::public::{Format, MAX_TEXT_LEN};
use shardid::{Encoding, PublicIds};

use crate::layout::{layout_arg, shardid_layout};
use crate::status::{arg, boundary, drop_box, out, shardid_status, span, str_arg, text_out};

/// The size of a buffer that holds any public ID and its terminating NUL.
pub const SHARDID_PUBLIC_ID_MAX_LEN: usize = 80;
// A literal for cbindgen, which cannot see the core's constant; the build checks it.
const _: () = assert!(SHARDID_PUBLIC_ID_MAX_LEN == MAX_TEXT_LEN + 1);

/// How a public ID's body is written; the value of an `encoding` argument.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum shardid_encoding {
    /// Crockford's base32: 14 symbols, read in either case (i and l as 1, o as 0).
    SHARDID_ENCODING_BASE32 = 0,
    /// Crockford's base32 and its check symbol: 15 symbols.
    SHARDID_ENCODING_BASE32CHECK = 1,
    /// Bitcoin's base58: 12 symbols.
    SHARDID_ENCODING_BASE58 = 2,
    /// Base62 (0-9, A-Z, a-z): 12 symbols.
    SHARDID_ENCODING_BASE62 = 3,
}

/// The core's encoding of a `shardid_encoding` value; `SHARDID_ERR_INVALID_ARGUMENT` for
/// another byte.
fn encoding_arg(encoding: u8) -> Result<Encoding, shardid_status> {
    Encoding::ALL
        .get(usize::from(encoding))
        .copied()
        .ok_or(shardid_status::SHARDID_ERR_INVALID_ARGUMENT)
}

/// Borrows `len` bytes (`NULL` allowed when `len` is 0); `SHARDID_ERR_INVALID_ARGUMENT` for
/// a length no buffer has ([`span`]).
///
/// # Safety
/// `ptr` is null or valid for reading `len` bytes for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], shardid_status> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(shardid_status::SHARDID_ERR_NULL_ARGUMENT);
    }
    span(ptr, len)?;
    // SAFETY: non-null, and the caller guarantees `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Encodes IDs as public IDs and decodes them back under a secret key: see the README's
/// "Public IDs". Immutable once made (but for `shardid_public_ids_add_old_key`): share one
/// between threads freely.
pub struct shardid_public_ids {
    inner: PublicIds,
}

/// Makes public IDs with a secret `key` of exactly 16 bytes as key version `key_version`
/// (0 to 31), type `prefix` (`"note"`: up to 63 of a-z, 0-9 and _, starting with a letter; `""`
/// for none), `encoding` (a `shardid_encoding` value) and the IDs of `layout` (values outside it
/// are refused). Free it with `shardid_public_ids_free`.
///
/// `SHARDID_ERR_INVALID_ARGUMENT` for a key of another size, a version above 31, a bad prefix
/// or an unknown encoding; `*out_ids` is then untouched. The key is not kept: only what is
/// derived from it.
///
/// # Safety
/// `key` is null or valid for reading `key_len` bytes; `prefix` is null or a NUL-terminated
/// string; `layout` is null or a valid `shardid_layout`; `out_ids` is null or valid for
/// writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_public_ids_new(
    key: *const u8,
    key_len: usize,
    key_version: u32,
    prefix: *const c_char,
    encoding: u8,
    layout: *const shardid_layout,
    out_ids: *mut *mut shardid_public_ids,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees every pointer is null or valid.
        let (out_ids, key, prefix, layout) = unsafe {
            (
                out(out_ids)?,
                bytes_arg(key, key_len)?,
                str_arg(prefix)?,
                layout_arg(layout)?,
            )
        };
        let encoding = encoding_arg(encoding)?;
        let inner = PublicIds::new(key, key_version, prefix, encoding)?.with_layout(layout);
        out_ids.write(Box::into_raw(Box::new(shardid_public_ids { inner })));
        Ok(())
    })
}

/// Makes public IDs from keys written as text, as an environment variable or a configuration
/// file holds them: 32 hex digits (one key, version 0), or `VERSION:HEX` pairs separated by
/// commas (`"2:<hex>,1:<hex>"`), the highest version current. Otherwise as
/// `shardid_public_ids_new`.
///
/// `SHARDID_ERR_INVALID_ARGUMENT` for keys not in that format, a version above 31 or given
/// twice, more than 4 keys, a bad prefix or an unknown encoding; `*out_ids` is then untouched.
///
/// # Safety
/// `keys` and `prefix` are null or NUL-terminated strings; `layout` is null or a valid
/// `shardid_layout`; `out_ids` is null or valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_public_ids_from_keys(
    keys: *const c_char,
    prefix: *const c_char,
    encoding: u8,
    layout: *const shardid_layout,
    out_ids: *mut *mut shardid_public_ids,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees every pointer is null or valid.
        let (out_ids, keys, prefix, layout) = unsafe {
            (
                out(out_ids)?,
                str_arg(keys)?,
                str_arg(prefix)?,
                layout_arg(layout)?,
            )
        };
        let encoding = encoding_arg(encoding)?;
        let inner = PublicIds::from_keys(keys, prefix, encoding)?.with_layout(layout);
        out_ids.write(Box::into_raw(Box::new(shardid_public_ids { inner })));
        Ok(())
    })
}

/// Also decodes texts made with `key` (16 bytes) as version `key_version`: an old key after a
/// rotation (encoding keeps the current key). At most 4 keys in all.
///
/// `SHARDID_ERR_INVALID_ARGUMENT` for a key of another size, a version above 31 or already
/// held, or a fifth key; `ids` is then unchanged.
///
/// # Safety
/// `ids` is null or a live `shardid_public_ids` no other thread is using; `key` is null or
/// valid for reading `key_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_public_ids_add_old_key(
    ids: *mut shardid_public_ids,
    key_version: u32,
    key: *const u8,
    key_len: usize,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid, and `ids` unshared.
        let (ids, key) = unsafe {
            (
                ids.as_mut()
                    .ok_or(shardid_status::SHARDID_ERR_NULL_ARGUMENT)?,
                bytes_arg(key, key_len)?,
            )
        };
        ids.inner = ids.inner.clone().with_old_key(key_version, key)?;
        Ok(())
    })
}

/// Frees public IDs made by `shardid_public_ids_new`. `NULL` is ignored.
///
/// # Safety
/// `ids` is null or a pointer returned by `shardid_public_ids_new` that has not been freed,
/// and no other thread is using it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_public_ids_free(ids: *mut shardid_public_ids) {
    // SAFETY: forwarded from this function's contract.
    let _ = boundary(|| unsafe { drop_box(ids) });
}

/// Writes the public ID of `id` into `buf` (`buf_len` bytes, at least the text's length plus
/// one: `SHARDID_PUBLIC_ID_MAX_LEN` always is), NUL-terminated, and its length without the
/// NUL into `*out_len`.
///
/// `SHARDID_ERR_INVALID_ID` when `id` is not an ID of the layout; `SHARDID_ERR_INVALID_ARGUMENT`
/// when `buf` is too short. Nothing is written on an error.
///
/// # Safety
/// `ids` is null or live; `buf` is null or valid for writing `buf_len` bytes; `out_len` is null
/// or valid for writing a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_public_encode(
    ids: *const shardid_public_ids,
    id: u64,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees the pointers are null or valid.
        let (out_len, ids, buf) = unsafe { (out(out_len)?, arg(ids)?, text_out(buf, buf_len)?) };
        buf.write(&ids.inner.encode(id)?, out_len)
    })
}

/// The ID the public ID `text` (`text_len` bytes; no NUL needed) stands for, into `*out_id`.
///
/// `SHARDID_ERR_PUBLIC_ID_PREFIX`, `_LENGTH`, `_ALPHABET`, `_CHECK`, `_OVERFLOW` for a text of
/// the wrong shape; `SHARDID_ERR_UNKNOWN_KEY_VERSION` for a key version not held;
/// `SHARDID_ERR_PUBLIC_ID_MISMATCH` when the text is not one of these IDs (another key or
/// type, or altered). `*out_id` is written only on success.
///
/// # Safety
/// `ids` is null or live; `text` is null or valid for reading `text_len` bytes; `out_id` is
/// null or valid for writing a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_public_decode(
    ids: *const shardid_public_ids,
    text: *const c_char,
    text_len: usize,
    out_id: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees the pointers are null or valid.
        let (out_id, ids, text) =
            unsafe { (out(out_id)?, arg(ids)?, bytes_arg(text.cast(), text_len)?) };
        out_id.write(ids.inner.decode_bytes(text)?);
        Ok(())
    })
}

/// Checks the shape of a public ID without its key — `prefix`, `encoding`, length, alphabet,
/// check symbol — and writes the key version it names into `*out_version`. What a program
/// without the key can check; only `shardid_public_decode` says whether it is an ID.
///
/// # Safety
/// `prefix` is null or a NUL-terminated string; `text` is null or valid for reading
/// `text_len` bytes; `out_version` is null or valid for writing a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_public_check(
    prefix: *const c_char,
    encoding: u8,
    text: *const c_char,
    text_len: usize,
    out_version: *mut u32,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees the pointers are null or valid.
        let (out_version, prefix, text) = unsafe {
            (
                out(out_version)?,
                str_arg(prefix)?,
                bytes_arg(text.cast(), text_len)?,
            )
        };
        let format = Format::new(prefix, encoding_arg(encoding)?)?;
        out_version.write(format.check_bytes(text)?);
        Ok(())
    })
}
