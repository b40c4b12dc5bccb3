//! Dense IDs from database segments: the core's allocator (`shardid::segment`) and the
//! segments' SQL, for `shardid.segments` to drive with psycopg. Not for direct use.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use shardid::segment::{Empty, Fetch, Segment, SegmentAllocator, SizePolicy};
use shardid::sql::{Dialect, Placeholders, Segments};

use crate::args::{Arg, u64_arg};
use crate::errors::invalid_argument;
use crate::sql::sql_error;

/// The DDL of dense IDs from segments in `schema`, for ticket server `index` of `servers`, in
/// `dialect` (`"postgres"`, the default; `"mysql"`/`"mariadb"`: `schema` is a database;
/// `"sqlite"`: `schema` is `main` or an attached database, one file has no ticket servers).
#[pyfunction]
#[pyo3(signature = (schema, *, servers = 1, index = 0, dialect = None))]
pub(crate) fn segments(
    py: Python<'_>,
    schema: &str,
    servers: u64,
    index: u64,
    dialect: Option<&str>,
) -> PyResult<String> {
    match crate::mysql::dialect_arg(py, dialect)? {
        dialect @ (Dialect::Mysql | Dialect::Mariadb) => {
            crate::mysql::segments_ddl(py, schema, servers, index, dialect)
        }
        Dialect::Sqlite if (servers, index) == (1, 0) => crate::sqlite::segments_ddl(py, schema),
        Dialect::Sqlite => Err(invalid_argument(
            py,
            "servers",
            "must be 1 on SQLite: one file has no ticket servers",
        )),
        Dialect::Postgres => Segments::new(schema)
            .and_then(|ddl| ddl.ticket_server(servers, index))
            .map(|ddl| ddl.to_string())
            .map_err(|e| sql_error(py, e)),
        other => Err(crate::mysql::unsupported_dialect(py, other)),
    }
}

