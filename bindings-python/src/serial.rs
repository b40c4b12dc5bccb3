//! Business serial numbers: the core's formats (`shardid::serial::SerialFormat`) as
//! `shardid.SerialFormat`, and its allocator for `shardid.segments.Serials` to drive with
//! psycopg.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyString;
use shardid::segment::Segment;
use shardid::serial::{
    Blocked, FieldRef, Issued, Parsed, PeriodFetch, Retired, SerialAllocator, SerialError,
    SerialFillError, SerialFormat, VolumeHiding,
};
use shardid::sql::{Placeholders, Segments};

use crate::args::{Arg, u64_arg};
use crate::errors::{invalid_argument, raise_kind};
use crate::segment::{Driven, driven_methods, driver_options, refused};
use crate::sql::sql_error;

/// The Python exception of a serial error: its kind's class, fields and message.
#[cold]
#[inline(never)]
pub(crate) fn serial_error(py: Python<'_>, e: &SerialError) -> PyErr {
    let fields: PyResult<Vec<(&str, Bound<'_, PyAny>)>> = e
        .fields()
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                FieldRef::Int(v) => v.into_pyobject(py)?.into_any(),
                FieldRef::Text(t) => t.into_pyobject(py)?.into_any(),
            };
            Ok((name, value))
        })
        .collect();
    match fields {
        Ok(fields) => raise_kind(py, e.kind(), &e.to_string(), &fields),
        Err(err) => err,
    }
}

/// A serial parsed back: its `number`, its `period` (`"2026-11-25"`, `"2026-11"`, `"2026"`, or
/// `""` for a format that never resets) and the fields it shows (`None` for those it does not).
#[pyclass(module = "shardid._shardid", name = "ParsedSerial", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyParsedSerial {
    // The core's value: the period's text is made when it is read, so parsing allocates no
    // string.
    inner: Parsed,
}

impl From<Parsed> for PyParsedSerial {
    fn from(inner: Parsed) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyParsedSerial {
    /// The number.
    #[getter]
    fn number(&self) -> u64 {
        self.inner.number
    }

    /// The period it counts in.
    #[getter]
    fn period(&self) -> String {
        self.inner.period.to_string()
    }

    /// The year shown (`{yy}` read as 2000-2099).
    #[getter]
    fn year(&self) -> Option<i32> {
        self.inner.year
    }

    /// The month shown.
    #[getter]
    fn month(&self) -> Option<u8> {
        self.inner.month
    }

    /// The day shown.
    #[getter]
    fn day(&self) -> Option<u8> {
        self.inner.day
    }

    /// The hour shown.
    #[getter]
    fn hour(&self) -> Option<u8> {
        self.inner.hour
    }

    /// The ISO week shown.
    #[getter]
    fn week(&self) -> Option<u8> {
        self.inner.week
    }

    /// The tag holding the period's numbers: `tag@2026-11-25` (`tag` for a format that never
    /// resets).
    fn period_tag(&self, tag: &str) -> String {
        self.inner.period.tag(tag)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ParsedSerial(number={}, period={})",
            self.inner.number,
            PyString::new(py, &self.inner.period.to_string()).repr()?
        ))
    }
}

fn ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    u64_arg(value, "unix_ms", Arg::Other)
}

/// A serial format in an IANA time zone, parsed and checked once:
/// `SerialFormat("ORD-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai")`. Raises
/// `InvalidSerialFormatError` (with the problem's `position`) or `UnknownTimeZoneError`.
///
/// `render(number, unix_ms)` makes a serial, `parse(serial)` reads one back (or raises
/// `InvalidSerialError`), `period_at(unix_ms)` gives the period an instant falls in.
#[pyclass(module = "shardid._shardid", name = "SerialFormat", frozen)]
pub(crate) struct PySerialFormat {
    inner: SerialFormat,
}

#[pymethods]
impl PySerialFormat {
    #[new]
    fn new(py: Python<'_>, format: &str, zone: &str) -> PyResult<Self> {
        SerialFormat::new(format, zone)
            .map(|inner| Self { inner })
            .map_err(|e| serial_error(py, &e))
    }

    /// The format as given.
    #[getter]
    fn format(&self) -> &str {
        self.inner.as_str()
    }

