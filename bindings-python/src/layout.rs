//! `Layout` and `Parts`: immutable, hashable, comparable, picklable value types.

use pyo3::prelude::*;
use std::hash::{Hash, Hasher};

use pyo3::basic::CompareOp;
use pyo3::types::{PyDict, PyInt, PyTuple};
use shardid::{FieldOrder, Layout, Parts};

use crate::args::{Arg, datetime_from_ms, timestamp_arg, u64_arg};
use crate::errors::{OrRaise, invalid_layout};

/// A validated bit layout: epoch, time unit, field widths and order, and whether IDs must fit
/// a signed 64-bit column (a `BIGINT`).
#[pyclass(module = "shardid._shardid", name = "Layout", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PyLayout {
    pub(crate) inner: Layout,
}

fn width(value: &Bound<'_, PyAny>, name: &str) -> PyResult<u8> {
    let bits = u64_arg(value, name, Arg::LayoutField)?;
    u8::try_from(bits)
        .map_err(|_| invalid_layout(value.py(), &format!("{name} {bits} is wider than 64 bits")))
}

#[pymethods]
impl PyLayout {
    #[new]
    #[pyo3(signature = (*, epoch_ms, time_bits, shard_bits, sequence_bits, unit_ms = None, order = None, signed = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        epoch_ms: &Bound<'_, PyAny>,
        time_bits: &Bound<'_, PyAny>,
        shard_bits: &Bound<'_, PyAny>,
        sequence_bits: &Bound<'_, PyAny>,
        unit_ms: Option<&Bound<'_, PyAny>>,
        order: Option<&str>,
        signed: bool,
    ) -> PyResult<Self> {
        let order = match order {
            Some(name) => FieldOrder::from_name(name).or_raise(py)?,
            None => FieldOrder::TimeShardSequence,
        };
        let unit_ms = match unit_ms {
            Some(v) => u64_arg(v, "unit_ms", Arg::LayoutField)?,
            None => 1,
        };
        let inner = Layout::builder()
            .epoch_ms(u64_arg(epoch_ms, "epoch_ms", Arg::LayoutField)?)
            .unit_ms(unit_ms)
            .bits(
                width(time_bits, "time_bits")?,
                width(shard_bits, "shard_bits")?,
                width(sequence_bits, "sequence_bits")?,
            )
            .order(order)
            .signed(signed)
            .build()
            .or_raise(py)?;
        Ok(Self { inner })
    }

    /// The preset named `name`, in any case (`"instagram"`); `InvalidLayoutError` for another.
    #[staticmethod]
    fn preset(py: Python<'_>, name: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Layout::preset(name).or_raise(py)?,
        })
    }

    /// The presets' names, in the core's order: `("INSTAGRAM", "TWITTER", ...)`.
    #[staticmethod]
    fn preset_names() -> Vec<&'static str> {
        Layout::PRESETS.iter().map(|(name, _)| *name).collect()
    }

    /// Instagram: 41 bits of ms since 2011-08-24T21:07:01.721Z | 13 shard | 10 sequence.
    #[classattr]
    #[allow(non_snake_case)]
    fn INSTAGRAM() -> Self {
        Self {
            inner: Layout::INSTAGRAM,
        }
    }
    /// Twitter Snowflake: 41 bits of ms since 2010-11-04T01:42:54.657Z | 10 worker | 12 sequence.
    #[classattr]
    #[allow(non_snake_case)]
    fn TWITTER() -> Self {
        Self {
            inner: Layout::TWITTER,
        }
    }
    /// Discord: 42 bits of ms since 2015-01-01 | 10 worker and process | 12 increment; unsigned.
    #[classattr]
    #[allow(non_snake_case)]
    fn DISCORD() -> Self {
        Self {
            inner: Layout::DISCORD,
        }
    }
    /// Sonyflake: 39 bits of 10 ms units since 2014-09-01 | 8 sequence | 16 machine.
    #[classattr]
    #[allow(non_snake_case)]
    fn SONYFLAKE() -> Self {
        Self {
            inner: Layout::SONYFLAKE,
        }
    }

    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }
    #[getter]
    fn unit_ms(&self) -> u64 {
        self.inner.unit_ms()
    }
    #[getter]
    fn time_bits(&self) -> u8 {
        self.inner.time_bits()
    }
    #[getter]
    fn shard_bits(&self) -> u8 {
        self.inner.shard_bits()
    }
    #[getter]
    fn sequence_bits(&self) -> u8 {
        self.inner.sequence_bits()
    }
    #[getter]
    fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    #[getter]
    fn signed(&self) -> bool {
        self.inner.signed()
    }
    #[getter]
    fn max_shard(&self) -> u64 {
        self.inner.max_shard()
    }
    #[getter]
    fn max_sequence(&self) -> u64 {
        self.inner.max_sequence()
    }
    #[getter]
    fn max_id(&self) -> u64 {
        self.inner.max_id()
    }
    /// The last Unix millisecond the layout can represent.
    #[getter]
    fn expires_at_ms(&self) -> u64 {
        self.inner.expires_at_ms()
    }
    /// The last moment the layout can represent, as an aware UTC datetime.
    #[getter]
    fn expires_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime_from_ms(py, self.inner.expires_at_ms())
    }

    /// Whether the layout runs out within five years of `now` (Unix ms or an aware datetime;
    /// the system clock when `None`), or already has: the core's rule, which Django's system
    /// check `shardid.W002` reports.
    #[pyo3(signature = (now=None))]
    fn runs_out_soon(&self, now: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let now_ms = match now {
            Some(now) => timestamp_arg(now, "now", self.inner)?,
            None => shardid::now_ms(),
        };
        Ok(self.inner.runs_out_soon(now_ms))
    }

    /// Splits an ID (an int or a decimal string) into its fields.
    fn decode(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<PyParts> {
        let parts = self
            .inner
            .decode(u64_arg(id, "id", Arg::Id)?)
            .or_raise(py)?;
        Ok(PyParts::from_parts(py, parts))
    }

    /// The UUIDv7 of an ID (an int or a decimal string): its time is the ID's, and the rest of
    /// the ID and the layout's marker fill its random bits, so `from_uuid` gives the ID back
    /// and UUIDs sort as their IDs do.
    #[allow(clippy::wrong_self_convention)] // Python's name: Layout.to_uuid(id)
    fn to_uuid<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        crate::uuid::to_uuid(py, &self.inner, id)
    }

    /// The ID a UUID (a `uuid.UUID` or its text) made by `to_uuid` of this layout holds;
    /// `InvalidArgumentError` for any other UUID.
    #[allow(clippy::wrong_self_convention)] // Python's name: Layout.from_uuid(uuid)
    fn from_uuid(&self, py: Python<'_>, uuid: &Bound<'_, PyAny>) -> PyResult<u64> {
        crate::uuid::from_uuid(py, Some(&self.inner), uuid)
    }

    /// Checks that `id` is an ID of this layout and returns it as an int.
    fn validate_id(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.inner
            .validate_id(u64_arg(id, "id", Arg::Id)?)
            .or_raise(py)
    }

    /// The ID for a timestamp (Unix ms or an aware datetime; floored to its time unit), a
    /// shard and a sequence.
    fn compose(
        &self,
        py: Python<'_>,
        timestamp: &Bound<'_, PyAny>,
        shard: &Bound<'_, PyAny>,
        sequence: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        let l = self.inner;
        self.inner
            .compose(
                timestamp_arg(timestamp, "timestamp", l)?,
                u64_arg(shard, "shard", Arg::Shard(l.max_shard()))?,
                u64_arg(sequence, "sequence", Arg::Sequence(l.max_sequence()))?,
            )
            .or_raise(py)
    }

    /// The smallest ID any generator of this layout can make in the time unit holding
    /// `timestamp` (Unix ms or an aware datetime).
    fn min_id_at(&self, py: Python<'_>, timestamp: &Bound<'_, PyAny>) -> PyResult<u64> {
        let ms = timestamp_arg(timestamp, "timestamp", self.inner)?;
        self.inner.min_id_at(ms).or_raise(py)
    }

    /// The largest ID any generator of this layout can make in the time unit holding
    /// `timestamp`.
    fn max_id_at(&self, py: Python<'_>, timestamp: &Bound<'_, PyAny>) -> PyResult<u64> {
        let ms = timestamp_arg(timestamp, "timestamp", self.inner)?;
        self.inner.max_id_at(ms).or_raise(py)
    }

    /// Instagram's mapping of a key to one of `logical_shards` shards: `key % logical_shards`.
    fn shard_for_key(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        logical_shards: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        let max = self.inner.max_shard().saturating_add(1);
        self.inner
            .shard_for_key(
                u64_arg(key, "key", Arg::Other)?,
                u64_arg(logical_shards, "logical_shards", Arg::LogicalShards(max))?,
            )
            .or_raise(py)
    }

    /// TiDB's decimal scatter: the last `digits` decimal digits (1, 2 or 3: 10, 100 or 1,000
    /// key ranges; default 1) move to just after the first.
    #[pyo3(signature = (id, digits = None))]
    fn scatter_decimal(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        digits: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let digits = scatter_digits(py, digits)?;
        self.inner
            .scatter_decimal_digits(u64_arg(id, "id", Arg::Id)?, digits)
            .or_raise(py)
    }
    /// The inverse of `scatter_decimal` (with the same `digits`).
    #[pyo3(signature = (id, digits = None))]
    fn gather_decimal(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        digits: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let digits = scatter_digits(py, digits)?;
        self.inner
            .gather_decimal_digits(u64_arg(id, "id", Arg::Id)?, digits)
            .or_raise(py)
    }
    /// A bit-level scatter that stays in the layout's range; its own inverse.
    fn scatter_bits(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.inner
            .scatter_bits(u64_arg(id, "id", Arg::Id)?)
            .or_raise(py)
    }
    /// The inverse of `scatter_bits`.
    fn gather_bits(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.inner
            .gather_bits(u64_arg(id, "id", Arg::Id)?)
            .or_raise(py)
    }

    pub(crate) fn __repr__(&self) -> String {
        if let Some(name) = self.inner.preset_name() {
            return format!("Layout.{name}");
        }
        let l = self.inner;
        format!(
            "Layout(epoch_ms={}, time_bits={}, shard_bits={}, sequence_bits={}, unit_ms={}, order={:?}, signed={})",
            l.epoch_ms(),
            l.time_bits(),
            l.shard_bits(),
            l.sequence_bits(),
            l.unit_ms(),
            self.order(),
            if l.signed() { "True" } else { "False" },
        )
    }

    /// Pickles by value (the constructor takes keywords only).
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let l = self.inner;
        let kwargs = PyDict::new(py);
        kwargs.set_item("epoch_ms", l.epoch_ms())?;
        kwargs.set_item("time_bits", l.time_bits())?;
        kwargs.set_item("shard_bits", l.shard_bits())?;
        kwargs.set_item("sequence_bits", l.sequence_bits())?;
        kwargs.set_item("unit_ms", l.unit_ms())?;
        kwargs.set_item("order", self.order())?;
        kwargs.set_item("signed", l.signed())?;
        Ok((PyTuple::empty(py), kwargs))
    }
}

