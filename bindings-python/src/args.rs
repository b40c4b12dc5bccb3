//! Checked conversions of Python arguments: 64-bit integers (never truncated or wrapped),
//! decimal-string IDs, and timestamps as Unix milliseconds or aware datetimes.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt, PyString, PyTuple};
use shardid::Layout;

use shardid::args::Problem;

use crate::errors::{invalid_argument, raise_kind, wrong_type};

/// What an integer argument is, which decides the error for a value outside `0..2**64`.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// An ID: decimal strings are accepted too.
    Id,
    /// A shard of a layout with this largest shard.
    Shard(u64),
    /// A sequence of a layout with this largest sequence.
    Sequence(u64),
    /// A logical shard count of a layout whose shard field holds this many.
    LogicalShards(u64),
    /// A timestamp in Unix milliseconds for this layout (a datetime is accepted too).
    Timestamp(Layout),
    /// A field of a custom layout.
    LayoutField,
    /// Anything else (a key, a count).
    Other,
}

impl Arg {
    /// The core's argument kind, which decides the error ([`shardid::args::Arg::kind`]).
    const fn rule(self) -> shardid::args::Arg {
        use shardid::args::Arg as Core;
        match self {
            Arg::Id => Core::Id,
            Arg::Shard(_) => Core::Shard,
            Arg::Sequence(_) => Core::Sequence,
            Arg::LogicalShards(_) => Core::LogicalShards,
            Arg::Timestamp(_) => Core::Timestamp,
            Arg::LayoutField => Core::LayoutField,
            Arg::Other => Core::Other,
        }
    }
}

/// The exception for `value`, an `int` outside `0..2**64` (or an ID's text that is not one):
/// the class of the kind the core's rules give, the fields `argument` and `reason`, and what
/// Python knows besides (the layout's `max`, the `epoch_ms`, ...).
#[cold]
#[inline(never)]
fn out_of_range(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str, arg: Arg) -> PyErr {
    let problem = if value.is_instance_of::<PyString>() {
        Problem::NotDecimal
    } else if value.lt(0).unwrap_or(false) {
        Problem::Negative
    } else {
        Problem::TooLarge
    };
    let reason = problem.reason(arg.rule());
    let message = format!("{name} {} {reason}", shown(value));
    let build = || -> PyResult<PyErr> {
        let int = |v: u64| v.into_pyobject(py).map(pyo3::Bound::into_any);
        let mut fields = vec![
            ("argument", name.into_pyobject(py)?.into_any()),
            ("reason", reason.into_pyobject(py)?.into_any()),
        ];
        let v = value.clone();
        match arg {
            Arg::Id => fields.push(("id", v)),
            Arg::Shard(max) => fields.extend([("shard", v), ("max", int(max)?)]),
            Arg::Sequence(max) => fields.extend([("sequence", v), ("max", int(max)?)]),
            Arg::LogicalShards(max) => fields.extend([("count", v), ("max", int(max)?)]),
            Arg::Timestamp(layout) if problem == Problem::Negative => {
                fields.extend([("timestamp_ms", v), ("epoch_ms", int(layout.epoch_ms())?)]);
            }
            Arg::Timestamp(layout) => fields.extend([
                ("timestamp_ms", v),
                ("expires_at_ms", int(layout.expires_at_ms())?),
            ]),
            Arg::LayoutField | Arg::Other => {}
        }
        Ok(raise_kind(py, arg.rule().kind(problem), &message, &fields))
    };
    build().unwrap_or_else(|e| e)
}

/// How a refused value appears in its message: a string's `repr`, an `int`'s digits, cut to
/// [`SHOWN_CHARS`] characters. A message must stay small and printable whatever a caller
/// passes: a 100 kB string from a request, or an `int` of 5,000 digits, whose `str()` Python
/// itself refuses (then its size in bits is shown). The value itself is on the exception.
fn shown(value: &Bound<'_, PyAny>) -> String {
    let text = if value.is_instance_of::<PyString>() {
        value.repr()
    } else {
        value.str()
    };
    let Ok(text) = text else {
        let bits = value
            .call_method0("bit_length")
            .and_then(|b| b.extract::<u64>())
            .unwrap_or(0);
        return format!("(an int of {bits} bits)");
    };
    let text = text.to_string_lossy();
    let chars = text.chars().count();
    if chars <= SHOWN_CHARS {
        return text.into_owned();
    }
    let head: String = text.chars().take(SHOWN_CHARS - 8).collect();
    format!("{head}... ({chars} characters)")
}

/// The most characters of a refused value a message shows.
const SHOWN_CHARS: usize = 48;

/// An `int` in `0..2**64` (for [`Arg::Id`] also a decimal string). `bool` and `float` are
/// type errors, never read as numbers.
#[inline]
pub(crate) fn u64_arg(value: &Bound<'_, PyAny>, name: &str, arg: Arg) -> PyResult<u64> {
    // The common case first: an exact `int` that fits.
    if let Ok(int) = value.cast_exact::<PyInt>() {
        return int
            .extract::<u64>()
            .map_err(|_| out_of_range(value.py(), value, name, arg));
    }
    u64_arg_slow(value, name, arg)
}

