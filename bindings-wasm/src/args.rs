//! Checked conversions of JS arguments, and JS errors with a stable `code`.

use js_sys::{Date, RangeError, Reflect, TypeError};
use wasm_bindgen::prelude::*;

/// The largest integer a `number` holds exactly: 2^53 - 1.
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// What an argument is: decides its error code and which JS types it takes.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    Id,
    Shard,
    Sequence,
    LogicalShards,
    Timestamp,
    LayoutField,
    Other,
}

impl Arg {
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
    fn type_code(self) -> &'static str {
        match self {
            Arg::Timestamp => "INVALID_ARGUMENT",
            other => other.code(false),
        }
    }
}

/// Which JavaScript error class a failure is.
#[derive(Clone, Copy)]
pub(crate) enum Class {
    Type,
    Range,
    Plain,
}

/// A JS error of `class` with `err.code = code`.
pub(crate) fn error(class: Class, code: &str, message: &str) -> JsValue {
    let err: JsValue = match class {
        Class::Type => TypeError::new(message).into(),
        Class::Range => RangeError::new(message).into(),
        Class::Plain => js_sys::Error::new(message).into(),
    };
    let _ = Reflect::set(&err, &"code".into(), &code.into());
    err
}

/// The core's error as a JS error: `RangeError` for bad input, `Error` for the generator's
/// state; `err.code` is [`shardid::Error::code`], and the error's fields are properties
/// (`err.retryAtMs`, `err.shard`, ...). The message is fixed per kind: formatting numbers
/// into it would pull Rust's formatting machinery into the module (half its size).
pub(crate) fn core_error(e: shardid::Error) -> JsValue {
    use shardid::Error as E;
    let (class, message, fields): (Class, &str, &[(&str, u64)]) = match e {
        E::InvalidLayout { .. } => (
            Class::Range,
            "the layout does not describe a usable ID space",
            &[],
        ),
        E::ShardOutOfRange { shard, max } => (
            Class::Range,
            "the shard does not fit the layout",
            &[("shard", shard), ("max", max)],
        ),
        E::SequenceOutOfRange { sequence, max } => (
            Class::Range,
            "the sequence does not fit the layout",
            &[("sequence", sequence), ("max", max)],
        ),
        E::InvalidShardCount { count, max } => (
            Class::Range,
            "the logical shard count is 0 or more than the shard field holds",
            &[("count", count), ("max", max)],
        ),
        E::InvalidId { id } => (Class::Range, "not an ID of this layout", &[("id", id)]),
        E::ScatterOverflow { id } => (
            Class::Range,
            "scattering the ID would leave the layout's range",
            &[("id", id)],
        ),
        E::TimestampBeforeEpoch {
            timestamp_ms,
            epoch_ms,
        } => (
            Class::Range,
            "the time is before the layout's epoch",
            &[("timestampMs", timestamp_ms), ("epochMs", epoch_ms)],
        ),
        E::TimestampPastExpiry {
            timestamp_ms,
            expires_at_ms,
        } => (
            Class::Range,
            "the time is past the layout's last",
            &[
                ("timestampMs", timestamp_ms),
                ("expiresAtMs", expires_at_ms),
            ],
        ),
        E::ClockMovedBackwards {
            behind_ms,
            tolerance_ms,
        } => (
            Class::Plain,
            "the clock is further behind the last ID than the generator tolerates",
            &[("behindMs", behind_ms), ("toleranceMs", tolerance_ms)],
        ),
        E::SequenceExhausted { retry_at_ms } => (
            Class::Plain,
            "the time unit's sequence is used up; retry at retryAtMs",
            &[("retryAtMs", retry_at_ms)],
        ),
        _ => (Class::Plain, "shardid error", &[]),
    };
    let err = error(class, e.code(), &[e.code(), ": ", message].concat());
    for (name, value) in fields {
        let _ = Reflect::set(&err, &(*name).into(), &JsValue::from(*value));
    }
    err
}

/// Converts a core result, raising its error.
pub(crate) trait OrThrow<T> {
    fn or_throw(self) -> Result<T, JsValue>;
}

impl<T> OrThrow<T> for Result<T, shardid::Error> {
    #[inline]
    fn or_throw(self) -> Result<T, JsValue> {
        self.map_err(core_error)
    }
}

fn range(arg: Arg, negative: bool, message: &str) -> JsValue {
    error(Class::Range, arg.code(negative), message)
}

/// A 64-bit unsigned integer argument: a `bigint` (checked, never wrapped), a safe-integer
/// `number`, for IDs a decimal string, for times a `Date`.
pub(crate) fn u64_arg(value: &JsValue, name: &str, arg: Arg) -> Result<u64, JsValue> {
    if value.is_bigint() {
        return u64::try_from(value.clone()).map_err(|_| {
            let negative = value.lt(&JsValue::from(0));
            let what = if negative {
                "is negative"
            } else {
                "does not fit in 64 bits"
            };
            range(arg, negative, &[name, " ", what].concat())
        });
    }
    if let Some(number) = value.as_f64() {
        #[allow(clippy::cast_precision_loss)] // 2^53 - 1 is exact in an f64
        let in_range = (0.0..=MAX_SAFE_INTEGER as f64).contains(&number);
        // In 0..2^53 an integer survives the round trip through u64 exactly, a fraction does
        // not: the comparison is meant to be exact.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            clippy::float_cmp
        )]
        let whole = in_range && (number as u64) as f64 == number;
        if whole {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
            return Ok(number as u64);
        }
        let message = if number < 0.0 {
            [name, " is negative"].concat()
        } else {
            [
                name,
                " is not a safe integer: pass a bigint or a decimal string",
            ]
            .concat()
        };
        return Err(range(arg, number < 0.0, &message));
    }
    if let (Arg::Id, Some(text)) = (arg, value.as_string()) {
        let digits =
            !text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit());
        return match text.parse::<u64>() {
            Ok(v) if digits => Ok(v),
            _ => Err(range(
                arg,
                text.starts_with('-'),
                &[name, " must be a decimal integer string in 0..2^64"].concat(),
            )),
        };
    }
    if let (Arg::Timestamp, Some(date)) = (arg, value.dyn_ref::<Date>()) {
        let ms = date.get_time();
        if ms.is_nan() {
            return Err(error(
                Class::Range,
                "INVALID_ARGUMENT",
                &[name, " is an invalid Date"].concat(),
            ));
        }
        if ms < 0.0 {
            return Err(range(arg, true, &[name, " is before 1970"].concat()));
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // a Date holds whole ms
        return Ok(ms as u64);
    }
    let expected = match arg {
        Arg::Id => "a bigint, a decimal string or a safe integer",
        Arg::Timestamp => "a Date, or Unix milliseconds as a number or bigint",
        _ => "a bigint or a safe integer",
    };
    let got = value.js_typeof().as_string().unwrap_or_default();
    Err(error(
        Class::Type,
        arg.type_code(),
        &[name, " must be ", expected, ", not ", &got].concat(),
    ))
}