    /// The format with its reset written out (`{seq:6:day}`).
    #[getter]
    fn canonical(&self) -> &str {
        self.inner.canonical()
    }

    /// The zone's canonical name.
    #[getter]
    fn zone(&self) -> &'static str {
        self.inner.zone()
    }

    /// How often the number starts again at 1: `"never"`, `"year"`, `"month"` or `"day"`.
    #[getter]
    fn reset(&self) -> &'static str {
        self.inner.reset().name()
    }

    /// The number's width in digits.
    #[getter]
    fn width(&self) -> u8 {
        self.inner.width()
    }

    /// The largest number a serial holds.
    #[getter]
    fn max_number(&self) -> u64 {
        self.inner.max_number()
    }

    /// Every serial's length in characters (a `CharField`'s `max_length`).
    #[getter]
    fn length(&self) -> usize {
        self.inner.len_chars()
    }

    /// The serial of `number` issued at `unix_ms`.
    fn render(
        &self,
        py: Python<'_>,
        number: &Bound<'_, PyAny>,
        unix_ms: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let number = u64_arg(number, "number", Arg::Other)?;
        self.inner
            .render(number, ms_arg(unix_ms)?)
            .map(|s| s.to_string())
            .map_err(|e| serial_error(py, &e))
    }

    /// Parses a serial back.
    fn parse(&self, py: Python<'_>, serial: &str) -> PyResult<PyParsedSerial> {
        self.inner
            .parse(serial)
            .map(Into::into)
            .map_err(|e| serial_error(py, &e))
    }

    /// The period `unix_ms` falls in (`"2026-11-25"`, ...).
    fn period_at(&self, py: Python<'_>, unix_ms: &Bound<'_, PyAny>) -> PyResult<String> {
        self.inner
            .period_at(ms_arg(unix_ms)?)
            .map(|p| p.to_string())
            .map_err(|e| serial_error(py, &e))
    }

    /// What the database keeps: `(canonical, shape, pieces, width, reset)`, the arguments of
    /// `create_serial` after the tag, format and zone.
    fn _registration(&self) -> (String, String, Vec<String>, i32, &'static str) {
        let r = self.inner.registration();
        (r.canonical, r.shape, r.pieces, r.width, r.reset)
    }

    /// Why a registration of `canonical` in `zone` does not fit, or `None`.
    fn _mismatch(&self, canonical: &str, zone: &str) -> Option<String> {
        self.inner.mismatch(canonical, zone)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "SerialFormat({}, {})",
            PyString::new(py, self.inner.as_str()).repr()?,
            PyString::new(py, self.inner.zone()).repr()?
        ))
    }
}

fn check_tag(py: Python<'_>, tag: &str) -> PyResult<()> {
    match shardid::serial::tag_problem(tag) {
        Some(reason) => Err(invalid_argument(py, "tag", reason)),
        None => Ok(()),
    }
}

/// The tag rule of serials, for the Python driver: raises `InvalidArgumentError`.
#[pyfunction]
pub(crate) fn _check_serial_tag(py: Python<'_>, tag: &str) -> PyResult<()> {
    check_tag(py, tag)
}

/// The statement registering a serial tag, its values written out: for `psql`.
#[pyfunction]
#[pyo3(signature = (tag, format, *, zone, schema = "seg", max_gap = 1))]
pub(crate) fn create_serial_sql(
    py: Python<'_>,
    tag: &str,
    format: &str,
    zone: &str,
    schema: &str,
    max_gap: u32,
) -> PyResult<String> {
    check_tag(py, tag)?;
    SerialFormat::new(format, zone)
        .map_err(|e| serial_error(py, &e))?
        .create_sql(schema, tag, max_gap)
        .map_err(|e| sql_error(py, e))
}

/// The reason of a `SERIAL_MISMATCH` the database raised.
/// One step of 1 to `max_gap` (at most 1: 1), the core's draw of the allocator's steps
/// (`VolumeHiding::draw_step`), for Django's serial inside SQLite's transaction, which takes
/// that many numbers and issues the last.
#[pyfunction]
pub(crate) fn _serial_step(max_gap: i64) -> u64 {
    VolumeHiding::draw_step(u64::try_from(max_gap).unwrap_or(0))
}

