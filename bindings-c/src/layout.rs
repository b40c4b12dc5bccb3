//! Layouts as a plain C struct, and every layout operation of the core.
//!
//! The struct is a value the caller owns and may fill in by hand; every function validates it
//! (a handful of comparisons) before use, so a hand-made invalid layout is a status, never a
//! wrong ID.

use shardid::{FieldOrder, Layout};

use crate::status::{arg, boundary, out, shardid_status};

/// The order of the two low fields of an ID; the value of `shardid_layout.order`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum shardid_field_order {
    /// `time | shard | sequence`: Instagram, Twitter, Discord.
    SHARDID_ORDER_TIME_SHARD_SEQUENCE = 0,
    /// `time | sequence | shard`: Sonyflake.
    SHARDID_ORDER_TIME_SEQUENCE_SHARD = 1,
}

/// C's `bool` as the byte it is (`bool` in the header): a struct filled by hand, or by
/// `memcpy` from elsewhere, can hold any byte there, and a Rust `bool` that is not 0 or 1 is
/// undefined behaviour the moment it is read. Read with [`c_bool`]: anything but 0 or 1 is
/// refused.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct shardid_bool(u8);

impl From<bool> for shardid_bool {
    fn from(b: bool) -> Self {
        Self(u8::from(b))
    }
}

/// The value of a C `bool` argument or field; `invalid` for a byte other than 0 or 1.
pub(crate) fn c_bool(b: shardid_bool, invalid: shardid_status) -> Result<bool, shardid_status> {
    match b.0 {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(invalid),
    }
}

/// A bit layout: epoch, time unit, field widths and order, and whether IDs must fit a signed
/// 64-bit column.
///
/// Use a preset (`shardid_layout_instagram()`, ...) or `shardid_layout_new()`, which checks
/// the values. Filling the struct by hand works too: every function validates the layout it
/// is given and returns `SHARDID_ERR_INVALID_LAYOUT` for one that is not usable.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct shardid_layout {
    /// The epoch, in Unix milliseconds.
    pub epoch_ms: u64,
    /// The length of one time unit in milliseconds (1; 10 for Sonyflake).
    pub unit_ms: u64,
    /// The width of the time field.
    pub time_bits: u8,
    /// The width of the shard (worker, machine) field.
    pub shard_bits: u8,
    /// The width of the sequence field.
    pub sequence_bits: u8,
    /// A `shardid_field_order` value.
    pub order: u8,
    /// Whether every ID must fit a signed 64-bit column (the top bit stays 0): `true` or
    /// `false`; another byte written there by hand makes the layout
    /// `SHARDID_ERR_INVALID_LAYOUT`.
    pub is_signed: shardid_bool,
}

impl From<Layout> for shardid_layout {
    fn from(l: Layout) -> Self {
        Self {
            epoch_ms: l.epoch_ms(),
            unit_ms: l.unit_ms(),
            time_bits: l.time_bits(),
            shard_bits: l.shard_bits(),
            sequence_bits: l.sequence_bits(),
            order: match l.order() {
                FieldOrder::TimeShardSequence => {
                    shardid_field_order::SHARDID_ORDER_TIME_SHARD_SEQUENCE as u8
                }
                FieldOrder::TimeSequenceShard => {
                    shardid_field_order::SHARDID_ORDER_TIME_SEQUENCE_SHARD as u8
                }
            },
            is_signed: l.signed().into(),
        }
    }
}

impl TryFrom<&shardid_layout> for Layout {
    type Error = shardid_status;

    fn try_from(l: &shardid_layout) -> Result<Self, shardid_status> {
        let order = match l.order {
            0 => FieldOrder::TimeShardSequence,
            1 => FieldOrder::TimeSequenceShard,
            _ => return Err(shardid_status::SHARDID_ERR_INVALID_LAYOUT),
        };
        Ok(Layout::builder()
            .epoch_ms(l.epoch_ms)
            .unit_ms(l.unit_ms)
            .bits(l.time_bits, l.shard_bits, l.sequence_bits)
            .order(order)
            .signed(c_bool(
                l.is_signed,
                shardid_status::SHARDID_ERR_INVALID_LAYOUT,
            )?)
            .build()?)
    }
}

/// Reads and validates a `const shardid_layout *` argument.
///
/// # Safety
/// `ptr` is null or points to a valid `shardid_layout`.
pub(crate) unsafe fn layout_arg(ptr: *const shardid_layout) -> Result<Layout, shardid_status> {
    // SAFETY: forwarded from the caller.
    Layout::try_from(unsafe { arg(ptr) }?)
}

