//! The layout functions behind the JS `Layout` class.

use napi::bindgen_prelude::{Float64Array, JsValue, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use shardid::{FieldOrder, Layout};

use crate::args::{Arg, typed_array, u64_arg, unparsed_id};
use crate::errors::{Class, OrThrow, guard, invalid_argument};
use crate::slots::Slots;

pub(crate) static LAYOUTS: Slots<Layout> = Slots::new();

/// `value` as a JS number: exact, because every layout registered here keeps its times and
/// field values below 2^53 (checked in [`register`]).
#[allow(clippy::cast_precision_loss)]
pub(crate) fn number(value: u64) -> f64 {
    value as f64
}

/// `INVALID_LAYOUT` for a layout the core never saw (a wrong order name, a width over 255).
fn invalid_layout(env: &Env, reason: &str) -> napi::Error {
    crate::errors::throw_kind(
        env,
        shardid::ErrorKind::InvalidLayout,
        &[("reason", crate::errors::Field::Text(reason))],
    )
}

/// The layout at `index`.
#[inline]
pub(crate) fn layout(env: &Env, index: u32) -> Result<Layout> {
    LAYOUTS
        .get(index)
        .copied()
        .ok_or_else(|| invalid_argument(env, Class::Type, "layout", "is not a shardid Layout"))
}

fn register(env: &Env, layout: Layout) -> Result<u32> {
    shardid::js::check_layout(&layout).or_throw(env)?;
    LAYOUTS.index_of(layout).ok_or_else(|| {
        invalid_layout(
            env,
            "it is one too many: a process holds 4,096 distinct layouts",
        )
    })
}

/// Registers one of the presets by name and returns its index.
#[napi]
pub fn layout_preset(env: &Env, name: String) -> Result<u32> {
    guard(env, || register(env, Layout::preset(&name).or_throw(env)?))
}

/// The presets' names, in the core's order (`Layout.INSTAGRAM`, ...).
#[napi]
pub fn preset_names(env: &Env) -> Result<Vec<&'static str>> {
    guard(env, || {
        Ok(Layout::PRESETS.iter().map(|(name, _)| *name).collect())
    })
}

/// Validates and registers a custom layout, returns its index.
#[napi]
#[allow(clippy::too_many_arguments, clippy::fn_params_excessive_bools)]
pub fn layout_new(
    env: &Env,
    epoch_ms: Unknown<'_>,
    unit_ms: Unknown<'_>,
    time_bits: Unknown<'_>,
    shard_bits: Unknown<'_>,
    sequence_bits: Unknown<'_>,
    order: String,
    signed: bool,
) -> Result<u32> {
    guard(env, || {
        let order = FieldOrder::from_name(&order).or_throw(env)?;
        let width = |v: &Unknown<'_>, name: &str| -> Result<u8> {
            let bits = u64_arg(env, v, name, Arg::LayoutField)?;
            u8::try_from(bits)
                .map_err(|_| invalid_layout(env, &format!("{name} {bits} is wider than 64 bits")))
        };
        let layout = Layout::builder()
            .epoch_ms(u64_arg(env, &epoch_ms, "epochMs", Arg::LayoutField)?)
            .unit_ms(u64_arg(env, &unit_ms, "unitMs", Arg::LayoutField)?)
            .bits(
                width(&time_bits, "timeBits")?,
                width(&shard_bits, "shardBits")?,
                width(&sequence_bits, "sequenceBits")?,
            )
            .order(order)
            .signed(signed)
            .build()
            .or_throw(env)?;
        register(env, layout)
    })
}

/// What the JS `Layout` reads once and keeps.
#[napi(object, object_from_js = false)]
pub struct LayoutInfo {
    pub epoch_ms: f64,
    pub unit_ms: f64,
    pub time_bits: u32,
    pub shard_bits: u32,
    pub sequence_bits: u32,
    pub order: String,
    pub signed: bool,
    pub max_shard: f64,
    pub max_sequence: f64,
    pub max_id: u64,
    pub expires_at_ms: f64,
}

/// The fields and limits of a registered layout.
#[napi]
pub fn layout_info(env: &Env, layout_index: u32) -> Result<LayoutInfo> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        Ok(LayoutInfo {
            epoch_ms: number(l.epoch_ms()),
            unit_ms: number(l.unit_ms()),
            time_bits: u32::from(l.time_bits()),
            shard_bits: u32::from(l.shard_bits()),
            sequence_bits: u32::from(l.sequence_bits()),
            order: l.order().name().into(),
            signed: l.signed(),
            max_shard: number(l.max_shard()),
            max_sequence: number(l.max_sequence()),
            max_id: l.max_id(),
            expires_at_ms: number(l.expires_at_ms()),
        })
    })
}