/// The DDL that removes dense IDs and serial numbers from `schema`.
#[pyfunction]
pub(crate) fn segments_uninstall(py: Python<'_>, schema: &str) -> PyResult<String> {
    shardid::sql::SegmentsUninstall::new(schema)
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// The statements a segment driver sends, in psycopg's `%s` style: `(take, give_back,
/// create_tag)`.
#[pyfunction]
pub(crate) fn _segment_statements(
    py: Python<'_>,
    schema: &str,
) -> PyResult<(String, String, String)> {
    let statements = Segments::new(schema)
        .map_err(|e| sql_error(py, e))?
        .statements(Placeholders::Format);
    Ok((
        statements.take().to_string(),
        statements.give_back().to_string(),
        statements.create_tag().to_string(),
    ))
}

/// Dense IDs of one tag, taken in segments from the PostgreSQL server at `conninfo` (a libpq
/// connection string or URL) where `schema` holds the segments' DDL.
///
/// `conninfo` may be a list of ticket servers (each with the DDL of its index, `--servers n
/// --index i`): segments are then taken from whichever answers, in turn, and a server that is
/// down costs only its share. IDs from several servers interleave (each server's are one
/// residue modulo n), so they no longer increase per allocator.
///
/// Thread-safe: share one per process. In a forked child it starts afresh with segments of its
/// own (the parent's are the parent's).
///
/// `next_id()` returns the next ID of this allocator (increasing); it raises
/// `SegmentUnavailableError` when none arrives within `wait_ms` and `UnknownTagError` for a
/// tag never created. `skipped` counts the numbers taken from the database and neither handed
/// out nor given back by `close()`: the holes this allocator made.
//
// The class is native and final, so CPython specializes `ids.next_id()` as a call of a method
// of the exact type (on an instance of a Python subclass it does not, which cost ~10 ns a
// call). The Python side (`shardid.segments._Driver`: psycopg, threads, waiting) is a field,
// called only off the hot path: `_start(ids, size)` when a fetch becomes due, `_when_empty(ids)`
// when both segments are used up (or the allocator was closed, or this is a forked child),
// whose return value `next_id` returns. Other attributes (`tag`, `skipped`, `wait_ms`, ...)
// are the driver's.
// `weakref`: shardid.segments keeps the allocators that took numbers in a WeakSet, to give
// their unused rest back at exit without keeping them alive.
#[pyclass(module = "shardid.segments", name = "DenseIds", frozen, weakref)]
pub(crate) struct PyDenseIds {
    /// Shared with the core's list of live objects, which exporters read (weakly).
    inner: std::sync::Arc<SegmentAllocator>,
    driven: Driven,
}

/// What a native allocator (`DenseIds`, `Serials`) keeps besides the core's: the Python
/// driver that fetches for it, the fork generation it serves (a forked child must not use the
/// parent's segments) and whether it was closed. Written once for both classes.
pub(crate) struct Driven {
    generation: AtomicU64,
    closed: AtomicBool,
    pub(crate) driver: Py<PyAny>,
}

impl Driven {
    pub(crate) fn new(driver: Py<PyAny>) -> Self {
        Self {
            generation: AtomicU64::new(shardid::fork_generation()),
            closed: AtomicBool::new(false),
            driver,
        }
    }

    /// Whether the allocator may hand out: not closed, and in the process it serves.
    #[inline]
    pub(crate) fn usable(&self) -> bool {
        shardid::fork_generation() == self.generation.load(Ordering::Relaxed)
            && !self.closed.load(Ordering::Acquire)
    }

    /// Makes every later call wait for the driver (which raises `CLOSED`); whether this call
    /// is the close that gives the unused rest back: the first, in the process the allocator
    /// serves (a forked child's segments are its parent's; two threads closing at once give
    /// it back once).
    pub(crate) fn shut(&self) -> bool {
        !self.closed.swap(true, Ordering::AcqRel) && !self.forked()
    }

    /// Whether this is a forked child of the process the allocator serves.
    pub(crate) fn forked(&self) -> bool {
        shardid::fork_generation() != self.generation.load(Ordering::Relaxed)
    }

    /// Serves this process from now on (after the allocator forgot the parent's segments).
    pub(crate) fn adopt(&self) {
        self.generation
            .store(shardid::fork_generation(), Ordering::Relaxed);
    }

    /// The driver's attribute `name`: the getters the classes forward.
    pub(crate) fn attr<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.driver.bind(py).getattr(name)
    }

    /// Sets the driver's `wait_ms`.
    pub(crate) fn set_wait_ms(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.driver.bind(py).setattr(intern!(py, "wait_ms"), value)
    }

    /// Has the driver give back what is unused and close its connections (`close()`,
    /// `__exit__`).
    pub(crate) fn close(&self, allocator: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = allocator.py();
        self.driver
            .bind(py)
            .call_method1(intern!(py, "close"), (allocator,))?;
        Ok(())
    }
}

/// The `#[pymethods]` of a class over a `Driven` (its field `driven`): the class's own methods,
/// then what each such class forwards to its Python driver, written once: the getters of the
/// driver's attributes (those every class has, then the class's own `forwards [...]`),
/// `wait_ms`'s setter, `close()` and the context manager. pyo3 takes one `#[pymethods]` block
/// a class (and no macro inside it), so the shared part is spliced into the block here.
//
// The getters are descriptors of the type, not a `__getattr__`: that would replace the type's
// attribute lookup, which CPython then no longer specializes (`ids.next_id()` took 56 ns
// instead of 22).
macro_rules! driven_methods {
    (impl $class:ident forwards [$($(#[$doc:meta])* $getter:ident),* $(,)?] { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            $($own)*

            $(
                $(#[$doc])*
                #[getter]
                fn $getter<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                    self.driven.attr(py, intern!(py, stringify!($getter)))
                }
            )*

            /// The schema holding the segments' DDL.
            #[getter]
            fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.driven.attr(py, intern!(py, "schema"))
            }

            /// The (first) server's connection string.
            #[getter]
            fn conninfo<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.driven.attr(py, intern!(py, "conninfo"))
            }

            /// Numbers taken from the database and neither handed out nor given back: the
            /// holes this allocator made, as the core counts them (`stats()["skipped"]`, and
            /// the exporters').
            #[getter]
            fn skipped(&self) -> u64 {
                self.inner.stats().skipped
            }

            /// Segments fetched.
            #[getter]
            fn fetches<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.driven.attr(py, intern!(py, "fetches"))
            }

            /// How long a call waits for a segment when none is left, in ms.
            #[getter]
            fn wait_ms<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.driven.attr(py, intern!(py, "wait_ms"))
            }

            #[setter]
            fn set_wait_ms(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
                self.driven.set_wait_ms(py, value)
            }

            /// Gives what is unused back (the last segment's rest; every period's) and closes
            /// the connections.
            fn close(slf: &Bound<'_, Self>) -> PyResult<()> {
                slf.get().driven.close(slf.as_any())
            }

            fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
                slf
            }

            #[pyo3(signature = (*_exc))]
            fn __exit__(
                slf: &Bound<'_, Self>,
                _exc: &Bound<'_, pyo3::types::PyTuple>,
            ) -> PyResult<()> {
                Self::close(slf)
            }
        }
    };
}
pub(crate) use driven_methods;

