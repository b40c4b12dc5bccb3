//! The bridge between 64-bit IDs and UUIDv7: `uuid` columns, PostgreSQL 18's `uuidv7()` and
//! `uuid_extract_timestamp()`, and the snowflakes a table's rows, URLs and partners already
//! carry, without a lookup table and without losing order.
//!
//! A bridge UUID is a standard UUIDv7 (RFC 9562: version 7, variant `10`):
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-------------------------------------------------------------+
//! |                 unix_ts_ms: the ID's time                   |
//! +-------------------------------+-------+-------------------+--+
//! |      unix_ts_ms (cont.)       |  0111 | marker (10 bits)  |id|  rand_a: marker, ID bits 63..62
//! +---+---------------------------+-------+-------------------+--+
//! |10 |        ID bits 61..0 (rand_b)                          |
//! +---+---------------------------------------------------------+
//! ```
//!
//! - `unix_ts_ms` is the ID's own time, [`Layout::decode`]'s `timestamp_ms`: the start of its
//!   time unit in Unix milliseconds (Sonyflake's 10 ms units land on their first millisecond),
//!   so `uuid_extract_timestamp()` reads the ID's time exactly.
//! - The whole 64-bit ID follows in the low 64 bits of `rand_a`/`rand_b`: shard, sequence, the
//!   time field with the layout's epoch offset and unit, all of it, so the way back is exact
//!   for every valid ID with no rounding and no epoch kept elsewhere.
//! - The 10-bit marker names the layout: one value per preset ([`Layout::PRESETS`]), so a
//!   preset's UUID reads back with no configuration; a custom layout's marker is `01` and 8
//!   bits of a hash of the layout, and [`from_uuid`] needs that layout passed.
//!
//! **Order.** For IDs of one layout the marker is one value and the time is non-decreasing in
//! the ID, so comparing the UUIDs' bytes (as PostgreSQL, MySQL's `BINARY(16)` and the text
//! form do) compares the IDs.
//!
//! **What is refused** (`INVALID_ARGUMENT`, argument `uuid`, a reason below): text that is not
//! a UUID's, another version, another variant, a marker that is no layout's, a layout other
//! than the one asked for, and a UUID whose `unix_ts_ms` is not its embedded ID's time. A
//! random UUIDv7 passes one layout's marker once in 2^10 (any preset's: 4 in 2^10, 1 in 256,
//! when no layout is given), and then its embedded ID's time field must hold exactly the
//! UUID's time: one value of the field's 2^39 (Sonyflake) to 2^42 (Discord). So a UUID the
//! bridge did not make reads as an ID at most once in 2^49 (Sonyflake; Instagram and Twitter
//! 2^51, Discord 2^52), and otherwise gets an error, never a wrong ID.
//!
//! `no_std`, no allocation: 16 bytes in, 16 bytes out, and the text form in a 36-byte buffer.

use core::fmt;

use crate::{Error, Layout};

/// The argument name of every refusal of a UUID.
pub const ARGUMENT: &str = "uuid";

/// The width of the marker in `rand_a`, in bits.
pub const MARKER_BITS: u32 = 10;

/// The markers of the presets, in the order of [`Layout::PRESETS`]: `1011 0000 01` and up.
const PRESET_MARKERS: [u16; 4] = [0x2C1, 0x2C2, 0x2C3, 0x2C4];

/// A custom layout's marker: `01` and 8 bits of the layout's hash (0x100..=0x1FF, no
/// preset's).
const CUSTOM_MARKER: u16 = 0x100;

/// The last Unix millisecond `unix_ts_ms` holds (48 bits): 10889-08-02T05:31:50.655Z.
pub const MAX_UNIX_TS_MS: u64 = (1 << 48) - 1;

/// Why a text is refused as a UUID.
pub const NOT_TEXT: &str =
    "is not a UUID's text: 32 hexadecimal digits in groups of 8-4-4-4-12 separated by '-'";
