//! The Rust client of business serial numbers, over the `postgres` crate (features `serial`
//! and `postgres`): [`Serials`] runs the core's [`SerialAllocator`] with fetches on a thread of
//! their own, as the Python (psycopg) and Node (pg) clients do.
//!
//! ```no_run
//! use shardid::segment::SizePolicy;
//! use shardid::serial::postgres::{Serials, create_serial};
//!
//! let config = "host=127.0.0.1 user=app dbname=app";
//! let format = "ORD-{yyyy}{MM}{dd}-{seq:6}";
//! create_serial(config, "seg", "orders", format, "Asia/Shanghai", 1)?; // once
//! let orders = Serials::connect(config, "orders", format, "Asia/Shanghai", "seg", SizePolicy::new())?;
//! let serial = orders.next_serial()?; // ORD-20261125-000001, ...
//! assert_eq!(orders.parse(&serial)?.number, 1);
//! orders.close();
//! # Ok::<(), shardid::serial::postgres::SerialsError>(())
//! ```

use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use std::vec::Vec;
use std::{fmt, format, thread};

use super::{
    Blocked, Parsed, PeriodFetch, Retired, Serial, SerialAllocator, SerialError, SerialFillError,
    SerialFormat, VolumeHiding,
};
use crate::ErrorKind;
use crate::driver::postgres::Described;
use crate::segment::{Segment, SizePolicy};
use crate::sql::{Placeholders, SERIAL_MISMATCH, Segments, UNKNOWN_TAG};
use postgres::types::Type;

/// Why [`Serials`] could not issue or parse a serial.
#[derive(Debug)]
#[non_exhaustive]
pub enum SerialsError {
    /// The format, zone, serial or time was refused, or the period ran past the width.
    Serial(SerialError),
    /// The period's segments are used up and no fetch arrived in time: retry later
    /// ([`ErrorKind::SegmentUnavailable`]).
    Unavailable {
        /// The tag.
        tag: String,
        /// What went wrong.
        reason: String,
    },
    /// The allocator was closed ([`Serials::close`]): it issues no more serials, and retrying
    /// cannot change that ([`ErrorKind::Closed`]).
    Closed {
        /// The tag.
        tag: String,
    },
    /// The tag was never registered ([`ErrorKind::UnknownTag`]).
    UnknownTag {
        /// The tag.
        tag: String,
    },
    /// The tag is registered with another format or zone ([`ErrorKind::SerialMismatch`]).
    Mismatch {
        /// The tag.
        tag: String,
        /// How.
        reason: String,
    },
    /// A tag or schema name that is not allowed ([`ErrorKind::InvalidArgument`]).
    InvalidArgument {
        /// The argument.
        argument: &'static str,
        /// Why.
        reason: String,
    },
    /// The database could not be reached ([`ErrorKind::DatabaseUnreachable`]: the driver's
    /// error has no SQLSTATE) or refused a statement ([`ErrorKind::Database`]); the message
    /// keeps the server's own words.
    Database(postgres::Error),
}

impl SerialsError {
    /// The kind of the shared table this error is reported as.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Serial(e) => e.kind(),
            Self::Unavailable { .. } => ErrorKind::SegmentUnavailable,
            Self::Database(e) if e.code().is_none() => ErrorKind::DatabaseUnreachable,
            Self::Database(_) => ErrorKind::Database,
            Self::Closed { .. } => ErrorKind::Closed,
            Self::UnknownTag { .. } => ErrorKind::UnknownTag,
            Self::Mismatch { .. } => ErrorKind::SerialMismatch,
            Self::InvalidArgument { .. } => ErrorKind::InvalidArgument,
        }
    }
}

