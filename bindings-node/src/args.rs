//! Checked conversions of JS arguments to 64-bit integers: `bigint`, decimal strings, safe
//! integer `number`s, and for times `Date`s. Nothing is ever rounded or wrapped.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, ValueType, sys};

pub(crate) use shardid::args::Arg;
use shardid::args::Problem;

use crate::errors::{Class, Field, invalid_argument, throw_object};

/// The error for `problem` with the argument `name`, whose value is `given`: the kind the
/// core's rules give, with the fields `argument` and `reason` (and for an ID, `id`: the value as
/// given), and the message `<name> <reason>`. A value of the wrong type is a `TypeError`, any
/// other a `RangeError`.
fn refuse(
    env: &Env,
    arg: Arg,
    problem: Problem,
    name: &str,
    given: sys::napi_value,
) -> napi::Error {
    refuse_because(env, arg, problem, name, problem.reason(arg), given)
}

/// `INVALID_ID` for an ID of a batch given as text that did not parse, with the text as `id`.
pub(crate) fn unparsed_id(env: &Env, name: &str, text: &str) -> napi::Error {
    let reason = Problem::NotDecimal.reason(Arg::Id);
    let fields = [
        ("argument", Field::Text(name)),
        ("reason", Field::Text(reason)),
        ("id", Field::Text(text)),
    ];
    let message = format!("{name} {reason}");
    throw_object(
        env,
        Class::Range,
        Arg::Id.kind(Problem::NotDecimal).code(),
        &message,
        &fields,
    )
}

fn refuse_because(
    env: &Env,
    arg: Arg,
    problem: Problem,
    name: &str,
    reason: &str,
    given: sys::napi_value,
) -> napi::Error {
    let class = if problem == Problem::WrongType {
        Class::Type
    } else {
        Class::Range
    };
    let mut fields = vec![
        ("argument", Field::Text(name)),
        ("reason", Field::Text(reason)),
    ];
    if arg == Arg::Id {
        fields.push(("id", Field::Value(given)));
    }
    let message = format!("{name} {reason}");
    throw_object(env, class, arg.kind(problem).code(), &message, &fields)
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
    let problem = if signed < 0 {
        Problem::Negative
    } else {
        Problem::TooLarge
    };
    Err(refuse(env, arg, problem, name, value))
}

/// A `number` that is a non-negative safe integer (the core's rule, `shardid::js`).
fn from_number(env: &Env, value: sys::napi_value, name: &str, arg: Arg) -> napi::Result<u64> {
    let mut number = 0f64;
    // SAFETY: `value` is a live number of this env.
    unsafe { sys::napi_get_value_double(env.raw(), value, &raw mut number) };
    shardid::js::u64_from_number(number).map_err(|problem| refuse(env, arg, problem, name, value))
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
    shardid::parse_decimal(text).ok_or_else(|| refuse(env, arg, Problem::NotDecimal, name, value))
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
        ValueType::String if arg.accepts_text() => from_string(env, raw, name, arg),
        ValueType::Object if arg.accepts_date() => from_date(env, raw, name, arg),
        other => Err(wrong_type(env, arg, name, type_name(other), raw)),
    }
}

/// The error for a value of the wrong type, saying what the argument takes.
fn wrong_type(env: &Env, arg: Arg, name: &str, got: &str, given: sys::napi_value) -> napi::Error {
    let expected = if arg.accepts_text() {
        "a bigint, a decimal string or a safe integer"
    } else if arg.accepts_date() {
        "a Date, or Unix milliseconds as a number or bigint"
    } else {
        "a bigint or a safe integer"
    };
    let reason = format!("must be {expected}, not {got}");
    refuse_because(env, arg, Problem::WrongType, name, &reason, given)
}