/// The fields of an ID. Ordered like tuples `(timestamp_ms, shard, sequence)`.
///
/// The fields are kept as Python ints, made once when the ID is decoded: PyO3 then serves
/// `#[pyo3(get)]` on a `Py<...>` field as a plain member read, several times faster than a
/// getter that converts a `u64` on every access.
#[pyclass(module = "shardid._shardid", name = "Parts", frozen)]
pub(crate) struct PyParts {
    /// The start of the ID's time unit, Unix milliseconds.
    #[pyo3(get)]
    timestamp_ms: Py<PyInt>,
    /// The shard that made it.
    #[pyo3(get)]
    shard: Py<PyInt>,
    /// Its sequence number in the time unit.
    #[pyo3(get)]
    sequence: Py<PyInt>,
    /// The same values, for comparing and hashing.
    key: (u64, u64, u64),
}

impl PyParts {
    pub(crate) fn from_parts(py: Python<'_>, p: Parts) -> Self {
        let int = |v: u64| {
            v.into_pyobject(py)
                .map_or_else(|e| match e {}, Bound::unbind)
        };
        Self {
            timestamp_ms: int(p.timestamp_ms),
            shard: int(p.shard),
            sequence: int(p.sequence),
            key: (p.timestamp_ms, p.shard, p.sequence),
        }
    }
}

