//! Public IDs (the `public` feature: the module `shardid-wasm/public`, beside the default one,
//! which stays within its size budget without them). Bytes in and out through [`TEXT`]:
//! `js/backend.js` writes keys, prefixes and texts there (every character that is not ASCII
//! as 0xFF, which no alphabet, prefix or key holds) and reads encoded texts and patterns back.
//!
//! A browser cannot decode without the key, and must not hold it: there, only the shape check
//! (`publicCheck`) belongs. Encoding and decoding are for servers and edge runtimes.

use alloc::vec::Vec;
use core::cell::RefCell;

use shardid::public::{Format, MAX_KEYS, MAX_PATTERN_LEN};
use shardid::{Encoding, Error, PublicIds};
use wasm_bindgen::prelude::*;

use super::{OUT, TEXT, bad_handle, fail, layout, put};
use crate::Local;

static PUBLIC: Local<Vec<PublicIds>> = Local(RefCell::new(Vec::new()));

/// The index of public IDs equal to `ids`, adding them if new; in OUT.
fn register(ids: PublicIds) -> u32 {
    let mut all = PUBLIC.0.borrow_mut();
    let index = all.iter().position(|p| *p == ids).unwrap_or_else(|| {
        all.push(ids);
        all.len() - 1
    });
    put(&[index as u64]);
    0
}

fn public_ids(index: u32) -> Option<PublicIds> {
    PUBLIC.0.borrow().get(index as usize).cloned()
}

fn encoding(index: u32) -> Option<Encoding> {
    Encoding::ALL.get(index as usize).copied()
}

/// `TEXT[from..from + len]` as text: bytes that are not UTF-8 (0xFF stands for a character
/// that is not ASCII) are refused with `bad`, as the core refuses such a character.
fn text(from: u32, len: u32, bad: Error) -> Result<alloc::string::String, Error> {
    let scratch = TEXT.0.borrow();
    let bytes = scratch
        .get(from as usize..(from + len) as usize)
        .ok_or(bad)?;
    core::str::from_utf8(bytes)
        .map(alloc::string::String::from)
        .map_err(|_| bad)
}

const PREFIX_BAD: Error = Error::InvalidArgument {
    argument: "prefix",
    reason: shardid::public::PREFIX_RULE,
};

/// Public IDs with the key in `TEXT[..key_len]` as version `version`, the prefix in the
/// `prefix_len` bytes after it, encoding `encoding` (an index of `Encoding::ALL`) and the
/// layout `layout_index`; their index in OUT.
#[wasm_bindgen(js_name = publicNew)]
pub fn public_new(
    layout_index: u32,
    key_len: u32,
    version: u32,
    prefix_len: u32,
    encoding_index: u32,
) -> u32 {
    let (Some(l), Some(encoding)) = (layout(layout_index), encoding(encoding_index)) else {
        return bad_handle();
    };
    let made = (|| {
        let key: Vec<u8> = TEXT
            .0
            .borrow()
            .get(..key_len as usize)
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        let prefix = text(key_len, prefix_len, PREFIX_BAD)?;
        Ok::<_, Error>(PublicIds::new(&key, version, &prefix, encoding)?.with_layout(l))
    })();
    match made {
        Ok(ids) => register(ids),
        Err(e) => fail(e),
    }
}

/// The public IDs `index` that also decode texts of the key in `TEXT[..key_len]` as version
/// `version`; their index in OUT.
#[wasm_bindgen(js_name = publicWithOldKey)]
pub fn public_with_old_key(index: u32, version: u32, key_len: u32) -> u32 {
    let Some(ids) = public_ids(index) else {
        return bad_handle();
    };
    let key: Vec<u8> = TEXT
        .0
        .borrow()
        .get(..key_len as usize)
        .map(<[u8]>::to_vec)
        .unwrap_or_default();
    match ids.with_old_key(version, &key) {
        Ok(ids) => register(ids),
        Err(e) => fail(e),
    }
}

/// Public IDs from keys as text in `TEXT[..keys_len]`, the prefix in the `prefix_len` bytes
/// after it; their index in OUT.
#[wasm_bindgen(js_name = publicFromKeys)]
pub fn public_from_keys(
    layout_index: u32,
    keys_len: u32,
    prefix_len: u32,
    encoding_index: u32,
) -> u32 {
    let (Some(l), Some(encoding)) = (layout(layout_index), encoding(encoding_index)) else {
        return bad_handle();
    };
    let keys_bad = Error::InvalidArgument {
        argument: "keys",
        reason: shardid::public::KEYS_FORMAT,
    };
    let made = (|| {
        let keys = text(0, keys_len, keys_bad)?;
        let prefix = text(keys_len, prefix_len, PREFIX_BAD)?;
        Ok::<_, Error>(PublicIds::from_keys(&keys, &prefix, encoding)?.with_layout(l))
    })();
    match made {
        Ok(ids) => register(ids),
        Err(e) => fail(e),
    }
}