fn from_date(env: &Env, value: sys::napi_value, name: &str, arg: Arg) -> napi::Result<u64> {
    let mut is_date = false;
    // SAFETY: `value` is a live object of this env.
    unsafe { sys::napi_is_date(env.raw(), value, &raw mut is_date) };
    if !is_date {
        return Err(wrong_type(env, arg, name, "an object", value));
    }
    let mut ms = 0f64;
    // SAFETY: `value` is a Date of this env.
    unsafe { sys::napi_get_date_value(env.raw(), value, &raw mut ms) };
    if ms.is_nan() {
        return Err(refuse(env, arg, Problem::InvalidDate, name, value));
    }
    // A Date holds whole ms in ±8.64e15: always a safe integer.
    shardid::js::u64_from_number(ms).map_err(|problem| refuse(env, arg, problem, name, value))
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

/// What makes a generator, and `next_id()`'s DDL: the layout by its index, the `shard` and the
/// generator options, checked in that order (a constructor's first bad argument is the one
/// named).
pub(crate) fn generator_args(
    env: &Env,
    layout_index: u32,
    shard: &Unknown<'_>,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
) -> napi::Result<(shardid::Layout, u64, shardid::Options)> {
    let layout = crate::layout::layout(env, layout_index)?;
    let shard = u64_arg(env, shard, "shard", Arg::Shard)?;
    let options = options_arg(env, backwards_tolerance_ms, max_borrow_units)?;
    Ok((layout, shard, options))
}

/// The memory of a typed array argument whose elements are `kind`
/// (`sys::TypedarrayType::biguint64_array`, ...): `(data, length)`, `data` possibly null when
/// the array is empty; `None` for any other value. The memory is the caller's array's, alive
/// for the synchronous call reading it (no JavaScript runs meanwhile).
pub(crate) fn typed_array(
    env: &Env,
    value: &Unknown<'_>,
    kind: sys::napi_typedarray_type,
) -> Option<(*mut std::ffi::c_void, usize)> {
    let mut is_typed = false;
    // SAFETY: `value` is a live value of this env.
    unsafe { sys::napi_is_typedarray(env.raw(), value.raw(), &raw mut is_typed) };
    if !is_typed {
        return None;
    }
    let (mut found, mut length, mut data) = (0, 0usize, std::ptr::null_mut());
    // SAFETY: `value` is a typed array of this env; the out-pointers are valid.
    unsafe {
        sys::napi_get_typedarray_info(
            env.raw(),
            value.raw(),
            &raw mut found,
            &raw mut length,
            &raw mut data,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
    }
    (found == kind).then_some((data, length))
}

/// A count of IDs to make (`n`).
pub(crate) fn count_arg(env: &Env, n: &Unknown<'_>) -> napi::Result<usize> {
    let n = u64_arg(env, n, "n", Arg::Other)?;
    shardid::args::check_batch_count(n)
        .map_err(|reason| invalid_argument(env, Class::Range, "n", reason))
}

/// A zeroed buffer for the count `n` ([`count_arg`]); a failed allocation is a `RangeError`
/// (`INVALID_ARGUMENT`), never an abort of Node.
pub(crate) fn ids_for(env: &Env, n: &Unknown<'_>) -> napi::Result<Vec<u64>> {
    let n = count_arg(env, n)?;
    let mut ids = Vec::new();
    ids.try_reserve_exact(n).map_err(|_| {
        invalid_argument(
            env,
            Class::Range,
            "n",
            &format!("is too many IDs to allocate now ({} bytes)", n * 8),
        )
    })?;
    ids.resize(n, 0);
    Ok(ids)
}

/// A JavaScript string as UTF-8, read as UTF-16 so that a lone surrogate is refused
/// (`INVALID_ARGUMENT`, the core's [`shardid::dictionary::Invalid::Utf8`]) rather than replaced
/// by U+FFFD, which would make two strings one; a value of another type is a `TypeError`.
pub(crate) fn text(env: &Env, value: &Unknown<'_>, name: &str) -> napi::Result<String> {
    let raw = value.raw();
    let kind = type_of(env, raw);
    if kind != ValueType::String {
        let reason = format!("must be a string, not {}", type_name(kind));
        return Err(invalid_argument(env, Class::Type, name, &reason));
    }
    // Short strings in one call, into the stack.
    let mut short = [0u16; 256];
    let mut written = 0usize;
    // SAFETY: `raw` is a live string of this env; `short` holds `short.len()` units.
    unsafe {
        sys::napi_get_value_string_utf16(
            env.raw(),
            raw,
            short.as_mut_ptr(),
            short.len(),
            &raw mut written,
        )
    };
    let decoded = if written + 1 < short.len() {
        String::from_utf16(&short[..written])
    } else {
        let mut len = 0usize;
        // SAFETY: as above; a null buffer asks for the length.
        unsafe {
            sys::napi_get_value_string_utf16(env.raw(), raw, std::ptr::null_mut(), 0, &raw mut len)
        };
        let mut long = vec![0u16; len + 1];
        // SAFETY: `long` holds `len + 1` units (the string and a terminator).
        unsafe {
            sys::napi_get_value_string_utf16(
                env.raw(),
                raw,
                long.as_mut_ptr(),
                long.len(),
                &raw mut written,
            )
        };
        String::from_utf16(&long[..written])
    };
    decoded.map_err(|_| {
        invalid_argument(
            env,
            Class::Range,
            name,
            shardid::dictionary::Invalid::Utf8.reason(),
        )
    })
}
