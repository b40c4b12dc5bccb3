//! The layout functions (the same names and behaviour as the Node addon's).

use alloc::vec::Vec;
use core::cell::RefCell;

use js_sys::{Float64Array, Object, Reflect};
use shardid::{FieldOrder, Layout};
use wasm_bindgen::prelude::*;

use crate::Local;
use crate::args::{Arg, Class, MAX_SAFE_INTEGER, OrThrow, error, u64_arg};

/// The largest time a JavaScript `Date` holds, in Unix ms.
const MAX_DATE_MS: u64 = 8_640_000_000_000_000;

/// Every layout registered, addressed by index; equal layouts share one.
static LAYOUTS: Local<Vec<Layout>> = Local(RefCell::new(Vec::new()));
/// Where `decode` writes: the `Float64Array` `api.js` registers.
static DECODE_BUFFER: Local<Option<Float64Array>> = Local(RefCell::new(None));

/// `value` as a JS number: exact for every registered layout (checked in `register`).
#[allow(clippy::cast_precision_loss)]
pub(crate) fn number(value: u64) -> f64 {
    value as f64
}

pub(crate) fn layout(index: u32) -> Result<Layout, JsValue> {
    LAYOUTS
        .0
        .borrow()
        .get(index as usize)
        .copied()
        .ok_or_else(|| error(Class::Type, "INVALID_ARGUMENT", "not a shardid Layout"))
}

fn register(layout: Layout) -> Result<u32, JsValue> {
    if layout.max_shard() > MAX_SAFE_INTEGER
        || layout.max_sequence() > MAX_SAFE_INTEGER
        || layout.expires_at_ms() > MAX_DATE_MS
    {
        return Err(error(
            Class::Range,
            "INVALID_LAYOUT",
            "the layout's shards, sequences or times do not fit JavaScript numbers and Dates",
        ));
    }
    {
        let mut all = LAYOUTS.0.borrow_mut();
        let index = all.iter().position(|l| *l == layout).unwrap_or_else(|| {
            all.push(layout);
            all.len() - 1
        });
        u32::try_from(index).map_err(|_| error(Class::Range, "INVALID_LAYOUT", "too many layouts"))
    }
}

/// Registers a preset by name.
#[wasm_bindgen(js_name = layoutPreset)]
pub fn layout_preset(name: &str) -> Result<u32, JsValue> {
    register(match name {
        "INSTAGRAM" => Layout::INSTAGRAM,
        "TWITTER" => Layout::TWITTER,
        "DISCORD" => Layout::DISCORD,
        "SONYFLAKE" => Layout::SONYFLAKE,
        _ => return Err(error(Class::Range, "INVALID_LAYOUT", "no such preset")),
    })
}

/// Validates and registers a custom layout.
#[wasm_bindgen(js_name = layoutNew)]
#[allow(clippy::needless_pass_by_value)] // wasm-bindgen passes JS values by value
pub fn layout_new(
    epoch_ms: JsValue,
    unit_ms: JsValue,
    time_bits: JsValue,
    shard_bits: JsValue,
    sequence_bits: JsValue,
    order: &str,
    signed: bool,
) -> Result<u32, JsValue> {
    let order = match order {
        "time_shard_sequence" => FieldOrder::TimeShardSequence,
        "time_sequence_shard" => FieldOrder::TimeSequenceShard,
        _ => {
            return Err(error(
                Class::Range,
                "INVALID_LAYOUT",
                "order must be \"time_shard_sequence\" or \"time_sequence_shard\"",
            ));
        }
    };
    let width = |v: &JsValue, name: &str| -> Result<u8, JsValue> {
        let bits = u64_arg(v, name, Arg::LayoutField)?;
        u8::try_from(bits).map_err(|_| {
            error(
                Class::Range,
                "INVALID_LAYOUT",
                "a field is wider than 64 bits",
            )
        })
    };
    let layout = Layout::builder()
        .epoch_ms(u64_arg(&epoch_ms, "epochMs", Arg::LayoutField)?)
        .unit_ms(u64_arg(&unit_ms, "unitMs", Arg::LayoutField)?)
        .bits(
            width(&time_bits, "timeBits")?,
            width(&shard_bits, "shardBits")?,
            width(&sequence_bits, "sequenceBits")?,
        )
        .order(order)
        .signed(signed)
        .build()
        .or_throw()?;
    register(layout)
}

