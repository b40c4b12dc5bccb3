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
//! random UUIDv7 passes one layout's marker once in 2^10 (10 bits; any preset's, when no
//! layout is given, 4 in 2^10), and its embedded 64 bits must then be a valid ID whose time
//! field holds exactly the UUID's time: once in 2^41 for Instagram (the field's 41 bits),
//! 2^42 for Twitter and Discord (Twitter's 41 bits and its sign bit, Discord's 42), 2^40 for
//! Sonyflake (39 bits and the sign bit), which also needs the time on its 10 ms grid (1 in
//! 10). So a UUID the bridge did not make reads as an ID of a layout given at most once in
//! 2^51, of no layout given (any preset) at most once in 2^49, and otherwise gets an error,
//! never a wrong ID.
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
pub const NOT_TEXT: &str = "is not UUID text (8-4-4-4-12 hex digits)";
/// Why a UUID of another version is refused.
pub const NOT_VERSION_7: &str = "is not a UUIDv7";
/// Why a UUID of another variant is refused.
pub const NOT_RFC_VARIANT: &str = "has not RFC 9562's variant";
/// Why a UUIDv7 with no layout's marker is refused.
pub const NO_MARKER: &str = "was not made by to_uuid: no layout marker";
/// Why a UUID of a custom layout is refused when no layout was given.
pub const CUSTOM_NEEDS_LAYOUT: &str = "is of a custom layout: pass the layout";
/// Why a UUID of another layout than the one asked for is refused.
pub const OTHER_LAYOUT: &str = "was made for another layout";
/// Why a UUID whose embedded ID is not one of the layout's, or whose time is not its ID's, is
/// refused.
pub const TIME_MISMATCH: &str = "was not made by to_uuid: its time is not its ID's";
/// Why an ID whose time does not fit `unix_ts_ms` is refused (custom layouts only: every
/// preset runs out long before).
pub const PAST_UUID_TIME: &str = "is past UUIDv7's last millisecond (48 bits)";

const fn refuse(reason: &'static str) -> Error {
    Error::InvalidArgument {
        argument: ARGUMENT,
        reason,
    }
}

/// The layout's marker: its preset's, or the custom marker with 8 bits of a hash of its
/// fields (so a custom UUID read with another custom layout is refused 255 times in 256; the
/// time check catches most of the rest).
#[allow(clippy::cast_possible_truncation)] // 8 bits
#[inline(never)] // once in the WebAssembly module, whose size has a budget
pub(crate) fn marker(layout: &Layout) -> u16 {
    if let Some(i) = Layout::PRESETS.iter().position(|(_, p)| p == layout) {
        return PRESET_MARKERS[i];
    }
    // Every field in one word, mixed by one multiplication with an odd constant (the
    // WebAssembly module's size budget has no room for a byte-wise hash).
    let widths = u64::from(layout.time_bits())
        | (u64::from(layout.shard_bits()) << 8)
        | (u64::from(layout.sequence_bits()) << 16)
        | (u64::from(layout.order() == crate::FieldOrder::TimeSequenceShard) << 24)
        | (u64::from(layout.signed()) << 25);
    let hash = (layout.epoch_ms() ^ layout.unit_ms().rotate_left(45) ^ widths.rotate_left(26))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    CUSTOM_MARKER | (hash >> 56) as u16
}

/// The preset a marker names.
fn preset_of(marker: u16) -> Option<Layout> {
    let i = usize::from(marker.checked_sub(PRESET_MARKERS[0])?);
    Layout::PRESETS.get(i).map(|(_, layout)| *layout)
}