#[pyfunction]
pub(crate) fn _mismatch_reason(message: &str, tag: &str) -> String {
    shardid::serial::mismatch_reason(message, tag).into()
}

/// The statements a serial driver sends, in psycopg's `%s` style: `(info, take, give_back,
/// create, next, render)`.
#[pyfunction]
pub(crate) fn _serial_statements(
    py: Python<'_>,
    schema: &str,
) -> PyResult<(String, String, String, String, String, String)> {
    let s = Segments::new(schema)
        .map_err(|e| sql_error(py, e))?
        .serial_statements(Placeholders::Format);
    Ok((
        s.info().to_string(),
        s.take().to_string(),
        s.give_back().to_string(),
        s.create().to_string(),
        s.next().to_string(),
        s.render().to_string(),
    ))
}

/// A fetch due for a period: the Python driver takes the segment and hands it back with it.
#[pyclass(module = "shardid.segments", name = "_PeriodFetch", frozen)]
pub(crate) struct PyPeriodFetch {
    inner: PeriodFetch,
    /// The period's suffix (`2026-11-25`; `""` for never).
    #[pyo3(get)]
    period: String,
    /// How many numbers to ask for (0: what the period's row remembers).
    #[pyo3(get)]
    size: u64,
}

/// The serial numbers of one tag, from PostgreSQL segments: see `shardid.segments.Serials`.
//
// As `DenseIds`: the class is native and final so `s.next_serial()` is specialized by
// CPython; the Python side (`shardid.segments._SerialDriver`: psycopg, threads, waiting) is a
// field, called only off the hot path.
// `weakref`: shardid.segments keeps the allocators that took numbers in a WeakSet, to give
// their unused rest back at exit without keeping them alive.
#[pyclass(module = "shardid.segments", name = "Serials", frozen, weakref)]
pub(crate) struct PySerials {
    /// Shared with the core's list of live objects, which exporters read (weakly).
    inner: std::sync::Arc<SerialAllocator>,
    driven: Driven,
}

/// What a call did besides issuing: runs the driver's part.
impl PySerials {
    fn start(&self, ids: &Bound<'_, Self>, fetch: PeriodFetch) -> PyResult<()> {
        let py = ids.py();
        let token = PyPeriodFetch {
            inner: fetch,
            period: fetch.period.to_string(),
            size: fetch.size,
        };
        if let Err(e) = self
            .driven
            .driver
            .bind(py)
            .call_method1(intern!(py, "_start"), (ids, token))
        {
            self.inner.fetch_failed(fetch, shardid::now_ms());
            return Err(e);
        }
        Ok(())
    }

    fn give_back(&self, ids: &Bound<'_, Self>, retired: Retired) -> PyResult<()> {
        let py = ids.py();
        let u = retired.unused;
        self.driven.driver.bind(py).call_method1(
            intern!(py, "_give_back"),
            (
                ids,
                retired.period.tag(self.inner.tag()),
                u.first,
                u.end,
                u.count,
                u.lost,
            ),
        )?;
        Ok(())
    }

    /// After a serial is issued: the fetch that became due, the period to give back.
    fn after(&self, ids: &Bound<'_, Self>, issued: &Issued) -> PyResult<()> {
        if let Some(fetch) = issued.fetch {
            self.start(ids, fetch)?;
        }
        if issued.retire
            && let Some(retired) = self.inner.retire()
        {
            self.give_back(ids, retired)?;
        }
        Ok(())
    }