/// The options every allocator class takes, checked: the segments' sizes (`min_size`,
/// `max_size`, `target_ms`) as the allocator's policy, and the driver's keyword arguments
/// (`schema`, `wait_ms`, passed on as given).
pub(crate) fn driver_options<'py>(
    py: Python<'py>,
    schema: Option<&Bound<'py, PyAny>>,
    min_size: Option<&Bound<'py, PyAny>>,
    max_size: Option<&Bound<'py, PyAny>>,
    target_ms: Option<&Bound<'py, PyAny>>,
    wait_ms: Option<&Bound<'py, PyAny>>,
) -> PyResult<(SizePolicy, Bound<'py, PyDict>)> {
    let policy = SizePolicy::new();
    let arg = |v: Option<&Bound<'_, PyAny>>, name, default| {
        v.map_or(Ok(default), |v| u64_arg(v, name, Arg::Other))
    };
    let min = arg(min_size, "min_size", policy.min)?;
    let max = arg(max_size, "max_size", policy.max)?;
    let target = arg(target_ms, "target_ms", policy.target_ms)?;
    if min == 0 || max < min || max > shardid::sql::MAX_SEGMENT {
        return Err(invalid_argument(
            py,
            "min_size",
            "must be at least 1 and at most max_size, itself at most 2**40",
        ));
    }
    let kwargs = PyDict::new(py);
    if let Some(schema) = schema {
        kwargs.set_item("schema", schema)?;
    }
    if let Some(wait_ms) = wait_ms {
        kwargs.set_item("wait_ms", wait_ms)?;
    }
    Ok((policy.bounds(min, max).target_ms(target), kwargs))
}

/// The error of a segment the allocator refused (the driver handed over a bad one).
#[cold]
pub(crate) fn refused(py: Python<'_>, e: &impl std::fmt::Debug) -> PyErr {
    invalid_argument(
        py,
        "segment",
        &format!("was refused by the allocator: {e:?}"),
    )
}

impl PyDenseIds {
    /// Asks the driver to start `fetch`, if any.
    fn start(&self, ids: &Bound<'_, Self>, fetch: Option<Fetch>) -> PyResult<()> {
        if let Some(fetch) = fetch
            && let Err(e) = self
                .driven
                .driver
                .bind(ids.py())
                .call_method1(intern!(ids.py(), "_start"), (ids, fetch.size))
        {
            // Not started: let a later call start it.
            self.inner.fetch_failed(shardid::now_ms());
            return Err(e);
        }
        Ok(())
    }
}

