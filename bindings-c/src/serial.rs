//! Business serial numbers in C: a format in an IANA time zone, serials rendered at a given
//! time and parsed back (the core's `serial` module). No database here: C programs take the
//! numbers with libpq from the PostgreSQL functions (`take_serial_segment`, `next_serial`).

use std::ffi::c_char;

use shardid::serial::{SerialError, SerialFormat};

use crate::status::{arg, boundary, drop_box, out, shardid_status, str_arg, text_out};

/// A serial format in a time zone, parsed and checked once (`shardid_serial_format_new`).
/// Immutable and thread-safe; free it with `shardid_serial_format_free`.
pub struct shardid_serial_format {
    inner: SerialFormat,
}

/// A serial parsed back: its number, its period (`"2026-11-25"`, `"2026-11"`, `"2026"`, or
/// `""` for a format that never resets, NUL-terminated) and the fields it shows (-1 for a field
/// it does not show).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct shardid_parsed_serial {
    /// The number.
    pub number: u64,
    /// The period it counts in, NUL-terminated.
    pub period: [c_char; 11],
    /// The year shown (`{yy}` read as 2000-2099), or -1.
    pub year: i32,
    /// The month shown, or -1.
    pub month: i8,
    /// The day shown, or -1.
    pub day: i8,
    /// The hour shown, or -1.
    pub hour: i8,
    /// The ISO week shown, or -1.
    pub week: i8,
}

impl From<&SerialError> for shardid_status {
    fn from(e: &SerialError) -> Self {
        Self::of(e.kind())
    }
}

/// Parses `format` (e.g. `"ORD-{yyyy}{MM}{dd}-{seq:6}"`) in the IANA zone `zone` (e.g.
/// `"Asia/Shanghai"`) and writes the format to `*out_format`; free it with
/// `shardid_serial_format_free`.
///
/// `SHARDID_ERR_INVALID_SERIAL_FORMAT` for a format that cannot be parsed or could print one
/// serial twice, `SHARDID_ERR_UNKNOWN_TIME_ZONE`, `SHARDID_ERR_INVALID_ARGUMENT` for text that
/// is not UTF-8. (The other bindings also give the problem's position and reason.)
///
/// # Safety
/// `format` and `zone` are null or NUL-terminated strings; `out_format` is null or valid for
/// writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_serial_format_new(
    format: *const c_char,
    zone: *const c_char,
    out_format: *mut *mut shardid_serial_format,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees every pointer is null or valid.
        let (out_format, format, zone) =
            unsafe { (out(out_format)?, str_arg(format)?, str_arg(zone)?) };
        let inner = SerialFormat::new(format, zone).map_err(|e| shardid_status::from(&e))?;
        out_format.write(Box::into_raw(Box::new(shardid_serial_format { inner })));
        Ok(())
    })
}

/// Frees a format. `NULL` is ignored.
///
/// # Safety
/// `format` is null or a pointer returned by `shardid_serial_format_new` that has not been
/// freed, and no other thread is using it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_serial_format_free(format: *mut shardid_serial_format) {
    // SAFETY: forwarded from this function's contract.
    let _ = boundary(|| unsafe { drop_box(format) });
}

/// The length in bytes of every serial of `format` (without the NUL): a buffer of this plus 1
/// holds any of them (at most 64 + 1).
///
/// # Safety
/// `format` is null or a live format; `out_len` is null or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_serial_format_len(
    format: *const shardid_serial_format,
    out_len: *mut usize,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees both pointers are null or valid.
        let (out_len, format) = unsafe { (out(out_len)?, arg(format)?) };
        out_len.write(format.inner.len_bytes());
        Ok(())
    })
}

/// Writes the serial of `number` issued at `unix_ms` into `buf` (`buf_len` bytes, NUL
/// included) and its length (without the NUL) into `*out_len`.
///
/// `SHARDID_ERR_SERIAL_OVERFLOW` for a number past the width, `SHARDID_ERR_INVALID_SERIAL`
/// for 0, `SHARDID_ERR_INVALID_ARGUMENT` for a time outside 1970-01-02..9999-12-30 (or
/// 2000..2099 for a format showing only `{yy}`) or a buffer too small (nothing written).
///
/// # Safety
/// `format` is null or a live format; `buf` is null or valid for writing `buf_len` bytes;
/// `out_len` is null or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_serial_render(
    format: *const shardid_serial_format,
    number: u64,
    unix_ms: u64,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees the pointers are null or valid.
        let (out_len, format, buf) =
            unsafe { (out(out_len)?, arg(format)?, text_out(buf, buf_len)?) };
        let serial = format
            .inner
            .render(number, unix_ms)
            .map_err(|e| shardid_status::from(&e))?;
        buf.write(&serial, out_len)
    })
}

/// Parses `serial` (NUL-terminated UTF-8) back into `*out_parsed`: its number, period and
/// fields, with the literal text, every field, the date (a real day, an hour that happens in
/// the zone, the ISO week of that date) and the check digit verified.
///
/// `SHARDID_ERR_INVALID_SERIAL` for text this format cannot have made.
///
/// # Safety
/// `format` is null or a live format; `serial` is null or a NUL-terminated string;
/// `out_parsed` is null or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shardid_serial_parse(
    format: *const shardid_serial_format,
    serial: *const c_char,
    out_parsed: *mut shardid_parsed_serial,
) -> shardid_status {
    boundary(|| {
        // SAFETY: the caller guarantees the pointers are null or valid.
        let (out_parsed, format, serial) = unsafe {
            (
                out(out_parsed)?,
                arg(format)?,
                str_arg(serial).map_err(|s| {
                    if s == shardid_status::SHARDID_ERR_INVALID_ARGUMENT {
                        shardid_status::SHARDID_ERR_INVALID_SERIAL // not UTF-8: no serial
                    } else {
                        s
                    }
                })?,
            )
        };
        let p = format
            .inner
            .parse(serial)
            .map_err(|e| shardid_status::from(&e))?;
        let mut period = [0 as c_char; 11];
        for (slot, byte) in period.iter_mut().zip(p.period.to_string().bytes()) {
            *slot = c_char::from_ne_bytes([byte]);
        }
        let small = |v: Option<u8>| v.map_or(-1, |v| i8::try_from(v).unwrap_or(-1));
        out_parsed.write(shardid_parsed_serial {
            number: p.number,
            period,
            year: p.year.unwrap_or(-1),
            month: small(p.month),
            day: small(p.day),
            hour: small(p.hour),
            week: small(p.week),
        });
        Ok(())
    })
}