/// Why a UUID of another version is refused.
pub const NOT_VERSION_7: &str = "is not a UUIDv7: its version is not 7";
/// Why a UUID of another variant is refused.
pub const NOT_RFC_VARIANT: &str = "does not have RFC 9562's variant (bits 10 at the top of byte 8)";
/// Why a UUIDv7 with no layout's marker is refused.
pub const NO_MARKER: &str = "was not made from a shardid ID: its rand_a holds no layout's marker";
/// Why a UUID of a custom layout is refused when no layout was given.
pub const CUSTOM_NEEDS_LAYOUT: &str =
    "was made from an ID of a custom layout: pass that layout to read it back";
/// Why a UUID of another layout than the one asked for is refused.
pub const OTHER_LAYOUT: &str = "was made from an ID of another layout than the one asked for";
/// Why a UUID whose embedded ID is not one of the layout's, or whose time is not its ID's, is
/// refused.
pub const TIME_MISMATCH: &str =
    "was not made from a shardid ID: its time is not the time of the ID it holds";
/// Why an ID whose time does not fit `unix_ts_ms` is refused (custom layouts only: every
/// preset runs out long before).
pub const PAST_UUID_TIME: &str =
    "has a time past UUIDv7's last millisecond (48 bits: 10889-08-02T05:31:50.655Z)";

const fn refuse(reason: &'static str) -> Error {
    Error::InvalidArgument {
        argument: ARGUMENT,
        reason,
    }
}

/// The layout's marker: its preset's, or the custom marker with 8 bits of FNV-1a over its
/// fields (so a custom UUID read with another custom layout is refused 255 times in 256; the
/// time check catches most of the rest).
fn marker(layout: &Layout) -> u16 {
    if let Some(i) = Layout::PRESETS.iter().position(|(_, p)| p == layout) {
        return PRESET_MARKERS[i];
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&layout.epoch_ms().to_be_bytes());
    eat(&layout.unit_ms().to_be_bytes());
    eat(&[
        layout.time_bits(),
        layout.shard_bits(),
        layout.sequence_bits(),
        u8::from(layout.order() == crate::FieldOrder::TimeSequenceShard),
        u8::from(layout.signed()),
    ]);
    CUSTOM_MARKER | u16::from(hash.to_be_bytes()[0])
}

/// The preset a marker names.
fn preset_of(marker: u16) -> Option<Layout> {
    PRESET_MARKERS
        .iter()
        .position(|m| *m == marker)
        .map(|i| Layout::PRESETS[i].1)
}

/// The UUIDv7 of `id` in `layout`, as its 16 bytes (network order).
///
/// # Errors
/// [`Error::InvalidId`] for an ID outside the layout; `INVALID_ARGUMENT` ([`PAST_UUID_TIME`],
/// argument `id`) for an ID of a custom layout whose time is past 48-bit milliseconds.
pub fn to_uuid(layout: &Layout, id: u64) -> Result<[u8; 16], Error> {
    let ts = layout.decode(id)?.timestamp_ms;
    if ts > MAX_UNIX_TS_MS {
        return Err(Error::InvalidArgument {
            argument: "id",
            reason: PAST_UUID_TIME,
        });
    }
    let rand_a = (u64::from(marker(layout)) << 2) | (id >> 62);
    let hi = (ts << 16) | (0x7 << 12) | rand_a;
    let lo = (0b10 << 62) | (id & ((1 << 62) - 1));
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&hi.to_be_bytes());
    out[8..].copy_from_slice(&lo.to_be_bytes());
    Ok(out)
}

