//! Business serial numbers: the core's formats (`shardid::serial::SerialFormat`) and the
//! allocator of a serial tag, for `segments.js` to drive with `pg`. The hot path is
//! synchronous; fetches and giving periods back are the JS side's, asynchronous.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue, Result};
use napi_derive::napi;
use shardid::args::Arg;
use shardid::segment::Segment;
use shardid::serial::{
    Blocked, FieldRef, Retired, SerialAllocator, SerialError, SerialFillError, SerialFormat,
    VolumeHiding,
};
use shardid::sql::{Placeholders, Segments};

use crate::args::u64_arg;
use crate::errors::{Class, Field, guard, invalid_argument, throw_object};
use crate::slots::{Slots, full, own, owned};
use napi::bindgen_prelude::External;

/// The JS error of a serial error.
#[cold]
#[inline(never)]
pub(crate) fn serial_error(env: &Env, e: &SerialError) -> napi::Error {
    let fields: Vec<(&str, Field<'_>)> = e
        .fields()
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                FieldRef::Int(v) => Field::Int(v),
                FieldRef::Text(t) => Field::Text(t),
            };
            (name, value)
        })
        .collect();
    let class = match e.kind().category() {
        shardid::Category::Input => Class::Range,
        _ => Class::Plain,
    };
    throw_object(env, class, e.kind().code(), &e.to_string(), &fields)
}

/// A format in the table: equal formats (text and zone) share an index.
pub(crate) struct FormatEntry(SerialFormat);

impl PartialEq for FormatEntry {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str() && self.0.zone() == other.0.zone()
    }
}

static FORMATS: Slots<FormatEntry> = Slots::new();

/// An allocator, owned by its JS `Serials` (an `External`: `slots::own`), with the periods it
/// retired that the JS side has not given back yet.
pub(crate) struct SerialsEntry {
    /// Shared with the core's list of live objects, which exporters read (weakly).
    allocator: Arc<SerialAllocator>,
    retired: Mutex<Vec<Retired>>,
}

fn format_of(env: &Env, index: u32) -> Result<&'static SerialFormat> {
    FORMATS.get(index).map(|e| &e.0).ok_or_else(|| {
        invalid_argument(env, Class::Type, "format", "is not a shardid SerialFormat")
    })
}

fn serials_of<'a>(env: &Env, index: &Unknown<'a>) -> Result<&'a SerialsEntry> {
    owned::<SerialsEntry>(env, index)
        .ok_or_else(|| invalid_argument(env, Class::Type, "serials", "is not a shardid Serials"))
}

/// Why a format is refused when its table is full (equal formats share one entry).
const FULL: &str = "is one too many: a process holds 4,096 distinct formats";

/// A format's index (equal formats share one); throws `INVALID_SERIAL_FORMAT` or
/// `UNKNOWN_TIME_ZONE`.
#[napi]
pub fn serial_format_new(env: &Env, format: String, zone: String) -> Result<u32> {
    guard(env, || {
        let parsed = SerialFormat::new(&format, &zone).map_err(|e| serial_error(env, &e))?;
        FORMATS
            .index_of(FormatEntry(parsed))
            .ok_or_else(|| full(env, "format", FULL))
    })
}

/// What a format is, for the JS class.
#[napi(object)]
pub struct SerialFormatInfo {
    pub format: String,
    pub canonical: String,
    pub shape: String,
    pub zone: String,
    pub reset: String,
    pub width: u32,
    pub max_number: String,
    pub length: u32,
    /// `create_serial`'s pieces.
    pub pieces: Vec<String>,
}

/// The properties of a format.
#[napi]
pub fn serial_format_info(env: &Env, index: u32) -> Result<SerialFormatInfo> {
    guard(env, || {
        let f = format_of(env, index)?;
        let r = f.registration();
        Ok(SerialFormatInfo {
            format: f.as_str().into(),
            canonical: r.canonical,
            shape: r.shape,
            zone: f.zone().into(),
            reset: r.reset.into(),
            width: u32::from(f.width()),
            max_number: f.max_number().to_string(),
            length: u32::try_from(f.len_chars()).unwrap_or(u32::MAX),
            pieces: r.pieces,
        })
    })
}