impl fmt::Display for SerialsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |pairs: &[(&str, &str)], f: &mut fmt::Formatter<'_>| {
            self.kind().render(f, |name, f| {
                let value = pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("", |(_, v)| v);
                f.write_str(value)
            })
        };
        match self {
            Self::Serial(e) => e.fmt(f),
            Self::UnknownTag { tag } => text(&[("tag", tag), ("create", "create_serial")], f),
            Self::Closed { tag } => self
                .kind()
                .render(f, |_, f| write!(f, "Serials of tag {tag}")),
            Self::Unavailable { tag, reason } | Self::Mismatch { tag, reason } => {
                text(&[("tag", tag), ("reason", reason)], f)
            }
            Self::InvalidArgument { argument, reason } => {
                text(&[("argument", argument), ("reason", reason)], f)
            }
            Self::Database(e) => self.kind().render(f, |_, f| Described(e).fmt(f)),
        }
    }
}

impl std::error::Error for SerialsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Database(e) => Some(e),
            Self::Serial(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SerialError> for SerialsError {
    fn from(e: SerialError) -> Self {
        Self::Serial(e)
    }
}

/// A database error as what it is: an unknown tag and a mismatch as their kinds.
fn database_error(tag: &str, e: postgres::Error) -> SerialsError {
    match e.code().map(postgres::error::SqlState::code) {
        Some(code) if code == UNKNOWN_TAG => SerialsError::UnknownTag { tag: tag.into() },
        Some(code) if code == SERIAL_MISMATCH => SerialsError::Mismatch {
            tag: tag.into(),
            reason: e.as_db_error().map_or_else(
                || Described(&e).to_string(),
                |d| super::mismatch_reason(d.message(), tag).to_string(),
            ),
        },
        _ => SerialsError::Database(e),
    }
}

/// `INVALID_ARGUMENT` on `config` for a URL the PostgreSQL client does not take (the core's
/// one rule), before any connection.
fn check_config(config: &str) -> Result<(), SerialsError> {
    match crate::driver::postgres::url_problem(config) {
        Some(reason) => Err(SerialsError::InvalidArgument {
            argument: "config",
            reason,
        }),
        None => Ok(()),
    }
}

fn check_tag(tag: &str) -> Result<(), SerialsError> {
    match super::tag_problem(tag) {
        Some(reason) => Err(SerialsError::InvalidArgument {
            argument: "tag",
            reason: reason.into(),
        }),
        None => Ok(()),
    }
}

fn statements(schema: &str) -> Result<crate::sql::SerialStatements<'_>, SerialsError> {
    Ok(Segments::new(schema)
        .map_err(|e| SerialsError::InvalidArgument {
            argument: "schema",
            reason: e.to_string(),
        })?
        .serial_statements(Placeholders::Numbered))
}

/// Registers the serial tag `tag` with `format` in `zone` on the server at `config` (its
/// `schema` holding the segments' DDL), once; `max_gap` above 1 hides the volume (see
/// [`VolumeHiding`]). Registering it again alike does nothing.
///
/// # Errors
/// [`SerialsError::Serial`] for a bad format or zone, [`SerialsError::Mismatch`] for a tag
/// registered otherwise (or a format another tag prints), [`SerialsError::Database`].
pub fn create_serial(
    config: &str,
    schema: &str,
    tag: &str,
    format: &str,
    zone: &str,
    max_gap: u32,
) -> Result<(), SerialsError> {
    check_tag(tag)?;
    check_config(config)?;
    let parsed = SerialFormat::new(format, zone)?;
    let create = statements(schema)?.create().to_string();
    let mut client =
        postgres::Client::connect(config, postgres::NoTls).map_err(SerialsError::Database)?;
    let r = parsed.registration();
    let max_gap = i32::try_from(max_gap.max(1)).unwrap_or(i32::MAX);
    // Every statement here is sent unnamed, in one round trip (`query_typed`): a pooler in
    // transaction mode may run the next one on another server session, which would not hold a
    // statement prepared by name.
    client
        .query_typed(
            create.as_str(),
            &[
                (&tag, Type::TEXT),
                (&format, Type::TEXT),
                (&parsed.zone(), Type::TEXT),
                (&r.canonical, Type::TEXT),
                (&r.shape, Type::TEXT),
                (&r.pieces, Type::TEXT_ARRAY),
                (&r.width, Type::INT4),
                (&r.reset, Type::TEXT),
                (&max_gap, Type::INT4),
            ],
        )
        .map_err(|e| database_error(tag, e))?;
    Ok(())
}