/// The ID a bridge UUID holds. With `layout` `None` the UUID's marker names the preset; a
/// custom layout's UUID needs its layout. With a layout, a UUID of any other is refused.
///
/// # Errors
/// `INVALID_ARGUMENT`, argument `uuid`, with the reason: [`NOT_VERSION_7`],
/// [`NOT_RFC_VARIANT`], [`NO_MARKER`], [`CUSTOM_NEEDS_LAYOUT`], [`OTHER_LAYOUT`],
/// [`TIME_MISMATCH`], checked in that order.
pub fn from_uuid(layout: Option<&Layout>, uuid: &[u8; 16]) -> Result<u64, Error> {
    let (hi, lo) = halves(uuid);
    if (hi >> 12) & 0xF != 7 {
        return Err(refuse(NOT_VERSION_7));
    }
    if lo >> 62 != 0b10 {
        return Err(refuse(NOT_RFC_VARIANT));
    }
    let rand_a = hi & 0xFFF;
    // 10 bits: fits a u16.
    #[allow(clippy::cast_possible_truncation)]
    let found = (rand_a >> 2) as u16;
    let is_custom = found & !0xFF == CUSTOM_MARKER;
    let layout = match (layout, preset_of(found)) {
        (_, None) if !is_custom => return Err(refuse(NO_MARKER)),
        (None, None) => return Err(refuse(CUSTOM_NEEDS_LAYOUT)),
        (None, Some(preset)) => preset,
        (Some(asked), _) if marker(asked) != found => return Err(refuse(OTHER_LAYOUT)),
        (Some(asked), _) => *asked,
    };
    let id = ((rand_a & 0b11) << 62) | (lo & ((1 << 62) - 1));
    match layout.decode(id) {
        Ok(parts) if parts.timestamp_ms == hi >> 16 => Ok(id),
        _ => Err(refuse(TIME_MISMATCH)),
    }
}

fn halves(uuid: &[u8; 16]) -> (u64, u64) {
    let mut hi = [0u8; 8];
    let mut lo = [0u8; 8];
    hi.copy_from_slice(&uuid[..8]);
    lo.copy_from_slice(&uuid[8..]);
    (u64::from_be_bytes(hi), u64::from_be_bytes(lo))
}

impl Layout {
    /// The UUIDv7 of `id` ([`to_uuid`]).
    ///
    /// # Errors
    /// As [`to_uuid`].
    pub fn to_uuid(&self, id: u64) -> Result<[u8; 16], Error> {
        to_uuid(self, id)
    }

    /// The ID of a UUID made from one of this layout's IDs ([`from_uuid`]).
    ///
    /// # Errors
    /// As [`from_uuid`].
    pub fn from_uuid(&self, uuid: &[u8; 16]) -> Result<u64, Error> {
        from_uuid(Some(self), uuid)
    }
}

/// A UUID's text: 36 bytes, lowercase hexadecimal, hyphenated 8-4-4-4-12 (RFC 9562's form, and
/// what PostgreSQL prints).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text([u8; 36]);

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII hexadecimal digits and '-' are ever written.
        core::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Where the hyphens of a UUID's text sit.
const HYPHENS: [usize; 4] = [8, 13, 18, 23];

/// The text of a UUID's 16 bytes.
pub fn format(uuid: &[u8; 16]) -> Text {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b'-'; 36];
    let mut at = 0;
    for b in uuid {
        if HYPHENS.contains(&at) {
            at += 1;
        }
        out[at] = HEX[usize::from(b >> 4)];
        out[at + 1] = HEX[usize::from(b & 0xF)];
        at += 2;
    }
    Text(out)
}

/// The 16 bytes of a UUID's text: 8-4-4-4-12 hexadecimal digits, in either case (RFC 9562
/// reads them case-insensitively); nothing around them.
///
/// # Errors
/// `INVALID_ARGUMENT`, argument `uuid`, reason [`NOT_TEXT`].
pub fn parse(text: &str) -> Result<[u8; 16], Error> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 {
        return Err(refuse(NOT_TEXT));
    }
    let mut out = [0u8; 16];
    let mut digits = 0;
    for (i, c) in bytes.iter().enumerate() {
        if HYPHENS.contains(&i) {
            if *c != b'-' {
                return Err(refuse(NOT_TEXT));
            }
            continue;
        }
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return Err(refuse(NOT_TEXT)),
        };
        out[digits / 2] |= if digits % 2 == 0 { v << 4 } else { v };
        digits += 1;
    }
    Ok(out)
}

/// [`to_uuid`] as text.
///
/// # Errors
/// As [`to_uuid`].
pub fn to_uuid_text(layout: &Layout, id: u64) -> Result<Text, Error> {
    to_uuid(layout, id).map(|u| format(&u))
}

/// [`from_uuid`] of a UUID's text.
///
/// # Errors
/// [`NOT_TEXT`], then as [`from_uuid`].
pub fn from_uuid_text(layout: Option<&Layout>, text: &str) -> Result<u64, Error> {
    from_uuid(layout, &parse(text)?)
}
