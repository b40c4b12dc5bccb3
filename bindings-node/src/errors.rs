//! JavaScript errors with a stable `err.code`: the core's error kinds, the same codes as the
//! WASM module, the C status names and the Python exception classes.

use napi::{Env, Error, Status};

/// Which JavaScript error class a failure is thrown as.
#[derive(Clone, Copy)]
pub(crate) enum Class {
    /// A value of the wrong type (`TypeError`).
    Type,
    /// A value out of range (`RangeError`): bad input.
    Range,
    /// The generator's state (`Error`): the clock moved back, the sequence ran out.
    Plain,
}

/// Throws `class` with `code` and `message`, and returns the error napi-rs expects for a
/// pending exception.
pub(crate) fn throw(env: &Env, class: Class, code: &str, message: &str) -> Error {
    let thrown = match class {
        Class::Type => env.throw_type_error(message, Some(code)),
        Class::Range => env.throw_range_error(message, Some(code)),
        Class::Plain => env.throw_error(message, Some(code)),
    };
    match thrown {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(e) => e,
    }
}

/// The core's error as a JS error: a `RangeError` for bad input, an `Error` for the
/// generator's state; `err.code` is [`shardid::Error::code`].
pub(crate) fn core_error(env: &Env, e: shardid::Error) -> Error {
    use shardid::Error as E;
    let class = match e {
        E::ClockMovedBackwards { .. } | E::SequenceExhausted { .. } => Class::Plain,
        _ => Class::Range,
    };
    throw(env, class, e.code(), &e.to_string())
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