/// What `PublicIds` keeps, in OUT: the current key version, the count of keys, the text
/// length and the pattern's length; the versions from OUT[4]; the pattern in TEXT.
#[wasm_bindgen(js_name = publicInfo)]
pub fn public_info(index: u32) -> u32 {
    let Some(ids) = public_ids(index) else {
        return bad_handle();
    };
    let mut versions = [0u32; MAX_KEYS];
    let n = ids.key_versions(&mut versions);
    let mut pattern = [0u8; MAX_PATTERN_LEN];
    let len = ids.format().pattern().write_to(&mut pattern);
    let mut text = TEXT.0.borrow_mut();
    if text.len() < len {
        text.resize(len, 0);
    }
    text[..len].copy_from_slice(&pattern[..len]);
    let mut out = OUT.0.borrow_mut();
    out[..4].copy_from_slice(&[
        u64::from(ids.key_version()),
        n as u64,
        ids.text_len() as u64,
        len as u64,
    ]);
    for (slot, v) in out[4..4 + n].iter_mut().zip(&versions[..n]) {
        *slot = u64::from(*v);
    }
    0
}

/// The public ID of `id` into TEXT; its length in OUT.
#[wasm_bindgen(js_name = publicEncode)]
pub fn public_encode(index: u32, id: u64) -> u32 {
    let Some(ids) = public_ids(index) else {
        return bad_handle();
    };
    match ids.encode(id) {
        Ok(public_id) => {
            let bytes = public_id.as_bytes();
            let mut text = TEXT.0.borrow_mut();
            if text.len() < bytes.len() {
                text.resize(bytes.len(), 0);
            }
            text[..bytes.len()].copy_from_slice(bytes);
            put(&[bytes.len() as u64]);
            0
        }
        Err(e) => fail(e),
    }
}

/// The ID of the public ID in `TEXT[..len]`, in OUT.
#[wasm_bindgen(js_name = publicDecode)]
pub fn public_decode(index: u32, len: u32) -> u32 {
    let Some(ids) = public_ids(index) else {
        return bad_handle();
    };
    let result = {
        let text = TEXT.0.borrow();
        ids.decode_bytes(text.get(..len as usize).unwrap_or_default())
    };
    match result {
        Ok(id) => {
            put(&[id]);
            0
        }
        Err(e) => fail(e),
    }
}

/// The shape check of the text after the prefix in TEXT (`TEXT[..prefix_len]` the prefix,
/// then `text_len` bytes of text); the key version in OUT.
#[wasm_bindgen(js_name = publicCheck)]
pub fn public_check(prefix_len: u32, encoding_index: u32, text_len: u32) -> u32 {
    let Some(encoding) = encoding(encoding_index) else {
        return bad_handle();
    };
    let result = text(0, prefix_len, PREFIX_BAD)
        .and_then(|prefix| Format::new(&prefix, encoding))
        .and_then(|format| {
            let scratch = TEXT.0.borrow();
            let from = prefix_len as usize;
            format.check_bytes(
                scratch
                    .get(from..from + text_len as usize)
                    .unwrap_or_default(),
            )
        });
    match result {
        Ok(version) => {
            put(&[u64::from(version)]);
            0
        }
        Err(e) => fail(e),
    }
}

/// The UUIDv7 bridge (`Layout#toUuid`, `fromUuid`), here with public IDs: the default module
/// has no room for it in its size budget. The UUID of `id` into `TEXT[..16]`, as its 16 bytes
/// (`js/backend.js` writes their text, lowercase hexadecimal, as the core's `uuid::format`).
#[wasm_bindgen(js_name = uuidTo)]
pub fn uuid_to(layout_index: u32, id: u64) -> u32 {
    let Some(l) = layout(layout_index) else {
        return bad_handle();
    };
    match shardid::uuid::to_uuid(&l, id) {
        Ok(bytes) => {
            let mut scratch = TEXT.0.borrow_mut();
            if scratch.len() < 16 {
                scratch.resize(16, 0);
            }
            scratch[..16].copy_from_slice(&bytes);
            0
        }
        Err(e) => fail(e),
    }
}

/// The ID of the UUID in `TEXT[..len]`: its text (`is_text` 1; a byte that is not UTF-8 is no
/// UUID's) or its 16 bytes (0; `js/backend.js` sends 16 only), read with layout
/// `layout_index`, or with the one its marker names when that is `u32::MAX`; in OUT.
#[wasm_bindgen(js_name = uuidFrom)]
pub fn uuid_from(layout_index: u32, is_text: u32, len: u32) -> u32 {
    let asked = if layout_index == u32::MAX {
        None
    } else if let Some(l) = layout(layout_index) {
        Some(l)
    } else {
        return bad_handle();
    };
    let result = {
        let scratch = TEXT.0.borrow();
        let given = scratch.get(..len as usize).unwrap_or_default();
        if is_text == 1 {
            shardid::uuid::parse_bytes(given)
        } else {
            Ok(<[u8; 16]>::try_from(given).unwrap_or_default())
        }
    }
    .and_then(|bytes| shardid::uuid::from_uuid(asked.as_ref(), &bytes));
    match result {
        Ok(id) => {
            put(&[id]);
            0
        }
        Err(e) => fail(e),
    }
}