/// The serial of `number` at `unixMs`.
#[napi]
pub fn serial_render(
    env: &Env,
    index: u32,
    number: Unknown<'_>,
    unix_ms: Unknown<'_>,
) -> Result<String> {
    guard(env, || {
        let f = format_of(env, index)?;
        let number = u64_arg(env, &number, "number", Arg::Other)?;
        let ms = u64_arg(env, &unix_ms, "unixMs", Arg::Other)?;
        f.render(number, ms)
            .map(|s| s.to_string())
            .map_err(|e| serial_error(env, &e))
    })
}

/// The period `unixMs` falls in.
#[napi]
pub fn serial_period_at(env: &Env, index: u32, unix_ms: Unknown<'_>) -> Result<String> {
    guard(env, || {
        let f = format_of(env, index)?;
        let ms = u64_arg(env, &unix_ms, "unixMs", Arg::Other)?;
        f.period_at(ms)
            .map(|p| p.to_string())
            .map_err(|e| serial_error(env, &e))
    })
}

/// Registers this module instance's parse buffer, a `Float64Array` of 8, unless it has one
/// (see `instance.rs`); returns the one registered. `serialParseInto` writes a parsed serial
/// there (the number's high and low 32 bits, then year, month, day, hour, week, -1 for a field
/// not shown), and JavaScript makes the object: one N-API call, where an object of 7
/// properties made here took 7 more.
#[napi(ts_args_type = "buffer: Float64Array", ts_return_type = "Float64Array")]
pub fn set_serial_buffer<'a>(env: &'a Env, buffer: Unknown<'_>) -> Result<Unknown<'a>> {
    guard(env, || {
        crate::instance::register(env, crate::instance::Buffer::Parsed, &buffer)
    })
}