/// What the fetch thread and the callers share.
struct Shared {
    allocator: SerialAllocator,
    config: String,
    take: String,
    give_back: String,
    client: Mutex<Option<postgres::Client>>,
    /// The last fetch's error (`None` after a success).
    error: Mutex<Option<String>>,
    arrived: Condvar,
    arrived_lock: Mutex<()>,
    closed: AtomicBool,
    skipped: AtomicU64,
    wait: Duration,
}

impl Shared {
    fn with_client<T>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> Result<T, postgres::Error>,
    ) -> Result<T, postgres::Error> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        if client.as_ref().is_none_or(postgres::Client::is_closed) {
            *client = Some(postgres::Client::connect(&self.config, postgres::NoTls)?);
        }
        let Some(conn) = client.as_mut() else {
            unreachable!("connected above")
        };
        let result = f(conn);
        if let Err(e) = &result
            && (e.is_closed() || e.code().is_none())
        {
            *client = None; // reconnect next time
        }
        result
    }

    fn fetch(&self, fetch: PeriodFetch) {
        let tag = self.allocator.tag().to_string();
        let period = fetch.period.to_string();
        let size = i64::try_from(fetch.size).unwrap_or(i64::MAX);
        let result = self.with_client(|conn| {
            let rows = conn.query_typed(
                self.take.as_str(),
                &[
                    (&tag, Type::TEXT),
                    (&period, Type::TEXT),
                    (&size, Type::INT8),
                ],
            )?;
            Ok(rows.first().map(|row| {
                let (first, count, stride): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
                Segment {
                    first: first.unsigned_abs(),
                    count: count.unsigned_abs(),
                    stride: stride.unsigned_abs(),
                }
            }))
        });
        let now = crate::now_ms();
        let mut error = self.error.lock().unwrap_or_else(PoisonError::into_inner);
        match result {
            Ok(None) => {
                self.allocator.fetch_failed(fetch, now);
                *error = Some("the database returned no segment".into());
            }
            Ok(Some(segment)) => match self.allocator.fill(fetch, segment, now) {
                Ok(()) => *error = None,
                Err(SerialFillError::Stale) => {
                    // The period was given up meanwhile: its numbers go back, or are lost.
                    drop(error);
                    self.give_back_range(
                        &fetch.period.tag(&tag),
                        segment.first,
                        segment.end(),
                        segment.count,
                    );
                    error = self.error.lock().unwrap_or_else(PoisonError::into_inner);
                }
                Err(e) => {
                    self.allocator.fetch_failed(fetch, now);
                    *error = Some(format!(
                        "the database returned an unusable segment {segment:?} ({e:?})"
                    ));
                }
            },
            Err(e) => {
                self.allocator.fetch_failed(fetch, now);
                *error = Some(Described(&e).to_string());
            }
        }
        drop(error);
        let _guard = self
            .arrived_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.arrived.notify_all();
    }

    /// Gives `first..end` of a period's tag back; counts `count` as skipped if it cannot.
    fn give_back_range(&self, period_tag: &str, first: u64, end: u64, count: u64) {
        let first = i64::try_from(first).unwrap_or(i64::MAX);
        let end = i64::try_from(end).unwrap_or(i64::MAX);
        let returned = self
            .with_client(|conn| {
                let rows = conn.query_typed(
                    self.give_back.as_str(),
                    &[
                        (&period_tag, Type::TEXT),
                        (&first, Type::INT8),
                        (&end, Type::INT8),
                    ],
                )?;
                Ok(rows.first().is_some_and(|row| row.get::<_, bool>(0)))
            })
            .unwrap_or(false);
        if !returned {
            self.skipped.fetch_add(count, Ordering::Relaxed);
        }
    }

    fn give_back(&self, retired: Retired) {
        let u = retired.unused;
        self.skipped.fetch_add(u.lost, Ordering::Relaxed);
        if u.count > 0 {
            self.give_back_range(
                &retired.period.tag(self.allocator.tag()),
                u.first,
                u.end,
                u.count,
            );
        }
    }
}