/// Instagram: 41 bits of ms since 2011-08-24T21:07:01.721Z | 13 bits shard | 10 bits
/// sequence. Signed; runs out in 2046.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_layout_instagram() -> shardid_layout {
    Layout::INSTAGRAM.into()
}

/// Twitter Snowflake: 41 bits of ms since 2010-11-04T01:42:54.657Z | 10 bits worker | 12
/// bits sequence. Signed; runs out in 2080.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_layout_twitter() -> shardid_layout {
    Layout::TWITTER.into()
}

/// Discord: 42 bits of ms since 2015-01-01T00:00:00Z | 10 bits worker and process | 12 bits
/// increment. Unsigned; runs out in 2154.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_layout_discord() -> shardid_layout {
    Layout::DISCORD.into()
}

/// Sonyflake: 39 bits of 10 ms units since 2014-09-01T00:00:00Z | 8 bits sequence | 16 bits
/// machine. Signed; runs out in 2188.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_layout_sonyflake() -> shardid_layout {
    Layout::SONYFLAKE.into()
}

/// The preset named `name` (`"instagram"`, `"TWITTER"`: any case), as the other languages
/// name them. `SHARDID_ERR_INVALID_LAYOUT` for another name, as in every language;
/// `shardid_last_error_message()` then says there is no preset of that name and lists the
/// names. `*out_layout` is then untouched.
///
/// # Safety
/// `name` is null or a NUL-terminated string; `out_layout` is null or valid for writing a
/// `shardid_layout`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_layout_preset(
    name: *const std::ffi::c_char,
    out_layout: *mut shardid_layout,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_layout, name) = unsafe { (out(out_layout)?, arg(name)?) };
        // SAFETY: non-null, and the caller guarantees a NUL-terminated string.
        let name = unsafe { std::ffi::CStr::from_ptr(name) };
        // A name that is not UTF-8 is no preset's name either: the core's answer for one.
        let layout = Layout::preset(name.to_str().unwrap_or("\u{fffd}"))?;
        out_layout.write(layout.into());
        Ok(())
    })
}

/// Builds and validates a custom layout.
///
/// `order` is a `shardid_field_order` value. `time_bits + shard_bits + sequence_bits` must
/// be at most 64 (63 when `is_signed`), the time field at least 1 bit, `unit_ms` at least 1,
/// and the layout's last timestamp must fit in 64 bits.
///
/// Returns `SHARDID_ERR_INVALID_LAYOUT` when it breaks a rule; `*out_layout` is then untouched.
///
/// # Safety
/// `out_layout` is null or valid for writing a `shardid_layout`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shardid_layout_new(
    epoch_ms: u64,
    unit_ms: u64,
    time_bits: u8,
    shard_bits: u8,
    sequence_bits: u8,
    order: u8,
    is_signed: shardid_bool,
    out_layout: *mut shardid_layout,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees `out_layout` is null or valid for writes.
        let out_layout = unsafe { out(out_layout) }?;
        let candidate = shardid_layout {
            epoch_ms,
            unit_ms,
            time_bits,
            shard_bits,
            sequence_bits,
            order,
            is_signed,
        };
        let layout = Layout::try_from(&candidate)?;
        out_layout.write(layout.into());
        Ok(())
    })
}

/// Runs a layout operation for an exported function: validates the layout, takes the output
/// parameter, and writes the result only on success.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out` is null or valid for writing
/// a `uint64_t`.
unsafe fn layout_op(
    layout: *const shardid_layout,
    out: *mut u64,
    op: impl FnOnce(Layout) -> Result<u64, shardid::Error>,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out, layout) = unsafe { (crate::status::out(out)?, layout_arg(layout)?) };
        out.write(op(layout)?);
        Ok(())
    })
}

/// The largest shard number the layout holds.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_shard` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_max_shard(
    layout: *const shardid_layout,
    out_shard: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_shard, |l| Ok(l.max_shard())) }
}

/// The largest sequence number the layout holds.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_sequence` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_max_sequence(
    layout: *const shardid_layout,
    out_sequence: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_sequence, |l| Ok(l.max_sequence())) }
}

/// The largest ID of the layout.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_max_id(
    layout: *const shardid_layout,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| Ok(l.max_id())) }
}

/// The last Unix millisecond the layout can represent: the time it runs out.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_ms` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_expires_at_ms(
    layout: *const shardid_layout,
    out_ms: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_ms, |l| Ok(l.expires_at_ms())) }
}

/// Checks that `id` is an ID this layout can produce and writes it back.
/// `SHARDID_ERR_INVALID_ID` otherwise.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_validate_id(
    layout: *const shardid_layout,
    id: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.validate_id(id)) }
}