/// Parses a serial of a format (index) into the parse buffer; throws `INVALID_SERIAL`.
#[napi(ts_args_type = "index: number, serial: string")]
pub fn serial_parse_into(env: &Env, index: u32, serial: Unknown<'_>) -> Result<()> {
    guard(env, || {
        let format = format_of(env, index)?;
        // Into a buffer on the stack: a serial is at most 64 bytes, and most calls are
        // serials. A longer string is read whole, for the error's length.
        let mut buf = [0u8; 80];
        let mut len = 0usize;
        // SAFETY: `serial` is a live value of this env; the buffer and its length are valid
        // (napi writes at most `buf.len() - 1` bytes and a NUL).
        let status = unsafe {
            napi::sys::napi_get_value_string_utf8(
                env.raw(),
                serial.raw(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &raw mut len,
            )
        };
        if status != napi::sys::Status::napi_ok {
            return Err(invalid_argument(
                env,
                Class::Type,
                "serial",
                "must be a string",
            ));
        }
        let mut long = Vec::new();
        let text = if len + 1 < buf.len() {
            &buf[..len]
        } else {
            // SAFETY: as above; a null buffer asks for the length only.
            unsafe {
                napi::sys::napi_get_value_string_utf8(
                    env.raw(),
                    serial.raw(),
                    std::ptr::null_mut(),
                    0,
                    &raw mut len,
                );
            }
            long.resize(len + 1, 0);
            // SAFETY: as above, into a buffer of `len + 1` bytes.
            unsafe {
                napi::sys::napi_get_value_string_utf8(
                    env.raw(),
                    serial.raw(),
                    long.as_mut_ptr().cast(),
                    long.len(),
                    &raw mut len,
                );
            }
            &long[..len]
        };
        // napi writes UTF-8 (a lone surrogate as U+FFFD): never invalid here.
        let text = std::str::from_utf8(text).unwrap_or("");
        let p = format.parse(text).map_err(|e| serial_error(env, &e))?;
        let (out, len) = crate::instance::buffer(env, crate::instance::Buffer::Parsed)
            .unwrap_or((std::ptr::null_mut(), 0));
        if out.is_null() || len < 7 {
            return Err(invalid_argument(
                env,
                Class::Type,
                "buffer",
                "was not registered (setSerialBuffer)",
            ));
        }
        let field = |v: Option<u32>| v.map_or(-1.0, f64::from);
        let values = [
            f64::from(u32::try_from(p.number >> 32).unwrap_or(u32::MAX)),
            f64::from(u32::try_from(p.number & 0xFFFF_FFFF).unwrap_or(u32::MAX)),
            p.year.map_or(-1.0, f64::from),
            field(p.month.map(u32::from)),
            field(p.day.map(u32::from)),
            field(p.hour.map(u32::from)),
            field(p.week.map(u32::from)),
        ];
        for (i, value) in values.into_iter().enumerate() {
            // SAFETY: `out` came from `set_serial_buffer` in this env: a Float64Array of `len`
            // (at least 7) elements the env holds strongly, and no JavaScript runs during this
            // call.
            unsafe { *out.add(i) = value };
        }
        Ok(())
    })
}

/// Why a registration of `canonical` in `zone` does not fit the format, or `null`.
#[napi]
pub fn serial_mismatch(
    env: &Env,
    index: u32,
    canonical: String,
    zone: String,
) -> Result<Option<String>> {
    guard(env, || {
        Ok(format_of(env, index)?.mismatch(&canonical, &zone))
    })
}

/// The reason of a `SERIAL_MISMATCH` the database raised.
#[napi]
pub fn serial_mismatch_reason(env: &Env, message: String, tag: String) -> Result<String> {
    guard(env, || {
        Ok(shardid::serial::mismatch_reason(&message, &tag).into())
    })
}

/// Throws `INVALID_ARGUMENT` for a tag that is not a serial tag.
#[napi]
pub fn serial_check_tag(env: &Env, tag: String) -> Result<()> {
    guard(env, || match shardid::serial::tag_problem(&tag) {
        Some(reason) => Err(invalid_argument(env, Class::Range, "tag", reason)),
        None => Ok(()),
    })
}

/// The statements a serial driver sends (`$n` parameters, for `pg`).
#[napi(object)]
pub struct SerialSql {
    /// `(tag)` → one row `(canonical, zone, max_gap)`.
    pub info: String,
    /// `(tag, period, size)` → one row `(first, count, stride)`.
    pub take: String,
    /// `(period tag, first, end)` → one boolean.
    pub give_back: String,
    /// `(tag, format, zone, canonical, shape, pieces, width, reset, max_gap)`.
    pub create: String,
}

/// The tag holding the numbers of serial tag `tag`'s `period` on every database: `tag@2026-11-25`,
/// or `tag` itself for the period `''` (a format that never resets).
#[napi]
pub fn serial_period_tag(env: &Env, tag: String, period: String) -> Result<String> {
    guard(env, || {
        Ok(shardid::sql::sqlite::period_tag(&tag, &period).to_string())
    })
}

/// The statements for serials in `schema`.
#[napi]
pub fn serial_sql(env: &Env, schema: String) -> Result<SerialSql> {
    guard(env, || {
        let s = Segments::new(&schema)
            .map_err(|e| crate::segment::schema_error(env, &e))?
            .serial_statements(Placeholders::Numbered);
        Ok(SerialSql {
            info: s.info().to_string(),
            take: s.take().to_string(),
            give_back: s.give_back().to_string(),
            create: s.create().to_string(),
        })
    })
}

/// A new allocator of `tag` (in `schema`) with a format (index), this size policy and volume
/// hiding, reported to exporters until `serialsClose`, for the JS object to hold.
#[napi(ts_return_type = "object")]
#[allow(clippy::too_many_arguments)] // the options object, taken apart by segments.js
pub fn serials_new(
    env: &Env,
    format: u32,
    schema: String,
    tag: String,
    min_size: Unknown<'_>,
    max_size: Unknown<'_>,
    target_ms: Unknown<'_>,
    max_gap: u32,
) -> Result<External<SerialsEntry>> {
    guard(env, || {
        let f = format_of(env, format)?;
        let policy = crate::segment::size_policy(env, &min_size, &max_size, &target_ms)?;
        // The table holds formats by value; the allocator gets its own copy.
        let copy = SerialFormat::new(f.as_str(), f.zone()).map_err(|e| serial_error(env, &e))?;
        let allocator = Arc::new(SerialAllocator::new(
            copy,
            &tag,
            policy,
            VolumeHiding::random(u64::from(max_gap)),
        ));
        shardid::stats::register_serials(&allocator, &schema, &tag);
        Ok(own(SerialsEntry {
            allocator,
            retired: Mutex::new(Vec::new()),
        }))
    })
}

/// Tells the JS side a fetch is due: its size in `signal[0]`, its token in `signal[1]`.
fn signal_fetch(env: &Env, fetch: shardid::serial::PeriodFetch) {
    #[allow(clippy::cast_precision_loss)] // sizes below 2^40, tokens below 2^33
    crate::segment::signal_values(env, &[(0, fetch.size as f64), (1, fetch.token() as f64)]);
}

/// Keeps a retired period for the JS side to give back, and says so in `signal[2]`.
fn keep(env: &Env, entry: &SerialsEntry, retired: Retired) {
    entry
        .retired
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(retired);
    crate::segment::signal_values(env, &[(2, 1.0)]);
}

/// The next serial at `unixMs`, or `null` when the period's segments are used up (a fetch
/// that is due is signalled). Throws `SERIAL_OVERFLOW` and the format's refusals.
#[napi]
pub fn serials_next(env: &Env, index: Unknown<'_>, unix_ms: f64) -> Result<Option<String>> {
    guard(env, || {
        let ms = shardid::js::u64_from_number(unix_ms).map_err(|_| {
            invalid_argument(
                env,
                Class::Range,
                "unixMs",
                "must be a whole number of ms, 0 or more",
            )
        })?;
        issue(env, index, Some(ms))
    })
}

/// The next serial now (the process clock, read as a burst reads it); as `serialsNext`.
#[napi]
pub fn serials_next_now(env: &Env, index: Unknown<'_>) -> Result<Option<String>> {
    guard(env, || issue(env, index, None))
}

/// One serial at `unix_ms` (`None`: now), or `None`; a fetch that is due is signalled.
fn issue(env: &Env, index: Unknown<'_>, unix_ms: Option<u64>) -> Result<Option<String>> {
    let entry = serials_of(env, &index)?;
    loop {
        let next = match unix_ms {
            Some(ms) => entry.allocator.next_at(ms, shardid::now_ms),
            None => entry.allocator.next_now(),
        };
        match next {
            Ok(issued) => {
                if let Some(fetch) = issued.fetch {
                    signal_fetch(env, fetch);
                }
                if issued.retire
                    && let Some(retired) = entry.allocator.retire()
                {
                    keep(env, entry, retired);
                }
                return Ok(Some(issued.serial.to_string()));
            }
            Err(Blocked::Fetch(fetch)) => {
                signal_fetch(env, fetch);
                return Ok(None);
            }
            Err(Blocked::Retire(retired)) => keep(env, entry, retired),
            Err(Blocked::Wait) => return Ok(None),
            Err(Blocked::Error(e)) => return Err(serial_error(env, &e)),
        }
    }
}

/// Hands over the segment of the fetch `token` (decimal strings, as `pg` gives `int8`);
/// `false` when its period was given up (the JS side gives the segment back).
#[napi]
#[allow(clippy::too_many_arguments)] // one statement's row
pub fn serials_fill(
    env: &Env,
    index: Unknown<'_>,
    token: f64,
    size: f64,
    first: Unknown<'_>,
    count: Unknown<'_>,
    stride: Unknown<'_>,
) -> Result<bool> {
    guard(env, || {
        let entry = serials_of(env, &index)?;
        let fetch = fetch_of(env, entry, token, size)?;
        let segment = Segment {
            first: u64_arg(env, &first, "first", Arg::Id)?,
            count: u64_arg(env, &count, "count", Arg::Id)?,
            stride: u64_arg(env, &stride, "stride", Arg::Id)?,
        };
        match entry.allocator.fill(fetch, segment, shardid::now_ms()) {
            Ok(()) => Ok(true),
            Err(SerialFillError::Stale) => Ok(false),
            Err(e) => Err(invalid_argument(
                env,
                Class::Range,
                "segment",
                &format!("was refused by the allocator: {e:?}"),
            )),
        }
    })
}

/// Counts a period's rest `first..end` (decimal strings, as `serialsRests` gives them) as
/// given back (`returned`) or as holes (the core's `settle`: `skipped`).
#[napi]
pub fn serials_settle(
    env: &Env,
    index: Unknown<'_>,
    first: String,
    end: String,
    count: String,
    lost: String,
    returned: bool,
) -> Result<()> {
    guard(env, || {
        let entry = serials_of(env, &index)?;
        let number = |text: &str, argument: &str| {
            shardid::parse_decimal(text.as_bytes()).ok_or_else(|| {
                invalid_argument(env, Class::Range, argument, "must be a decimal integer")
            })
        };
        let unused = shardid::segment::Unused {
            first: number(&first, "first")?,
            end: number(&end, "end")?,
            count: number(&count, "count")?,
            stride: 1, // not counted: settle counts numbers
            lost: number(&lost, "lost")?,
        };
        entry.allocator.settle(unused, returned);
        Ok(())
    })
}

fn fetch_of(
    env: &Env,
    entry: &SerialsEntry,
    token: f64,
    size: f64,
) -> Result<shardid::serial::PeriodFetch> {
    let token = shardid::js::u64_from_number(token)
        .map_err(|_| invalid_argument(env, Class::Range, "token", "is not a fetch's token"))?;
    let size = shardid::js::u64_from_number(size)
        .map_err(|_| invalid_argument(env, Class::Range, "size", "is not a fetch's size"))?;
    Ok(entry.allocator.fetch_of(token, size))
}

/// The fetch failed: the next one starts after a backoff.
#[napi]
pub fn serials_fetch_failed(env: &Env, index: Unknown<'_>, token: f64, size: f64) -> Result<()> {
    guard(env, || {
        let entry = serials_of(env, &index)?;
        let fetch = fetch_of(env, entry, token, size)?;
        entry.allocator.fetch_failed(fetch, shardid::now_ms());
        Ok(())
    })
}

/// The period tag of a fetch's token.
#[napi]
pub fn serials_fetch_period(env: &Env, index: Unknown<'_>, token: f64) -> Result<String> {
    guard(env, || {
        let entry = serials_of(env, &index)?;
        Ok(fetch_of(env, entry, token, 0.0)?.period.to_string())
    })
}

/// A period to give back: its tag, the unused `first..end` (`count` numbers) and what is lost
/// in any case.
#[napi(object)]
pub struct SerialRest {
    pub tag: String,
    pub first: String,
    pub end: String,
    pub count: String,
    pub lost: String,
}

fn rest(allocator: &SerialAllocator, r: &Retired) -> SerialRest {
    SerialRest {
        tag: r.period.tag(allocator.tag()),
        first: r.unused.first.to_string(),
        end: r.unused.end.to_string(),
        count: r.unused.count.to_string(),
        lost: r.unused.lost.to_string(),
    }
}

/// What the allocator did over every period: the core's counters in its table's order
/// (`STATS.segments` in core.generated.js names them, as for dense IDs).
#[napi]
pub fn serials_stats(
    env: &Env,
    index: Unknown<'_>,
) -> Result<napi::bindgen_prelude::BigUint64Array> {
    guard(env, || {
        Ok(napi::bindgen_prelude::BigUint64Array::new(
            serials_of(env, &index)?.allocator.stats().values().to_vec(),
        ))
    })
}

/// The retired periods waiting to be given back (and the queue emptied).
#[napi]
pub fn serials_rests(env: &Env, index: Unknown<'_>) -> Result<Vec<SerialRest>> {
    guard(env, || {
        let entry = serials_of(env, &index)?;
        let taken = std::mem::take(
            &mut *entry
                .retired
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        Ok(taken.iter().map(|r| rest(&entry.allocator, r)).collect())
    })
}

/// Every period's rest on close (and the allocator emptied); exporters no longer report it
/// (it is freed when its JS object is collected).
#[napi]
pub fn serials_close(env: &Env, index: Unknown<'_>) -> Result<Vec<SerialRest>> {
    guard(env, || {
        let entry = serials_of(env, &index)?;
        shardid::stats::unregister_serials(&entry.allocator);
        let mut out: Vec<SerialRest> = serials_rests(env, index)?;
        out.extend(
            entry
                .allocator
                .close()
                .iter()
                .flatten()
                .map(|r| rest(&entry.allocator, r)),
        );
        Ok(out)
    })
}

/// Whether a fetch is due or under way.
#[napi]
pub fn serials_fetching(env: &Env, index: Unknown<'_>) -> Result<bool> {
    guard(env, || Ok(serials_of(env, &index)?.allocator.fetching()))
}
