//! Checked conversions of JS arguments to 64-bit integers: `bigint`, decimal strings, safe
//! integer `number`s, and for times `Date`s. Nothing is ever rounded or wrapped.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, ValueType, sys};

use crate::errors::{Class, invalid_argument, throw};

/// What an argument is: decides its error code and whether strings are accepted.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// An ID (`INVALID_ID`); decimal strings accepted.
    Id,
    /// A shard (`SHARD_OUT_OF_RANGE`).
    Shard,
    /// A sequence (`SEQUENCE_OUT_OF_RANGE`).
    Sequence,
    /// A logical shard count (`INVALID_SHARD_COUNT`).
    LogicalShards,
    /// A time in Unix ms (`TIMESTAMP_BEFORE_EPOCH` / `TIMESTAMP_PAST_EXPIRY`); `Date`s accepted.
    Timestamp,
    /// A field of a custom layout (`INVALID_LAYOUT`).
    LayoutField,
    /// Anything else (`INVALID_ARGUMENT`).
    Other,
}

impl Arg {
    /// The code for a value of the right type but out of range.
    fn code(self, negative: bool) -> &'static str {
        match self {
            Arg::Id => "INVALID_ID",
            Arg::Shard => "SHARD_OUT_OF_RANGE",
            Arg::Sequence => "SEQUENCE_OUT_OF_RANGE",
            Arg::LogicalShards => "INVALID_SHARD_COUNT",
            Arg::Timestamp if negative => "TIMESTAMP_BEFORE_EPOCH",
            Arg::Timestamp => "TIMESTAMP_PAST_EXPIRY",
            Arg::LayoutField => "INVALID_LAYOUT",
            Arg::Other => "INVALID_ARGUMENT",
        }
    }

    /// The code for a value of the wrong type.
    fn type_code(self) -> &'static str {
        match self {
            Arg::Timestamp => "INVALID_ARGUMENT",
            other => other.code(false),
        }
    }
}

fn range(env: &Env, arg: Arg, negative: bool, message: &str) -> napi::Error {
    throw(env, Class::Range, arg.code(negative), message)
}

/// A `bigint` in `0..2^64`, read without allocating.
fn from_bigint(env: &Env, value: sys::napi_value, name: &str, arg: Arg) -> napi::Result<u64> {
    let mut result = 0u64;
    let mut lossless = false;
    // SAFETY: `value` is a live bigint of this env (checked by the caller's typeof).
    let status = unsafe {
        sys::napi_get_value_bigint_uint64(env.raw(), value, &raw mut result, &raw mut lossless)
    };
    if status == sys::Status::napi_ok && lossless {
        return Ok(result);
    }
    let mut signed = 0i64;
    let mut signed_lossless = false;
    // SAFETY: as above.
    unsafe {
        sys::napi_get_value_bigint_int64(
            env.raw(),
            value,
            &raw mut signed,
            &raw mut signed_lossless,
        )
    };
    let negative = signed < 0;
    let what = if negative {
        "is negative"
    } else {
        "does not fit in 64 bits"
    };
    Err(range(env, arg, negative, &format!("{name} {what}")))
}

/// A `number` that is a non-negative safe integer (the core's rule, `shardid::js`).
fn from_number(env: &Env, value: sys::napi_value, name: &str, arg: Arg) -> napi::Result<u64> {
    let mut number = 0f64;
    // SAFETY: `value` is a live number of this env.
    unsafe { sys::napi_get_value_double(env.raw(), value, &raw mut number) };
    shardid::js::u64_from_number(number).map_err(|problem| {
        let message = format!("{name} {}", problem.reason());
        range(env, arg, number < 0.0, &message)
    })
}