/// The serial numbers of one tag from PostgreSQL segments: see the [module](self) docs.
/// `Sync`: share it (in an `Arc`) between threads.
pub struct Serials {
    shared: Arc<Shared>,
}

impl fmt::Debug for Serials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serials")
            .field("tag", &self.shared.allocator.tag())
            .field("format", &self.shared.allocator.format().as_str())
            .finish_non_exhaustive()
    }
}

impl Serials {
    /// Connects to the server (`config`: a libpq-style connection string) whose `schema` holds
    /// the segments' DDL, and checks that `tag` is registered with `format` in `zone`.
    ///
    /// # Errors
    /// [`SerialsError::Serial`] for a bad format or zone, [`SerialsError::InvalidArgument`]
    /// for a bad tag or schema, [`SerialsError::UnknownTag`], [`SerialsError::Mismatch`],
    /// [`SerialsError::Database`] when the server cannot be reached.
    pub fn connect(
        config: &str,
        tag: &str,
        format: &str,
        zone: &str,
        schema: &str,
        policy: SizePolicy,
    ) -> Result<Self, SerialsError> {
        check_tag(tag)?;
        check_config(config)?;
        let parsed = SerialFormat::new(format, zone)?;
        let statements = statements(schema)?;
        let mut client =
            postgres::Client::connect(config, postgres::NoTls).map_err(SerialsError::Database)?;
        let rows = client
            .query_typed(
                statements.info().to_string().as_str(),
                &[(&tag, Type::TEXT)],
            )
            .map_err(|e| database_error(tag, e))?;
        let Some(row) = rows.first() else {
            return Err(SerialsError::UnknownTag { tag: tag.into() });
        };
        let (canonical, registered_zone, max_gap): (String, String, i32) =
            (row.get(0), row.get(1), row.get(2));
        if let Some(reason) = parsed.mismatch(&canonical, &registered_zone) {
            return Err(SerialsError::Mismatch {
                tag: tag.into(),
                reason,
            });
        }
        let hiding = VolumeHiding::random(u64::try_from(max_gap).unwrap_or(1));
        Ok(Self {
            shared: Arc::new(Shared {
                allocator: SerialAllocator::new(parsed, tag, policy, hiding),
                config: config.into(),
                take: statements.take().to_string(),
                give_back: statements.give_back().to_string(),
                client: Mutex::new(Some(client)),
                error: Mutex::new(None),
                arrived: Condvar::new(),
                arrived_lock: Mutex::new(()),
                closed: AtomicBool::new(false),
                skipped: AtomicU64::new(0),
                wait: Duration::from_secs(5),
            }),
        })
    }

    /// The format.
    pub fn format(&self) -> &SerialFormat {
        self.shared.allocator.format()
    }

    fn start(&self, fetch: Option<PeriodFetch>) {
        if let Some(fetch) = fetch {
            let shared = Arc::clone(&self.shared);
            let started = thread::Builder::new()
                .name("shardid-serial".into())
                .spawn(move || shared.fetch(fetch));
            if started.is_err() {
                self.shared.allocator.fetch_failed(fetch, crate::now_ms());
            }
        }
    }

    fn unavailable(&self) -> SerialsError {
        let tag = self.shared.allocator.tag().to_string();
        if self.shared.closed.load(Ordering::Acquire) {
            return SerialsError::Closed { tag };
        }
        let reason = {
            let error = self
                .shared
                .error
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            format!(
                "the database did not answer within {} ms{}",
                self.shared.wait.as_millis(),
                error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            )
        };
        SerialsError::Unavailable { tag, reason }
    }