    /// One serial at `unix_ms` (`None`: now) if one can be issued without waiting (`None`:
    /// wait for the fetch under way, or closed, or forked).
    fn try_issue<'py>(
        slf: &Bound<'py, Self>,
        unix_ms: Option<u64>,
    ) -> PyResult<Option<Bound<'py, PyString>>> {
        let this = slf.get();
        let py = slf.py();
        if !this.driven.usable() {
            return Ok(None);
        }
        loop {
            let next = match unix_ms {
                Some(ms) => this.inner.next_at(ms, shardid::now_ms),
                None => this.inner.next_now(),
            };
            match next {
                Ok(issued) => {
                    this.after(slf, &issued)?;
                    return Ok(Some(PyString::new(py, issued.serial.as_str())));
                }
                Err(Blocked::Fetch(fetch)) => {
                    this.start(slf, fetch)?;
                    return Ok(None);
                }
                Err(Blocked::Retire(retired)) => this.give_back(slf, retired)?,
                Err(Blocked::Wait) => return Ok(None),
                Err(Blocked::Error(e)) => return Err(serial_error(py, &e)),
            }
        }
    }

    #[inline]
    fn issue<'py>(slf: &Bound<'py, Self>, unix_ms: Option<u64>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(serial) = Self::try_issue(slf, unix_ms)? {
            return Ok(serial.into_any());
        }
        let py = slf.py();
        slf.get()
            .driven
            .driver
            .bind(py)
            .call_method1(intern!(py, "_when_empty"), (slf, unix_ms))
    }
}