/// The fields and limits of a registered layout, as a plain object.
#[wasm_bindgen(js_name = layoutInfo)]
pub fn layout_info(layout_index: u32) -> Result<Object, JsValue> {
    let l = layout(layout_index)?;
    let info = Object::new();
    let order = match l.order() {
        FieldOrder::TimeShardSequence => "time_shard_sequence",
        FieldOrder::TimeSequenceShard => "time_sequence_shard",
    };
    let fields: [(&str, JsValue); 11] = [
        ("epochMs", number(l.epoch_ms()).into()),
        ("unitMs", number(l.unit_ms()).into()),
        ("timeBits", l.time_bits().into()),
        ("shardBits", l.shard_bits().into()),
        ("sequenceBits", l.sequence_bits().into()),
        ("order", order.into()),
        ("signed", l.signed().into()),
        ("maxShard", number(l.max_shard()).into()),
        ("maxSequence", number(l.max_sequence()).into()),
        ("maxId", l.max_id().into()),
        ("expiresAtMs", number(l.expires_at_ms()).into()),
    ];
    for (key, value) in fields {
        Reflect::set(&info, &key.into(), &value)?;
    }
    Ok(info)
}

/// Registers the `Float64Array(3)` that `decode` writes to.
#[wasm_bindgen(js_name = setDecodeBuffer)]
pub fn set_decode_buffer(buffer: Float64Array) {
    *DECODE_BUFFER.0.borrow_mut() = Some(buffer);
}

/// Decodes `id` into the decode buffer: timestamp ms, shard, sequence.
#[wasm_bindgen]
pub fn decode(layout_index: u32, id: &JsValue) -> Result<(), JsValue> {
    let parts = layout(layout_index)?
        .decode(u64_arg(id, "id", Arg::Id)?)
        .or_throw()?;
    {
        let buffer = DECODE_BUFFER.0.borrow();
        let buffer = buffer.as_ref().ok_or_else(|| {
            error(
                Class::Type,
                "INVALID_ARGUMENT",
                "setDecodeBuffer was not called",
            )
        })?;
        buffer.set_index(0, number(parts.timestamp_ms));
        buffer.set_index(1, number(parts.shard));
        buffer.set_index(2, number(parts.sequence));
        Ok(())
    }
}

/// Decodes many IDs (an array of decimal strings or bigints, or a `BigUint64Array`) into
/// three typed arrays of timestamp ms, shard and sequence: `[timestampMs, shard, sequence]`.
#[wasm_bindgen(js_name = decodeMany)]
pub fn decode_many(layout_index: u32, ids: &JsValue) -> Result<js_sys::Array, JsValue> {
    let l = layout(layout_index)?;
    let decode_one = |id: u64, out: &mut Vec<[f64; 3]>| -> Result<(), JsValue> {
        let p = l.decode(id).or_throw()?;
        out.push([number(p.timestamp_ms), number(p.shard), number(p.sequence)]);
        Ok(())
    };
    let mut rows = Vec::new();
    if let Some(typed) = ids.dyn_ref::<js_sys::BigUint64Array>() {
        for id in typed.to_vec() {
            decode_one(id, &mut rows)?;
        }
    } else if let Some(array) = ids.dyn_ref::<js_sys::Array>() {
        rows.reserve(array.length() as usize);
        for id in array.iter() {
            decode_one(u64_arg(&id, "ids[i]", Arg::Id)?, &mut rows)?;
        }
    } else {
        return Err(error(
            Class::Type,
            "INVALID_ID",
            "ids must be an array or a BigUint64Array",
        ));
    }
    let column =
        |i: usize| Float64Array::from(rows.iter().map(|r| r[i]).collect::<Vec<_>>().as_slice());
    Ok(js_sys::Array::of3(&column(0), &column(1), &column(2)))
}