/// The UUIDv7 of `id` in `layout`, as its 16 bytes (network order).
///
/// # Errors
/// [`Error::InvalidId`] for an ID outside the layout; `INVALID_ARGUMENT` ([`PAST_UUID_TIME`],
/// argument `id`) for an ID of a custom layout whose time is past 48-bit milliseconds.
#[allow(clippy::cast_possible_truncation)] // a byte at a time
pub fn to_uuid(layout: &Layout, id: u64) -> Result<[u8; 16], Error> {
    let ts = time_of(layout, id)?;
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
    for (i, byte) in out.iter_mut().enumerate() {
        // Byte by byte: WebAssembly has no byte swap, and `to_be_bytes` unrolls into one
        // there (the module's size budget).
        let word = if i < 8 { hi } else { lo };
        *byte = (word >> (56 - 8 * (i % 8))) as u8;
    }
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
    let layout = match layout {
        Some(asked) if marker(asked) == found => *asked,
        None if found & !0xFF != CUSTOM_MARKER => match preset_of(found) {
            Some(preset) => preset,
            None => return Err(refuse(NO_MARKER)),
        },
        None => return Err(refuse(CUSTOM_NEEDS_LAYOUT)),
        Some(_) if preset_of(found).is_some() || found & !0xFF == CUSTOM_MARKER => {
            return Err(refuse(OTHER_LAYOUT));
        }
        Some(_) => return Err(refuse(NO_MARKER)),
    };
    let id = ((rand_a & 0b11) << 62) | (lo & ((1 << 62) - 1));
    match time_of(&layout, id) {
        Ok(ts) if ts == hi >> 16 => Ok(id),
        _ => Err(refuse(TIME_MISMATCH)),
    }
}

/// The ID's time in Unix milliseconds ([`Layout::decode`]'s, without the other fields).
fn time_of(layout: &Layout, id: u64) -> Result<u64, Error> {
    layout.validate_id(id)?;
    Ok(layout.unit_start_ms(id >> layout.time_shift()))
}

/// The UUID's two big-endian words (byte by byte, as [`to_uuid`] writes them).
fn halves(uuid: &[u8; 16]) -> (u64, u64) {
    let (hi, lo) = uuid.split_at(8);
    let word = |bytes: &[u8]| bytes.iter().fold(0, |w, b| (w << 8) | u64::from(*b));
    (word(hi), word(lo))
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
    /// The text's 36 ASCII bytes.
    pub fn as_bytes(&self) -> &[u8; 36] {
        &self.0
    }

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

/// Where each byte's two digits start in a UUID's text (the hyphens at 8, 13, 18 and 23).
const DIGITS_AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/// The text of a UUID's 16 bytes.
pub fn format(uuid: &[u8; 16]) -> Text {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b'-'; 36];
    for (b, at) in uuid.iter().zip(DIGITS_AT) {
        out[at] = HEX[usize::from(b >> 4)];
        out[at + 1] = HEX[usize::from(b & 0xF)];
    }
    Text(out)
}

/// The value of a hexadecimal digit, in either case.
const fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The 16 bytes of a UUID's text: 8-4-4-4-12 hexadecimal digits, in either case (RFC 9562
/// reads them case-insensitively); nothing around them.
///
/// # Errors
/// `INVALID_ARGUMENT`, argument `uuid`, reason [`NOT_TEXT`].
pub fn parse(text: &str) -> Result<[u8; 16], Error> {
    parse_bytes(text.as_bytes())
}

/// [`parse`] of text as bytes (a binding that has bytes, not a `str`).
///
/// # Errors
/// As [`parse`].
pub fn parse_bytes(text: &[u8]) -> Result<[u8; 16], Error> {
    let Ok(text) = <&[u8; 36]>::try_from(text) else {
        return Err(refuse(NOT_TEXT));
    };
    if text[8] != b'-' || text[13] != b'-' || text[18] != b'-' || text[23] != b'-' {
        return Err(refuse(NOT_TEXT));
    }
    let mut out = [0u8; 16];
    for (byte, at) in out.iter_mut().zip(DIGITS_AT) {
        match (hex_digit(text[at]), hex_digit(text[at + 1])) {
            (Some(hi), Some(lo)) => *byte = (hi << 4) | lo,
            _ => return Err(refuse(NOT_TEXT)),
        }
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