/// Registers this module instance's decode buffer, a private `Float64Array` of 3, unless it
/// has one (see `instance.rs`); returns the one registered, which `decode` writes into.
#[napi(ts_args_type = "buffer: Float64Array", ts_return_type = "Float64Array")]
pub fn set_decode_buffer<'a>(env: &'a Env, buffer: Unknown<'_>) -> Result<Unknown<'a>> {
    guard(env, || {
        crate::instance::register(env, crate::instance::Buffer::Decode, &buffer)
    })
}

/// Decodes `id` into this module instance's decode buffer: timestamp ms, shard, sequence (the JS side
/// builds the `Parts` object: creating it here would cost four property sets through N-API,
/// and passing the buffer on every call a typed-array lookup).
#[napi(ts_args_type = "layoutIndex: number, id: bigint | string | number")]
pub fn decode(env: &Env, layout_index: u32, id: Unknown<'_>) -> Result<()> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let parts = l.decode(u64_arg(env, &id, "id", Arg::Id)?).or_throw(env)?;
        let Some((out, _)) = crate::instance::buffer(env, crate::instance::Buffer::Decode) else {
            return Err(invalid_argument(
                env,
                Class::Type,
                "setDecodeBuffer",
                "was not called",
            ));
        };
        // SAFETY: `out` came from `set_decode_buffer` in this env: at least 3 f64s of a
        // Float64Array the env holds strongly (V8 never moves an ArrayBuffer's backing store),
        // private to this module instance, and no JavaScript runs during this call.
        unsafe {
            out.write(number(parts.timestamp_ms));
            out.add(1).write(number(parts.shard));
            out.add(2).write(number(parts.sequence));
        }
        Ok(())
    })
}

/// Decodes many IDs (an array of bigints, decimal strings or safe integers, or a
/// `BigUint64Array`) into three `Float64Array`s: timestamp ms, shard, sequence.
#[napi(ts_args_type = "layoutIndex: number, ids: Array<bigint | string | number> | BigUint64Array")]
pub fn decode_many(env: &Env, layout_index: u32, ids: Unknown<'_>) -> Result<Vec<Float64Array>> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let raw = ids.raw();
        let mut columns = [Vec::new(), Vec::new(), Vec::new()];
        let mut push = |id: u64| -> Result<()> {
            let p = l.decode(id).or_throw(env)?;
            columns[0].push(number(p.timestamp_ms));
            columns[1].push(number(p.shard));
            columns[2].push(number(p.sequence));
            Ok(())
        };
        let typed = typed_array(env, &ids, napi::sys::TypedarrayType::biguint64_array);
        let mut is_array = false;
        // SAFETY: `raw` is a live value of this env.
        unsafe { napi::sys::napi_is_array(env.raw(), raw, &raw mut is_array) };
        if let Some((data, length)) = typed {
            if !data.is_null() || length == 0 {
                let ids: &[u64] = if length == 0 {
                    &[]
                } else {
                    // SAFETY: `data` holds `length` u64s of the caller's array, alive for this
                    // synchronous call, during which no JavaScript runs.
                    unsafe { std::slice::from_raw_parts(data.cast::<u64>(), length) }
                };
                for &id in ids {
                    push(id)?;
                }
                return Ok(columns.map(Float64Array::new).into());
            }
        } else if is_array {
            let mut length = 0u32;
            // SAFETY: `raw` is an array of this env.
            unsafe { napi::sys::napi_get_array_length(env.raw(), raw, &raw mut length) };
            for i in 0..length {
                let mut element = std::ptr::null_mut();
                // SAFETY: `raw` is an array of this env and `i` is below its length.
                unsafe { napi::sys::napi_get_element(env.raw(), raw, i, &raw mut element) };
                // SAFETY: `element` is a live value of this env.
                let element = unsafe { Unknown::from_raw_unchecked(env.raw(), element) };
                push(u64_arg(env, &element, "ids[i]", Arg::Id)?)?;
            }
            return Ok(columns.map(Float64Array::new).into());
        }
        Err(invalid_argument(
            env,
            Class::Type,
            "ids",
            "must be an array or a BigUint64Array",
        ))
    })
}

/// Decodes `count` IDs written as decimal digits separated by commas (`ids.join(',')`): the
/// batch path for IDs from JSON, one string across N-API instead of one per ID.
#[napi]
pub fn decode_many_text(
    env: &Env,
    layout_index: u32,
    text: String,
    count: u32,
) -> Result<Vec<Float64Array>> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let mut columns = [Vec::new(), Vec::new(), Vec::new()];
        for (i, token) in text.split(',').enumerate() {
            // More tokens than IDs: one of the strings held a comma.
            let Some(id) = shardid::parse_decimal(token.as_bytes()).filter(|_| i < count as usize)
            else {
                return Err(unparsed_id(env, "ids[i]", token));
            };
            let p = l.decode(id).or_throw(env)?;
            columns[0].push(number(p.timestamp_ms));
            columns[1].push(number(p.shard));
            columns[2].push(number(p.sequence));
        }
        if columns[0].len() != count as usize {
            // Fewer tokens than IDs cannot happen with `ids.join(',')`; refuse it all the same.
            return Err(unparsed_id(env, "ids[i]", &text));
        }
        Ok(columns.map(Float64Array::new).into())
    })
}

