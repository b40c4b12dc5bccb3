//! JavaScript errors for the core's error kinds ([`shardid::ErrorKind`]): `err.code` is the
//! kind's code, its fields are properties in camelCase (numbers as `bigint`, texts as strings)
//! and its message is the kind's template filled in, exactly as the WebAssembly module's
//! `errors.js` builds them, so `instanceof ShardIdError` and the same `catch` code work on both.

use napi::{Env, Error, Status, sys};
use shardid::{CamelCase, ErrorKind, FieldValue};

/// Which JavaScript error class a failure is thrown as.
#[derive(Clone, Copy)]
pub(crate) enum Class {
    /// A value of the wrong type (`TypeError`).
    Type,
    /// A value out of range (`RangeError`): bad input.
    Range,
    /// Anything else (`Error`): the generator's state, a lease.
    Plain,
}

impl Class {
    /// The class the kind's category is thrown as.
    fn of(kind: ErrorKind) -> Self {
        match kind.category() {
            shardid::Category::Input => Class::Range,
            _ => Class::Plain,
        }
    }
}

/// A field value of an error, as JavaScript gets it.
pub(crate) enum Field<'a> {
    /// A `bigint`.
    Int(u64),
    /// A string.
    Text(&'a str),
    /// A JavaScript value as the caller gave it (an ID that was refused).
    Value(sys::napi_value),
}

/// Makes the error object and throws it; returns the error napi-rs expects for a pending
/// exception.
pub(crate) fn throw_object(
    env: &Env,
    class: Class,
    code: &str,
    message: &str,
    fields: &[(&str, Field<'_>)],
) -> Error {
    let build = || -> Option<sys::napi_value> {
        let raw = env.raw();
        let string = |text: &str| {
            let mut value = std::ptr::null_mut();
            let len = isize::try_from(text.len()).ok()?;
            // SAFETY: `text` is valid UTF-8 of `len` bytes; `value` is a valid out-pointer.
            let status = unsafe {
                sys::napi_create_string_utf8(raw, text.as_ptr().cast(), len, &raw mut value)
            };
            (status == sys::Status::napi_ok).then_some(value)
        };
        let (code_value, message_value) = (string(code)?, string(message)?);
        let mut error = std::ptr::null_mut();
        let create = match class {
            Class::Type => sys::napi_create_type_error,
            Class::Range => sys::napi_create_range_error,
            Class::Plain => sys::napi_create_error,
        };
        // SAFETY: both values are live strings of this env; `error` is a valid out-pointer.
        if unsafe { create(raw, code_value, message_value, &raw mut error) } != sys::Status::napi_ok
        {
            return None;
        }
        for (name, field) in fields {
            let value = match field {
                Field::Text(text) => string(text)?,
                Field::Value(value) => *value,
                Field::Int(v) => {
                    let mut value = std::ptr::null_mut();
                    // SAFETY: `value` is a valid out-pointer.
                    unsafe { sys::napi_create_bigint_uint64(raw, *v, &raw mut value) };
                    value
                }
            };
            let key = string(&CamelCase(name).to_string())?;
            // SAFETY: `error` is a live object of this env, `key` and `value` live values.
            unsafe { sys::napi_set_property(raw, error, key, value) };
        }
        // SAFETY: `error` is a live value of this env.
        unsafe { sys::napi_throw(raw, error) };
        Some(error)
    };
    match build() {
        Some(_) => Error::from_status(Status::PendingException),
        None => Error::new(Status::GenericFailure, format!("{code}: {message}")),
    }
}

/// Throws an error of `kind` with its `fields` (in the kind's order), as the class its
/// category gives; the message is the kind's template filled in.
pub(crate) fn throw_kind(env: &Env, kind: ErrorKind, fields: &[(&str, Field<'_>)]) -> Error {
    throw_kind_as(env, Class::of(kind), kind, fields)
}

/// As [`throw_kind`], thrown as `class` (a `TypeError` for a value of the wrong type).
pub(crate) fn throw_kind_as(
    env: &Env,
    class: Class,
    kind: ErrorKind,
    fields: &[(&str, Field<'_>)],
) -> Error {
    let mut message = String::new();
    let _ = kind.render(&mut message, |name, out| {
        match fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v) {
            Some(Field::Int(v)) => out.push_str(&v.to_string()),
            Some(Field::Text(t)) => out.push_str(t),
            Some(Field::Value(_)) | None => {}
        }
        Ok(())
    });
    throw_object(env, class, kind.code(), &message, fields)
}

/// `INVALID_ARGUMENT`: `argument` (its JavaScript name) and what is wrong with it.
pub(crate) fn invalid_argument(env: &Env, class: Class, argument: &str, reason: &str) -> Error {
    throw_kind_as(
        env,
        class,
        ErrorKind::InvalidArgument,
        &[
            ("argument", Field::Text(argument)),
            ("reason", Field::Text(reason)),
        ],
    )
}

/// Throws `class` with `code` and a message of the binding's own, for an argument refused
/// before the core could be asked (a negative shard, a string where a number belongs); an
/// ID's `id` field is set by the caller's message only.
pub(crate) fn throw(env: &Env, class: Class, code: &str, message: &str) -> Error {
    throw_object(env, class, code, message, &[])
}

/// The core's error as a JS error of its kind.
pub(crate) fn core_error(env: &Env, e: shardid::Error) -> Error {
    let fields: Vec<(&str, Field<'_>)> = e
        .fields()
        .map(|(name, value)| {
            let value = match value {
                FieldValue::Int(v) => Field::Int(v),
                FieldValue::Text(t) => Field::Text(t),
            };
            (name, value)
        })
        .collect();
    throw_object(env, Class::of(e.kind()), e.code(), &e.to_string(), &fields)
}

/// The panic boundary every export's body runs inside: a Rust panic (a bug: every input is
/// checked) becomes a thrown `Error` with `code` `PANIC` instead of aborting Node, which is
/// what an unwind reaching napi's C callback would do. napi-rs's own `catch_unwind` option
/// throws a `GenericFailure` with the panic's text; this keeps the code every binding uses.
///
/// `AssertUnwindSafe`: after a caught panic nothing the body touched is used as if it had
/// finished; the core's shared state is atomics and poison-tolerant mutexes.
#[inline]
pub(crate) fn guard<T>(env: &Env, body: impl FnOnce() -> napi::Result<T>) -> napi::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(_) => Err(throw_kind(env, ErrorKind::Panic, &[])),
    }
}

/// Converts a core result, throwing its error.
pub(crate) trait OrThrow<T> {
    /// The value, or the core's error thrown as a JS error.
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T> OrThrow<T> for Result<T, shardid::Error> {
    #[inline]
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| core_error(env, e))
    }
}