#[cold]
fn u64_arg_slow(value: &Bound<'_, PyAny>, name: &str, arg: Arg) -> PyResult<u64> {
    let py = value.py();
    if value.is_instance_of::<PyBool>() {
        return Err(wrong_type(value, name, "an int"));
    }
    if let Ok(int) = value.cast::<PyInt>() {
        return int
            .extract::<u64>()
            .map_err(|_| out_of_range(py, value, name, arg));
    }
    if let (true, Ok(text)) = (arg.rule().accepts_text(), value.cast::<PyString>()) {
        let text = text.to_cow()?;
        // Only plain ASCII digits (the core's rule): int() would also take signs, spaces,
        // underscores and non-ASCII digits, which are not how IDs are written.
        return shardid::parse_decimal(text.as_bytes())
            .ok_or_else(|| out_of_range(py, value, name, arg));
    }
    let expected = match arg {
        Arg::Id => "an int or a decimal string",
        Arg::Timestamp(_) => "an int (Unix milliseconds) or an aware datetime",
        _ => "an int",
    };
    Err(wrong_type(value, name, expected))
}

/// The `datetime` objects the conversions need, looked up once.
struct DateTimes {
    datetime_type: Py<PyAny>,
    timedelta_type: Py<PyAny>,
    epoch: Py<PyAny>,
    one_ms: Py<PyAny>,
}

static DATETIMES: PyOnceLock<DateTimes> = PyOnceLock::new();

fn datetimes(py: Python<'_>) -> PyResult<&DateTimes> {
    DATETIMES.get_or_try_init(py, || {
        let module = py.import("datetime")?;
        let datetime_type = module.getattr("datetime")?;
        let timedelta_type = module.getattr("timedelta")?;
        let utc = module.getattr("timezone")?.getattr("utc")?;
        let epoch = datetime_type.call((1970, 1, 1, 0, 0, 0, 0, utc), None)?;
        let one_ms = timedelta_type.call(
            PyTuple::empty(py),
            Some(&[("milliseconds", 1)].into_py_dict(py)?),
        )?;
        Ok(DateTimes {
            datetime_type: datetime_type.unbind(),
            timedelta_type: timedelta_type.unbind(),
            epoch: epoch.unbind(),
            one_ms: one_ms.unbind(),
        })
    })
}

use pyo3::types::IntoPyDict;

/// A timestamp argument: Unix milliseconds, or an aware `datetime` (floored to the
/// millisecond). A naive datetime is an error: its time zone would be a guess.
pub(crate) fn timestamp_arg(value: &Bound<'_, PyAny>, name: &str, layout: Layout) -> PyResult<u64> {
    let arg = Arg::Timestamp(layout);
    if value.is_instance_of::<PyInt>() {
        return u64_arg(value, name, arg);
    }
    let py = value.py();
    let dt = datetimes(py)?;
    if value.is_instance(dt.datetime_type.bind(py))? {
        if value.call_method0("utcoffset")?.is_none() {
            return Err(invalid_argument(
                py,
                name,
                "is a naive datetime: give it a time zone (e.g. tzinfo=timezone.utc)",
            ));
        }
        let ms = value
            .sub(dt.epoch.bind(py))?
            .floor_div(dt.one_ms.bind(py))?;
        return u64_arg(&ms, name, arg);
    }
    u64_arg_slow(value, name, arg)
}

/// An aware UTC `datetime` for Unix milliseconds, exactly (no float rounding).
pub(crate) fn datetime_from_ms(py: Python<'_>, ms: u64) -> PyResult<Bound<'_, PyAny>> {
    let dt = datetimes(py)?;
    let delta = dt.timedelta_type.bind(py).call(
        PyTuple::empty(py),
        Some(&[("milliseconds", ms)].into_py_dict(py)?),
    )?;
    dt.epoch.bind(py).add(delta)
}

/// The generator options every constructor takes as keyword arguments (`None`: the default).
pub(crate) fn options_arg(
    backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
    max_borrow_units: Option<&Bound<'_, PyAny>>,
) -> PyResult<shardid::Options> {
    let mut options = shardid::Options::new();
    if let Some(ms) = backwards_tolerance_ms {
        options =
            options.backwards_tolerance_ms(u64_arg(ms, "backwards_tolerance_ms", Arg::Other)?);
    }
    if let Some(units) = max_borrow_units {
        options = options.max_borrow_units(u64_arg(units, "max_borrow_units", Arg::Other)?);
    }
    Ok(options)
}

/// A count of IDs to make (`n`).
pub(crate) fn count_arg(n: &Bound<'_, PyAny>) -> PyResult<usize> {
    let count = u64_arg(n, "n", Arg::Other)?;
    shardid::args::check_batch_count(count).map_err(|reason| invalid_argument(n.py(), "n", reason))
}

/// A zeroed buffer for `n` IDs (a count that passed [`count_arg`]), or `MemoryError`: a failed
/// allocation must not abort the interpreter.
pub(crate) fn id_buffer(n: usize) -> PyResult<Vec<u64>> {
    let mut ids = Vec::new();
    ids.try_reserve_exact(n).map_err(|_| {
        pyo3::exceptions::PyMemoryError::new_err(format!(
            "cannot allocate {n} IDs ({} bytes)",
            n * 8
        ))
    })?;
    ids.resize(n, 0);
    Ok(ids)
}

/// [`count_arg`], then [`id_buffer`].
pub(crate) fn ids_for(n: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    id_buffer(count_arg(n)?)
}

/// `n` IDs as a list, written by `fill` into a buffer of that many: the `next_ids` of every
/// generator class.
pub(crate) fn id_list<'py>(
    n: &Bound<'py, PyAny>,
    fill: impl FnOnce(&mut [u64]) -> PyResult<()>,
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    let mut ids = ids_for(n)?;
    fill(&mut ids)?;
    pyo3::types::PyList::new(n.py(), ids)
}