/// Decodes `count` IDs written as decimal digits separated by commas (`ids.join(',')`): the
/// batch path for IDs from JSON. One string crosses into the module instead of one per ID,
/// which is most of the cost of decoding strings one by one.
#[wasm_bindgen(js_name = decodeManyText)]
pub fn decode_many_text(
    layout_index: u32,
    text: &str,
    count: u32,
) -> Result<js_sys::Array, JsValue> {
    let layout = layout(layout_index)?;
    let rows = count as usize;
    let mut columns = [
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
    ];
    for token in text.split(',') {
        let digits =
            !token.is_empty() && token.len() <= 20 && token.bytes().all(|b| b.is_ascii_digit());
        let id = match token.parse::<u64>() {
            Ok(id) if digits => id,
            _ => {
                return Err(error(
                    Class::Range,
                    "INVALID_ID",
                    "ids must be decimal integer strings in 0..2^64",
                ));
            }
        };
        let parts = layout.decode(id).or_throw()?;
        columns[0].push(number(parts.timestamp_ms));
        columns[1].push(number(parts.shard));
        columns[2].push(number(parts.sequence));
    }
    if columns[0].len() != rows {
        return Err(error(
            Class::Range,
            "INVALID_ID",
            "ids must be decimal integer strings in 0..2^64",
        ));
    }
    let [timestamps, shards, sequences] = columns;
    Ok(js_sys::Array::of3(
        &Float64Array::from(timestamps.as_slice()),
        &Float64Array::from(shards.as_slice()),
        &Float64Array::from(sequences.as_slice()),
    ))
}

/// `id` if it is an ID of the layout.
#[wasm_bindgen(js_name = validateId)]
pub fn validate_id(layout_index: u32, id: &JsValue) -> Result<u64, JsValue> {
    layout(layout_index)?
        .validate_id(u64_arg(id, "id", Arg::Id)?)
        .or_throw()
}

/// The ID for a time, a shard and a sequence.
#[wasm_bindgen]
pub fn compose(
    layout_index: u32,
    timestamp: &JsValue,
    shard: &JsValue,
    sequence: &JsValue,
) -> Result<u64, JsValue> {
    layout(layout_index)?
        .compose(
            u64_arg(timestamp, "timestamp", Arg::Timestamp)?,
            u64_arg(shard, "shard", Arg::Shard)?,
            u64_arg(sequence, "sequence", Arg::Sequence)?,
        )
        .or_throw()
}

/// The smallest ID of the time unit holding `timestamp`.
#[wasm_bindgen(js_name = minIdAt)]
pub fn min_id_at(layout_index: u32, timestamp: &JsValue) -> Result<u64, JsValue> {
    layout(layout_index)?
        .min_id_at(u64_arg(timestamp, "timestamp", Arg::Timestamp)?)
        .or_throw()
}

/// The largest ID of the time unit holding `timestamp`.
#[wasm_bindgen(js_name = maxIdAt)]
pub fn max_id_at(layout_index: u32, timestamp: &JsValue) -> Result<u64, JsValue> {
    layout(layout_index)?
        .max_id_at(u64_arg(timestamp, "timestamp", Arg::Timestamp)?)
        .or_throw()
}

/// `key % logicalShards`, checked against the layout.
#[wasm_bindgen(js_name = shardForKey)]
pub fn shard_for_key(
    layout_index: u32,
    key: &JsValue,
    logical_shards: &JsValue,
) -> Result<f64, JsValue> {
    layout(layout_index)?
        .shard_for_key(
            u64_arg(key, "key", Arg::Other)?,
            u64_arg(logical_shards, "logicalShards", Arg::LogicalShards)?,
        )
        .map(number)
        .or_throw()
}

/// TiDB's decimal scatter.
#[wasm_bindgen(js_name = scatterDecimal)]
pub fn scatter_decimal(layout_index: u32, id: &JsValue) -> Result<u64, JsValue> {
    layout(layout_index)?
        .scatter_decimal(u64_arg(id, "id", Arg::Id)?)
        .or_throw()
}

/// The inverse of `scatterDecimal`.
#[wasm_bindgen(js_name = gatherDecimal)]
pub fn gather_decimal(layout_index: u32, id: &JsValue) -> Result<u64, JsValue> {
    layout(layout_index)?
        .gather_decimal(u64_arg(id, "id", Arg::Id)?)
        .or_throw()
}

/// The bit-level scatter.
#[wasm_bindgen(js_name = scatterBits)]
pub fn scatter_bits(layout_index: u32, id: &JsValue) -> Result<u64, JsValue> {
    layout(layout_index)?
        .scatter_bits(u64_arg(id, "id", Arg::Id)?)
        .or_throw()
}

/// The inverse of `scatterBits`.
#[wasm_bindgen(js_name = gatherBits)]
pub fn gather_bits(layout_index: u32, id: &JsValue) -> Result<u64, JsValue> {
    layout(layout_index)?
        .gather_bits(u64_arg(id, "id", Arg::Id)?)
        .or_throw()
}