driven_methods! {
    impl PyDenseIds forwards [
        /// The tag.
        tag,
        /// The ticket servers' connection strings.
        servers,
    ] {
        /// Dense IDs of `tag` from segments of the PostgreSQL server(s) at `conninfo`.
        #[new]
        #[pyo3(signature = (conninfo, tag, *, schema = None, min_size = None, max_size = None, target_ms = None, wait_ms = None, _driver = None))]
        #[allow(clippy::too_many_arguments, clippy::used_underscore_binding)] // the Python signature
        fn new(
            py: Python<'_>,
            conninfo: &Bound<'_, PyAny>,
            tag: &Bound<'_, PyAny>,
            schema: Option<&Bound<'_, PyAny>>,
            min_size: Option<&Bound<'_, PyAny>>,
            max_size: Option<&Bound<'_, PyAny>>,
            target_ms: Option<&Bound<'_, PyAny>>,
            wait_ms: Option<&Bound<'_, PyAny>>,
            _driver: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let (policy, kwargs) =
                driver_options(py, schema, min_size, max_size, target_ms, wait_ms)?;
            // `_driver`: the Python side to drive it with, `shardid.segments._Driver` (threads) by
            // default, `_AsyncDriver` for `AsyncDenseIds` (fetches as tasks on the event loop).
            let driver = match _driver {
                Some(class) => class.clone(),
                None => py.import("shardid.segments")?.getattr("_Driver")?,
            }
            .call((conninfo, tag), Some(&kwargs))?
            .unbind();
            let inner = std::sync::Arc::new(SegmentAllocator::new(policy));
            let (bound, tag_text) = (driver.bind(py), tag.str()?.to_string());
            let schema_text = bound.getattr(intern!(py, "schema"))?.str()?.to_string();
            shardid::stats::register_segments(&inner, &schema_text, &tag_text);
            Ok(Self {
                inner,
                driven: Driven::new(driver),
            })
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            let driver = self.driven.driver.bind(py);
            Ok(format!(
                "DenseIds(tag={}, schema={}, servers={})",
                driver.getattr("tag")?.repr()?,
                driver.getattr("schema")?.repr()?,
                driver.getattr("servers")?.len()?,
            ))
        }

        /// `n` IDs, increasing (waiting for segments as `next_id` does).
        fn next_ids<'py>(slf: &Bound<'py, Self>, n: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
            slf.get()
                .driven
                .driver
                .bind(slf.py())
                .call_method1(intern!(slf.py(), "next_ids"), (slf, n))
        }

        /// The next ID of this allocator (increasing); waits (through `_when_empty`) when both
        /// segments are used up.
        #[inline]
        fn next_id(slf: &Bound<'_, Self>) -> PyResult<u64> {
            let this = slf.get();
            if this.driven.usable() {
                match this.inner.next_id_with(shardid::now_ms) {
                    Ok((id, fetch)) => {
                        this.start(slf, fetch)?;
                        return Ok(id);
                    }
                    // This caller starts the fetch that is due, then waits like the others.
                    Err(Empty::Fetch(fetch)) => this.start(slf, Some(fetch))?,
                    Err(Empty::Wait) => {}
                }
            }
            this.driven
                .driver
                .bind(slf.py())
                .call_method1(intern!(slf.py(), "_when_empty"), (slf,))?
                .extract()
        }

        /// The next ID, or `None` when both segments are used up (or closed, or forked): the retry
        /// of a `next_id()` that found them used up (counted once among the empty waits).
        fn _try_next_id(slf: &Bound<'_, Self>) -> PyResult<Option<u64>> {
            let this = slf.get();
            if !this.driven.usable() {
                return Ok(None);
            }
            match this.inner.retry_id_with(shardid::now_ms) {
                Ok((id, fetch)) => {
                    this.start(slf, fetch)?;
                    Ok(Some(id))
                }
                Err(Empty::Fetch(fetch)) => {
                    this.start(slf, Some(fetch))?;
                    Ok(None)
                }
                Err(Empty::Wait) => Ok(None),
            }
        }

        /// Up to `n` IDs (fewer when both segments run out); `retry`: the rest of a batch that
        /// found them used up already (counted once among the empty waits).
        #[pyo3(signature = (n, retry = false))]
        fn _take_ids<'py>(
            slf: &Bound<'py, Self>,
            n: &Bound<'py, PyAny>,
            retry: bool,
        ) -> PyResult<Vec<u64>> {
            let this = slf.get();
            if !this.driven.usable() {
                return Ok(Vec::new());
            }
            let mut ids = crate::args::ids_for(n)?;
            let (written, fetch) = slf.py().detach(|| {
                if retry {
                    this.inner.retry_ids_with(&mut ids, shardid::now_ms)
                } else {
                    this.inner.next_ids_with(&mut ids, shardid::now_ms)
                }
            });
            ids.truncate(written);
            this.start(slf, fetch)?;
            Ok(ids)
        }

        /// What this allocator did, as a dict of counts named by the core's table (`fetches`,
        /// `failed_fetches`, `fetch_latency_max_ms`, `empty_waits`, `remaining`, ...).
        fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
            crate::stats::to_dict(
                py,
                shardid::stats::SegmentStats::METRICS,
                &self.inner.stats().values(),
            )
        }

        /// Counts what `_unused()` left as given back (`returned`) or as holes.
        fn _settle(&self, returned: bool) {
            if let Some(unused) = self.inner.unused() {
                self.inner.settle(unused, returned);
            }
        }

        /// Starts the first fetch of a new allocator (or none, if one is there or under way).
        fn _prime(slf: &Bound<'_, Self>) -> PyResult<()> {
            let this = slf.get();
            this.start(slf, this.inner.prime(shardid::now_ms()))
        }

        fn _fill(&self, py: Python<'_>, first: u64, count: u64, stride: u64) -> PyResult<()> {
            let segment = Segment {
                first,
                count,
                stride,
            };
            self.inner
                .fill(segment, shardid::now_ms())
                .map_err(|e| refused(py, &e))
        }

        fn _fetch_failed(&self) {
            self.inner.fetch_failed(shardid::now_ms());
        }

        /// Makes every later call wait (and the subclass raise), and stops reporting the allocator
        /// to exporters: a closed `DenseIds` is gone from them, as Node's (the object may live on).
        /// Whether this close gives the unused rest back (`Driven::shut`).
        fn _shut(&self) -> bool {
            shardid::stats::unregister_segments(&self.inner);
            self.driven.shut()
        }

        /// Whether this is a forked child of the process the allocator serves.
        fn _forked(&self) -> bool {
            self.driven.forked()
        }

        /// In a forked child: forgets the parent's segments and serves this process.
        fn _adopt(&self) {
            self.inner.reset();
            self.driven.adopt();
        }

        /// `(first, end, count, lost)` of what is left to give back, or `None`.
        fn _unused(&self) -> Option<(u64, u64, u64, u64)> {
            self.inner
                .unused()
                .map(|u| (u.first, u.end, u.count, u.lost))
        }

        fn _fetching(&self) -> bool {
            self.inner.fetching()
        }
    }
}