/// The memory of a `Float64Array` of at least 3 elements.
pub(crate) fn float64_array<'a>(env: &Env, value: &Unknown<'_>) -> Result<&'a mut [f64]> {
    let Some((data, length)) = typed_array(env, value, napi::sys::TypedarrayType::float64_array)
        .filter(|&(data, length)| length >= 3 && !data.is_null())
    else {
        return Err(invalid_argument(
            env,
            Class::Type,
            "out",
            "must be a Float64Array of 3",
        ));
    };
    // SAFETY: `data` points to `length` f64s owned by the array, which the caller's JS frame
    // keeps alive for this synchronous call; no JavaScript runs meanwhile, and `shardid.js`
    // passes a private, non-shared array, so nothing else touches the memory.
    Ok(unsafe { std::slice::from_raw_parts_mut(data.cast::<f64>(), length) })
}

/// `id` if it is an ID of the layout.
#[napi]
pub fn validate_id(env: &Env, layout_index: u32, id: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        l.validate_id(u64_arg(env, &id, "id", Arg::Id)?)
            .or_throw(env)
    })
}

/// The ID for a time, a shard and a sequence.
#[napi]
pub fn compose(
    env: &Env,
    layout_index: u32,
    timestamp: Unknown<'_>,
    shard: Unknown<'_>,
    sequence: Unknown<'_>,
) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        l.compose(
            u64_arg(env, &timestamp, "timestamp", Arg::Timestamp)?,
            u64_arg(env, &shard, "shard", Arg::Shard)?,
            u64_arg(env, &sequence, "sequence", Arg::Sequence)?,
        )
        .or_throw(env)
    })
}

/// The smallest ID of the time unit holding `timestamp`.
#[napi]
pub fn min_id_at(env: &Env, layout_index: u32, timestamp: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        l.min_id_at(u64_arg(env, &timestamp, "timestamp", Arg::Timestamp)?)
            .or_throw(env)
    })
}

/// The largest ID of the time unit holding `timestamp`.
#[napi]
pub fn max_id_at(env: &Env, layout_index: u32, timestamp: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        l.max_id_at(u64_arg(env, &timestamp, "timestamp", Arg::Timestamp)?)
            .or_throw(env)
    })
}

/// `key % logicalShards`, checked against the layout.
#[napi]
pub fn shard_for_key(
    env: &Env,
    layout_index: u32,
    key: Unknown<'_>,
    logical_shards: Unknown<'_>,
) -> Result<f64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        l.shard_for_key(
            u64_arg(env, &key, "key", Arg::Other)?,
            u64_arg(env, &logical_shards, "logicalShards", Arg::LogicalShards)?,
        )
        .map(number)
        .or_throw(env)
    })
}

/// TiDB's decimal scatter by `digits` (1, 2 or 3) trailing digits.
#[napi]
pub fn scatter_decimal(env: &Env, layout_index: u32, id: Unknown<'_>, digits: u32) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let digits = scatter_digits(env, digits)?;
        l.scatter_decimal_digits(u64_arg(env, &id, "id", Arg::Id)?, digits)
            .or_throw(env)
    })
}

/// The inverse of `scatterDecimal`.
#[napi]
pub fn gather_decimal(env: &Env, layout_index: u32, id: Unknown<'_>, digits: u32) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let digits = scatter_digits(env, digits)?;
        l.gather_decimal_digits(u64_arg(env, &id, "id", Arg::Id)?, digits)
            .or_throw(env)
    })
}

fn scatter_digits(env: &Env, digits: u32) -> Result<shardid::ScatterDigits> {
    shardid::ScatterDigits::new(u64::from(digits)).ok_or_else(|| {
        crate::errors::invalid_argument(
            env,
            crate::errors::Class::Range,
            "digits",
            shardid::ScatterDigits::INVALID,
        )
    })
}

/// The bit-level scatter.
#[napi]
pub fn scatter_bits(env: &Env, layout_index: u32, id: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        l.scatter_bits(u64_arg(env, &id, "id", Arg::Id)?)
            .or_throw(env)
    })
}

/// The inverse of `scatterBits`.
#[napi]
pub fn gather_bits(env: &Env, layout_index: u32, id: Unknown<'_>) -> Result<u64> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        l.gather_bits(u64_arg(env, &id, "id", Arg::Id)?)
            .or_throw(env)
    })
}