    /// The next serial, issued now (the process clock, which never goes back).
    ///
    /// # Errors
    /// As [`Serials::next_serial_at`].
    pub fn next_serial(&self) -> Result<Serial, SerialsError> {
        // The common case first, without the clock of the deadline.
        if !self.shared.closed.load(Ordering::Acquire) {
            match self.shared.allocator.next_now() {
                Ok(issued) => {
                    self.after(&issued);
                    return Ok(issued.serial);
                }
                Err(Blocked::Fetch(fetch)) => self.start(Some(fetch)),
                Err(Blocked::Retire(retired)) => self.shared.give_back(retired),
                Err(Blocked::Error(e)) => return Err(e.into()),
                Err(Blocked::Wait) => {}
            }
        }
        self.issue(None)
    }

    /// What an issued serial asks of the driver: the fetch that became due, a period to give
    /// back.
    fn after(&self, issued: &super::Issued) {
        self.start(issued.fetch);
        if issued.retire
            && let Some(retired) = self.shared.allocator.retire()
        {
            self.shared.give_back(retired);
        }
    }

    /// The next serial, issued at `unix_ms` (a scripted clock, a replay): its period and
    /// fields are those of `unix_ms` — or of the first instant of the current period, if
    /// `unix_ms` is behind it (periods only move forward). Waits at most 5 s for a segment.
    ///
    /// # Errors
    /// [`SerialsError::Serial`] (a time the format refuses, the period's width used up),
    /// [`SerialsError::Unavailable`] (retry later), [`SerialsError::Closed`] after
    /// [`Serials::close`].
    pub fn next_serial_at(&self, unix_ms: u64) -> Result<Serial, SerialsError> {
        self.issue(Some(unix_ms))
    }

    /// A serial at `unix_ms` (`None`: now), waiting for segments at most 5 s.
    fn issue(&self, unix_ms: Option<u64>) -> Result<Serial, SerialsError> {
        let deadline = Instant::now() + self.shared.wait;
        let allocator = &self.shared.allocator;
        loop {
            if self.shared.closed.load(Ordering::Acquire) {
                return Err(self.unavailable());
            }
            let next = match unix_ms {
                Some(ms) => allocator.next_at(ms, crate::now_ms),
                None => allocator.next_now(),
            };
            match next {
                Ok(issued) => {
                    self.after(&issued);
                    return Ok(issued.serial);
                }
                Err(Blocked::Fetch(fetch)) => self.start(Some(fetch)),
                Err(Blocked::Retire(retired)) => {
                    self.shared.give_back(retired);
                    continue;
                }
                Err(Blocked::Error(e)) => return Err(e.into()),
                Err(Blocked::Wait) if !allocator.fetching() => {
                    thread::yield_now(); // another thread is switching periods
                    continue;
                }
                Err(Blocked::Wait) => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.unavailable());
            }
            let guard = self
                .shared
                .arrived_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let wait = (deadline - now).min(Duration::from_millis(50));
            drop(self.shared.arrived.wait_timeout(guard, wait));
        }
    }

    /// Parses a serial of this format back.
    ///
    /// # Errors
    /// [`SerialError::Serial`] (as [`SerialsError::Serial`]) for text this format cannot have
    /// made.
    pub fn parse(&self, serial: &str) -> Result<Parsed, SerialsError> {
        Ok(self.format().parse(serial)?)
    }

    /// Numbers taken from the database and neither issued nor given back: the holes this
    /// allocator made (tails of periods another process took segments of after it).
    pub fn skipped(&self) -> u64 {
        self.shared.skipped.load(Ordering::Relaxed)
    }

    /// Gives every period's unused rest back and closes the connection; returns
    /// [`Serials::skipped`]. Call it when no other thread takes serials any more.
    pub fn close(&self) -> u64 {
        self.shared.closed.store(true, Ordering::Release);
        let deadline = Instant::now() + self.shared.wait;
        while self.shared.allocator.fetching() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        let rests: Vec<Retired> = self
            .shared
            .allocator
            .close()
            .into_iter()
            .flatten()
            .collect();
        for retired in rests {
            self.shared.give_back(retired);
        }
        *self
            .shared
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
        self.skipped()
    }
}