/// The core's take and give-back of segments (`shardid::segment::protocol::SegmentProtocol`),
/// for `_segments_async.py` to run over psycopg, PyMySQL/aiomysql or `sqlite3`: the rotation
/// across ticket servers, each database's statements and steps, the MySQL family's resend of a
/// take rolled back whole and a serial period's first take are the core's; the executor only
/// runs them. `next()` answers a tuple: `("connect", server)`, `("run", server, sql,
/// values)`, `("segment", (first, count, stride))`, `("given_back", returned)`, `("failed",
/// None)` (raise the last driver error fed) or `("failed", (code, sqlstate, reason))` (the
/// core's refusal), `("idle",)`.
#[pyclass(module = "shardid._shardid", name = "_SegmentProtocol")]
pub(crate) struct PySegmentProtocol {
    inner: shardid::segment::protocol::SegmentProtocol,
}

/// The core's dialect of a name the executor gives (`INVALID_ARGUMENT` on `dialect`).
fn dialect_of(py: Python<'_>, name: &str) -> PyResult<Dialect> {
    Dialect::from_name(name).ok_or_else(|| invalid_argument(py, "dialect", "is not a dialect"))
}

/// A Python value of a row as a cell of the core: integers past `i64` as their text.
enum Column {
    Null,
    Bool(bool),
    Int(i64),
    Text(String),
}

