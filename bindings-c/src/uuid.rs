//! The UUIDv7 bridge (`shardid::uuid`): an ID as a standard UUIDv7 (its 16 bytes, network
//! order) and back, and a UUID's text. Every rule is the core's; this file only moves bytes.

use std::ffi::c_char;

use crate::layout::{layout_arg, shardid_layout};
use crate::public::bytes_arg;
use crate::status::{boundary, out, shardid_status};

/// The size of a buffer for a UUID's text (36 characters) and its terminating NUL.
pub const SHARDID_UUID_TEXT_LEN: usize = 37;

/// Borrows a UUID argument: 16 bytes.
///
/// # Safety
/// `ptr` is null or valid for reading 16 bytes for `'a`.
unsafe fn uuid_arg<'a>(ptr: *const u8) -> Result<&'a [u8; 16], shardid_status> {
    // SAFETY: a non-null `ptr` is valid for 16 bytes (the caller's contract); [u8; 16] has
    // alignment 1.
    unsafe { ptr.cast::<[u8; 16]>().as_ref() }.ok_or(shardid_status::SHARDID_ERR_NULL_ARGUMENT)
}

/// The UUIDv7 of `id` in `layout` into `out_uuid` (16 bytes, network order): its time is the
/// ID's, the rest of the ID and the layout's marker fill its random bits, so
/// `shardid_from_uuid` gives the ID back and UUIDs sort as their IDs do.
///
/// `SHARDID_ERR_INVALID_ID` for an ID outside the layout; `SHARDID_ERR_INVALID_ARGUMENT` for
/// an ID of a custom layout whose time is past UUIDv7's 48-bit milliseconds. Nothing is
/// written on an error.
///
/// # Safety
/// `layout` is null or a valid `shardid_layout`; `out_uuid` is null or valid for writing 16
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_to_uuid(
    layout: *const shardid_layout,
    id: u64,
    out_uuid: *mut u8,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_uuid, layout) =
            unsafe { (out(out_uuid.cast::<[u8; 16]>())?, layout_arg(layout)?) };
        out_uuid.write(shardid::uuid::to_uuid(&layout, id)?);
        Ok(())
    })
}

/// The ID the UUID `uuid` (16 bytes) made by `shardid_to_uuid` holds, into `*out_id`. With
/// `layout` NULL, the layout is the preset the UUID's marker names (a custom layout's UUID
/// needs its layout).
///
/// `SHARDID_ERR_INVALID_ARGUMENT` for a UUID of another version or variant, one the bridge did
/// not make, or one of another layout than `layout` (`shardid_last_error_message()` says
/// which). `*out_id` is written only on success.
///
/// # Safety
/// `layout` is null or a valid `shardid_layout`; `uuid` is null or valid for reading 16
/// bytes; `out_id` is null or valid for writing a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_from_uuid(
    layout: *const shardid_layout,
    uuid: *const u8,
    out_id: *mut u64,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees the pointers are null or valid.
        let (out_id, uuid) = unsafe { (out(out_id)?, uuid_arg(uuid)?) };
        let layout = if layout.is_null() {
            None
        } else {
            // SAFETY: non-null, and the caller guarantees it is valid.
            Some(unsafe { layout_arg(layout) }?)
        };
        out_id.write(shardid::uuid::from_uuid(layout.as_ref(), uuid)?);
        Ok(())
    })
}

/// The text of the UUID `uuid` (16 bytes) into `buf`: 36 characters, lowercase hexadecimal
/// in groups of 8-4-4-4-12, and a NUL (`SHARDID_UUID_TEXT_LEN` bytes in all).
///
/// # Safety
/// `uuid` is null or valid for reading 16 bytes; `buf` is null or valid for writing
/// `SHARDID_UUID_TEXT_LEN` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_uuid_format(uuid: *const u8, buf: *mut c_char) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (buf, uuid) = unsafe {
            (
                out(buf.cast::<[u8; SHARDID_UUID_TEXT_LEN]>())?,
                uuid_arg(uuid)?,
            )
        };
        let mut text = [0u8; SHARDID_UUID_TEXT_LEN];
        text[..36].copy_from_slice(shardid::uuid::format(uuid).as_bytes());
        buf.write(text);
        Ok(())
    })
}

/// The 16 bytes of the UUID text `text` (`text_len` bytes; no NUL needed): 8-4-4-4-12
/// hexadecimal digits in either case, nothing around them, into `out_uuid`.
///
/// `SHARDID_ERR_INVALID_ARGUMENT` for anything else. Nothing is written on an error.
///
/// # Safety
/// `text` is null or valid for reading `text_len` bytes; `out_uuid` is null or valid for
/// writing 16 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_uuid_parse(
    text: *const c_char,
    text_len: usize,
    out_uuid: *mut u8,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_uuid, text) = unsafe {
            (
                out(out_uuid.cast::<[u8; 16]>())?,
                bytes_arg(text.cast(), text_len)?,
            )
        };
        out_uuid.write(shardid::uuid::parse_bytes(text)?);
        Ok(())
    })
}