driven_methods! {
    impl PySerials forwards [] {
        #[new]
        #[pyo3(signature = (conninfo, tag, format, *, zone, schema = None, min_size = None, max_size = None, target_ms = None, wait_ms = None))]
        #[allow(clippy::too_many_arguments)] // the Python signature
        fn new(
            py: Python<'_>,
            conninfo: &Bound<'_, PyAny>,
            tag: &str,
            format: &str,
            zone: &str,
            schema: Option<&Bound<'_, PyAny>>,
            min_size: Option<&Bound<'_, PyAny>>,
            max_size: Option<&Bound<'_, PyAny>>,
            target_ms: Option<&Bound<'_, PyAny>>,
            wait_ms: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let parsed = SerialFormat::new(format, zone).map_err(|e| serial_error(py, &e))?;
            check_tag(py, tag)?;
            let (policy, kwargs) =
                driver_options(py, schema, min_size, max_size, target_ms, wait_ms)?;
            let driver = py
                .import("shardid.segments")?
                .getattr("_SerialDriver")?
                .call((conninfo, tag), Some(&kwargs))?;
            // The registration, checked against this format and zone.
            let (canonical, registered_zone, max_gap): (String, String, u64) =
                driver.call_method0("_info")?.extract()?;
            if let Some(reason) = parsed.mismatch(&canonical, &registered_zone) {
                driver.call_method0("_drop_all")?;
                return Err(raise_kind(
                    py,
                    shardid::ErrorKind::SerialMismatch,
                    &format!("serial tag {tag} {reason}"),
                    &[
                        ("tag", tag.into_pyobject(py)?.into_any()),
                        ("reason", reason.into_pyobject(py)?.into_any()),
                    ],
                ));
            }
            let inner = std::sync::Arc::new(SerialAllocator::new(
                parsed,
                tag,
                policy,
                VolumeHiding::random(max_gap),
            ));
            let schema = driver.getattr(intern!(py, "schema"))?.str()?.to_string();
            shardid::stats::register_serials(&inner, &schema, tag);
            Ok(Self {
                inner,
                driven: Driven::new(driver.unbind()),
            })
        }

        /// The tag.
        #[getter]
        fn tag(&self) -> &str {
            self.inner.tag()
        }

        /// The format as given.
        #[getter]
        fn format(&self) -> &str {
            self.inner.format().as_str()
        }

        /// The format with its reset written out.
        #[getter]
        fn canonical(&self) -> &str {
            self.inner.format().canonical()
        }

        /// The zone's canonical name.
        #[getter]
        fn zone(&self) -> &'static str {
            self.inner.format().zone()
        }

        /// How often the number starts again at 1.
        #[getter]
        fn reset(&self) -> &'static str {
            self.inner.format().reset().name()
        }

        /// The largest random step between two numbers (1: dense numbers), as registered.
        #[getter]
        fn max_gap(&self) -> u64 {
            self.inner.hiding().max_gap
        }

        /// What this allocator did over every period, as a dict named by the core's table, as
        /// `DenseIds.stats()` (`fetches`, `failed_fetches`, `fetch_latency_max_ms`, `empty_waits`,
        /// `skipped`: the holes it made, `remaining`: what is left of the current period's segment).
        fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
            crate::stats::to_dict(
                py,
                shardid::stats::SegmentStats::METRICS,
                &self.inner.stats().values(),
            )
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            Ok(format!(
                "Serials(tag={}, format={}, zone={})",
                PyString::new(py, self.inner.tag()).repr()?,
                PyString::new(py, self.inner.format().as_str()).repr()?,
                PyString::new(py, self.inner.format().zone()).repr()?
            ))
        }

        /// The next serial, issued now.
        #[inline]
        fn next_serial<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
            Self::issue(slf, None)
        }

        /// The next serial, issued at `unix_ms` (a scripted clock, a replay); a time behind the
        /// current period is issued at its first instant.
        fn next_serial_at<'py>(
            slf: &Bound<'py, Self>,
            unix_ms: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyAny>> {
            Self::issue(slf, Some(ms_arg(unix_ms)?))
        }

        /// Parses a serial of this format back.
        fn parse(&self, py: Python<'_>, serial: &str) -> PyResult<PyParsedSerial> {
            self.inner
                .format()
                .parse(serial)
                .map(Into::into)
                .map_err(|e| serial_error(py, &e))
        }

        /// The serial of `number` at `unix_ms`, by this format (nothing is taken).
        fn render(
            &self,
            py: Python<'_>,
            number: &Bound<'_, PyAny>,
            unix_ms: &Bound<'_, PyAny>,
        ) -> PyResult<String> {
            let number = u64_arg(number, "number", Arg::Other)?;
            self.inner
                .format()
                .render(number, ms_arg(unix_ms)?)
                .map(|s| s.to_string())
                .map_err(|e| serial_error(py, &e))
        }

        /// A serial at `unix_ms` (`None`: now) without waiting, or `None`.
        #[pyo3(signature = (unix_ms = None))]
        fn _try_next_serial<'py>(
            slf: &Bound<'py, Self>,
            unix_ms: Option<u64>,
        ) -> PyResult<Option<Bound<'py, PyString>>> {
            Self::try_issue(slf, unix_ms)
        }

        /// Hands over the segment a fetch returned; `False` when its period was given up (the
        /// driver gives the segment back).
        fn _fill(
            &self,
            py: Python<'_>,
            fetch: &PyPeriodFetch,
            first: u64,
            count: u64,
            stride: u64,
        ) -> PyResult<bool> {
            let segment = Segment {
                first,
                count,
                stride,
            };
            match self.inner.fill(fetch.inner, segment, shardid::now_ms()) {
                Ok(()) => Ok(true),
                Err(SerialFillError::Stale) => Ok(false),
                Err(e) => Err(refused(py, &e)),
            }
        }

        fn _fetch_failed(&self, fetch: &PyPeriodFetch) {
            self.inner.fetch_failed(fetch.inner, shardid::now_ms());
        }

        /// Counts a period's rest `first..end` as given back (`returned`) or as holes (the
        /// core's `settle`: `skipped`).
        fn _settle(&self, first: u64, end: u64, count: u64, lost: u64, returned: bool) {
            let unused = shardid::segment::Unused {
                first,
                end,
                count,
                stride: 1,
                lost,
            };
            self.inner.settle(unused, returned);
        }

        /// The period tag of a fetch.
        fn _fetch_tag(&self, fetch: &PyPeriodFetch) -> String {
            fetch.inner.period.tag(self.inner.tag())
        }

        /// Makes every later call wait (and the driver raise), and stops reporting the
        /// allocator to exporters; whether this close gives every period's rest back
        /// (`Driven::shut`).
        fn _shut(&self) -> bool {
            shardid::stats::unregister_serials(&self.inner);
            self.driven.shut()
        }

        fn _forked(&self) -> bool {
            self.driven.forked()
        }

        fn _adopt(&self) {
            self.inner.reset();
            self.driven.adopt();
        }

        /// Every period's rest, `(period tag, first, end, count, lost)`, and the allocator
        /// emptied.
        fn _close_periods(&self) -> Vec<(String, u64, u64, u64, u64)> {
            self.inner
                .close()
                .into_iter()
                .flatten()
                .map(|r| {
                    let u = r.unused;
                    (
                        r.period.tag(self.inner.tag()),
                        u.first,
                        u.end,
                        u.count,
                        u.lost,
                    )
                })
                .collect()
        }

        fn _fetching(&self) -> bool {
            self.inner.fetching()
        }
    }
}