#[pymethods]
impl PySegmentProtocol {
    /// The protocol of an allocator over `servers` ticket servers of `dialect` (`"postgres"`,
    /// `"mysql"`, `"mariadb"`, `"sqlite"`) whose `schema` holds the segments' DDL; statements in
    /// psycopg's and PyMySQL's `%s` style, `?` for `sqlite3`.
    #[new]
    fn new(py: Python<'_>, dialect: &str, schema: &str, servers: usize) -> PyResult<Self> {
        let dialect = dialect_of(py, dialect)?;
        let placeholders = match dialect {
            Dialect::Sqlite => Placeholders::Question,
            _ => Placeholders::Format,
        };
        let inner = shardid::segment::protocol::SegmentProtocol::new(
            dialect,
            schema,
            placeholders,
            servers,
        )
        .map_err(|e| sql_error(py, e))?;
        Ok(Self { inner })
    }

    /// Starts a take of `size` (0: the size the row remembers) of `tag`.
    fn take(&mut self, tag: &str, size: u64) {
        self.inner.take(tag, size);
    }

    /// Starts a take of `size` numbers of serial tag `tag`'s `period` (`""`: never resets).
    fn take_period(&mut self, tag: &str, period: &str, size: u64) {
        self.inner.take_period(tag, period, size);
    }

    /// Starts giving `first..end` of `tag` back to the last server taken from.
    fn give_back(&mut self, tag: &str, first: u64, end: u64) {
        self.inner.give_back(tag, first, end);
    }

    /// What to do next (see the class).
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        use shardid::segment::protocol::{Command, Failure, Step};
        Ok(match self.inner.next() {
            Step::Connect { server } => ("connect", server).into_pyobject(py)?.into_any(),
            Step::Run {
                server,
                command: Command::Sql { statement, values },
            } => ("run", server, statement, crate::step::values(py, &values)?)
                .into_pyobject(py)?
                .into_any(),
            Step::Segment(s) => ("segment", (s.first, s.count, s.stride))
                .into_pyobject(py)?
                .into_any(),
            Step::GivenBack(returned) => ("given_back", returned).into_pyobject(py)?.into_any(),
            Step::Failed(Failure::Refused {
                kind,
                sqlstate,
                reason,
            }) => ("failed", Some((kind.code(), sqlstate, reason)))
                .into_pyobject(py)?
                .into_any(),
            Step::Failed(_) => ("failed", None::<(u8,)>).into_pyobject(py)?.into_any(),
            _ => ("idle",).into_pyobject(py)?.into_any(),
        })
    }

    /// The connection of `"connect"`'s server is there; its server's dialect.
    fn connected(&mut self, py: Python<'_>, dialect: &str) -> PyResult<()> {
        self.inner.connected(dialect_of(py, dialect)?);
        Ok(())
    }

    /// The first row of `"run"`'s statement (`None`: none; on MySQL a statement without rows:
    /// `(rowcount, lastrowid)`).
    fn answer(&mut self, row: Option<Vec<Bound<'_, PyAny>>>) -> PyResult<()> {
        use shardid::sql::Cell;
        let columns = row
            .map(|row| {
                row.iter()
                    .map(|value| {
                        Ok(if value.is_none() {
                            Column::Null
                        } else if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
                            Column::Bool(b.is_true())
                        } else if let Ok(n) = value.extract::<i64>() {
                            Column::Int(n)
                        } else {
                            Column::Text(value.str()?.to_string())
                        })
                    })
                    .collect::<PyResult<Vec<_>>>()
            })
            .transpose()?;
        let cells: Option<Vec<Cell<'_>>> = columns.as_ref().map(|row| {
            row.iter()
                .map(|column| match column {
                    Column::Null => Cell::Null,
                    Column::Bool(b) => Cell::Bool(*b),
                    Column::Int(n) => Cell::Int(*n),
                    Column::Text(text) => Cell::Text(text),
                })
                .collect()
        });
        self.inner.answer(cells.as_deref());
        Ok(())
    }

    /// The last step failed with the driver's error `code` (a SQLSTATE, MySQL's error number as
    /// text, `None`: none, or the connection could not be opened).
    #[pyo3(signature = (code = None))]
    fn failed(&mut self, code: Option<&str>) {
        self.inner.failed(code);
    }
}