#[pymethods]
impl PyParts {
    #[new]
    fn new(py: Python<'_>, timestamp_ms: u64, shard: u64, sequence: u64) -> Self {
        Self::from_parts(
            py,
            Parts {
                timestamp_ms,
                shard,
                sequence,
            },
        )
    }

    /// `timestamp_ms` as an aware UTC datetime.
    #[getter]
    fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime_from_ms(py, self.key.0)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Option<bool> {
        let other = other.cast::<PyParts>().ok()?;
        Some(op.matches(self.key.cmp(&other.get().key)))
    }

    fn __hash__(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.key.hash(&mut hasher);
        hasher.finish()
    }

    fn __repr__(&self) -> String {
        let (timestamp_ms, shard, sequence) = self.key;
        format!("Parts(timestamp_ms={timestamp_ms}, shard={shard}, sequence={sequence})")
    }

    fn __getnewargs__(&self) -> (u64, u64, u64) {
        self.key
    }
}

/// The count of digits a decimal scatter moves (default 1), or `INVALID_ARGUMENT`.
fn scatter_digits(
    py: Python<'_>,
    digits: Option<&Bound<'_, PyAny>>,
) -> PyResult<shardid::ScatterDigits> {
    let Some(digits) = digits else {
        return Ok(shardid::ScatterDigits::ONE);
    };
    let n = u64_arg(digits, "digits", Arg::Other)?;
    shardid::ScatterDigits::new(n).ok_or_else(|| {
        crate::errors::invalid_argument(py, "digits", shardid::ScatterDigits::INVALID)
    })
}