fn from_string(env: &Env, value: sys::napi_value, name: &str, arg: Arg) -> napi::Result<u64> {
    let mut buf = [0u8; 24];
    let mut len = 0usize;
    // SAFETY: `value` is a live string of this env; the buffer and its length are valid.
    unsafe {
        sys::napi_get_value_string_latin1(
            env.raw(),
            value,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &raw mut len,
        );
    }
    // A string longer than 20 digits was cut at 23 bytes and still fails the length check.
    let text = &buf[..len];
    match shardid::parse_decimal(text) {
        Some(v) => Ok(v),
        None => Err(range(
            env,
            arg,
            text.first() == Some(&b'-'),
            &format!("{name} must be a decimal integer string in 0..2^64"),
        )),
    }
}

/// The type of a JS value.
pub(crate) fn type_of(env: &Env, value: sys::napi_value) -> ValueType {
    let mut kind = 0;
    // SAFETY: `value` is a live value of this env.
    unsafe { sys::napi_typeof(env.raw(), value, &raw mut kind) };
    ValueType::from(kind)
}

/// A 64-bit unsigned integer argument.
#[inline]
pub(crate) fn u64_arg(env: &Env, value: &Unknown<'_>, name: &str, arg: Arg) -> napi::Result<u64> {
    let raw = value.raw();
    // The common case first, in one N-API call: a bigint that fits.
    let mut result = 0u64;
    let mut lossless = false;
    // SAFETY: `raw` is a live value of this env; for a non-bigint the call only reports
    // `napi_bigint_expected`.
    let status = unsafe {
        sys::napi_get_value_bigint_uint64(env.raw(), raw, &raw mut result, &raw mut lossless)
    };
    if status == sys::Status::napi_ok && lossless {
        return Ok(result);
    }
    match type_of(env, raw) {
        ValueType::BigInt => from_bigint(env, raw, name, arg),
        ValueType::Number => from_number(env, raw, name, arg),
        ValueType::String if matches!(arg, Arg::Id) => from_string(env, raw, name, arg),
        ValueType::Object if matches!(arg, Arg::Timestamp) => from_date(env, raw, name),
        other => {
            let expected = match arg {
                Arg::Id => "a bigint, a decimal string or a safe integer",
                Arg::Timestamp => "a Date, or Unix milliseconds as a number or bigint",
                _ => "a bigint or a safe integer",
            };
            Err(throw(
                env,
                Class::Type,
                arg.type_code(),
                &format!("{name} must be {expected}, not {}", type_name(other)),
            ))
        }
    }
}

fn from_date(env: &Env, value: sys::napi_value, name: &str) -> napi::Result<u64> {
    let mut is_date = false;
    // SAFETY: `value` is a live object of this env.
    unsafe { sys::napi_is_date(env.raw(), value, &raw mut is_date) };
    if !is_date {
        return Err(invalid_argument(
            env,
            Class::Type,
            name,
            "must be a Date, or Unix milliseconds as a number or bigint",
        ));
    }
    let mut ms = 0f64;
    // SAFETY: `value` is a Date of this env.
    unsafe { sys::napi_get_date_value(env.raw(), value, &raw mut ms) };
    if ms.is_nan() {
        return Err(invalid_argument(
            env,
            Class::Range,
            name,
            "is an invalid Date",
        ));
    }
    if ms < 0.0 {
        return Err(range(
            env,
            Arg::Timestamp,
            true,
            &format!("{name} is before 1970"),
        ));
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    // a Date holds whole ms in ±8.64e15
    Ok(ms as u64)
}

fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Symbol => "a symbol",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::BigInt => "a bigint",
        _ => "another type",
    }
}

/// The generator options every constructor takes (`undefined`: the default).
pub(crate) fn options_arg(
    env: &Env,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
) -> napi::Result<shardid::Options> {
    let mut options = shardid::Options::new();
    if let Some(ms) = backwards_tolerance_ms {
        options =
            options.backwards_tolerance_ms(u64_arg(env, &ms, "backwardsToleranceMs", Arg::Other)?);
    }
    if let Some(units) = max_borrow_units {
        options = options.max_borrow_units(u64_arg(env, &units, "maxBorrowUnits", Arg::Other)?);
    }
    Ok(options)
}