/// Builds the ID for a timestamp (Unix ms, floored to its time unit), shard and sequence.
/// `SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH`, `SHARDID_ERR_TIMESTAMP_PAST_EXPIRY`,
/// `SHARDID_ERR_SHARD_OUT_OF_RANGE`, `SHARDID_ERR_SEQUENCE_OUT_OF_RANGE`.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_compose(
    layout: *const shardid_layout,
    timestamp_ms: u64,
    shard: u64,
    sequence: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.compose(timestamp_ms, shard, sequence)) }
}

/// The smallest ID any generator of the layout can make in the time unit holding
/// `timestamp_ms`: with `shardid_max_id_at`, the bounds of `WHERE id BETWEEN ...` queries.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_min_id_at(
    layout: *const shardid_layout,
    timestamp_ms: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.min_id_at(timestamp_ms)) }
}

/// The largest ID any generator of the layout can make in the time unit holding
/// `timestamp_ms`.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_max_id_at(
    layout: *const shardid_layout,
    timestamp_ms: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.max_id_at(timestamp_ms)) }
}

/// Instagram's key-to-shard mapping: `key % logical_shards`.
/// `SHARDID_ERR_INVALID_SHARD_COUNT` when `logical_shards` is 0 or more than the shard field
/// holds.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_shard` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_shard_for_key(
    layout: *const shardid_layout,
    key: u64,
    logical_shards: u64,
    out_shard: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_shard, |l| l.shard_for_key(key, logical_shards)) }
}

/// TiDB's decimal scatter: moves the last decimal digit of `id` to the front, so
/// consecutive IDs spread over key ranges. `SHARDID_ERR_SCATTER_OVERFLOW` when the result
/// would leave the layout's range.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_scatter_decimal(
    layout: *const shardid_layout,
    id: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.scatter_decimal(id)) }
}

/// The inverse of `shardid_scatter_decimal`.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_gather_decimal(
    layout: *const shardid_layout,
    id: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.gather_decimal(id)) }
}

/// TiDB's decimal scatter by `digits` trailing digits (1, 2 or 3: 10, 100 or 1,000 key
/// ranges): the last `digits` digits of `id` move to just after its first digit.
/// `SHARDID_ERR_INVALID_ARGUMENT` for another count of digits; `SHARDID_ERR_SCATTER_OVERFLOW`
/// when the result would leave the layout's range.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_scatter_decimal_digits(
    layout: *const shardid_layout,
    id: u64,
    digits: u32,
    out_id: *mut u64,
) -> shardid_status {
    let Some(digits) = shardid::ScatterDigits::new(u64::from(digits)) else {
        return shardid_status::SHARDID_ERR_INVALID_ARGUMENT;
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.scatter_decimal_digits(id, digits)) }
}

/// The inverse of `shardid_scatter_decimal_digits`.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_gather_decimal_digits(
    layout: *const shardid_layout,
    id: u64,
    digits: u32,
    out_id: *mut u64,
) -> shardid_status {
    let Some(digits) = shardid::ScatterDigits::new(u64::from(digits)) else {
        return shardid_status::SHARDID_ERR_INVALID_ARGUMENT;
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.gather_decimal_digits(id, digits)) }
}

/// A bit-level scatter that always stays in the layout's range; its own inverse.
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_scatter_bits(
    layout: *const shardid_layout,
    id: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.scatter_bits(id)) }
}

/// The inverse of `shardid_scatter_bits` (the same transform).
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_id` is null or valid for writing a
/// `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_gather_bits(
    layout: *const shardid_layout,
    id: u64,
    out_id: *mut u64,
) -> shardid_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { layout_op(layout, out_id, |l| l.gather_bits(id)) }
}

/// The fields of an ID.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct shardid_parts {
    /// When the ID was made: the start of its time unit, in Unix milliseconds.
    pub timestamp_ms: u64,
    /// The shard (worker, machine) that made it.
    pub shard: u64,
    /// Its sequence number within the time unit.
    pub sequence: u64,
}

/// Splits an ID into its fields. `SHARDID_ERR_INVALID_ID` when `id` is not an ID this layout
/// can produce (bits above its width, or the sign bit of a signed layout).
///
/// # Safety
/// `layout` is null or points to a valid `shardid_layout`; `out_parts` is null or valid for
/// writing a `shardid_parts`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_decode(
    layout: *const shardid_layout,
    id: u64,
    out_parts: *mut shardid_parts,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_parts, l) = unsafe { (out(out_parts)?, layout_arg(layout)?) };
        let p = l.decode(id)?;
        out_parts.write(shardid_parts {
            timestamp_ms: p.timestamp_ms,
            shard: p.shard,
            sequence: p.sequence,
        });
        Ok(())
    })
}
