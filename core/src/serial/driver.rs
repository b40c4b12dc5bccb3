//! The Rust driver of business serial numbers (features `serial` and `postgres` or `mysql`):
//! the core's [`SerialAllocator`] with fetches on a thread of their own, as the Python and Node
//! clients do. What differs between the databases (the statements that read a registration,
//! take a period's segment, give one back, register a tag) is a [`SerialClient`] over the one
//! connection trait ([`Client`]); the rest — the fetch thread, reconnecting, giving periods
//! back, the errors — is here once.

use std::boxed::Box;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use std::vec::Vec;
use std::{fmt, format, thread};

use super::{
    Blocked, Parsed, PeriodFetch, Registration, Retired, Serial, SerialAllocator, SerialError,
    SerialFillError, SerialFormat, VolumeHiding,
};
use crate::ErrorKind;
use crate::driver::{Client, ConnectError, Owned};
use crate::segment::driver::{Done, Failed, One, SegmentClient, execute};
use crate::segment::{Segment, SizePolicy, Unused};
use crate::sql::{Dialect, SERIAL_MISMATCH, UNKNOWN_TAG};

/// Why `Serials` could not issue or parse a serial.
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
    /// The allocator was closed (`Serials::close`): it issues no more serials, and retrying
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
    /// The database could not be reached, or the connection broke
    /// ([`ErrorKind::DatabaseUnreachable`]); the message keeps the system's own words.
    Unreachable(Box<dyn std::error::Error + Send + Sync>),
    /// The database refused a statement ([`ErrorKind::Database`]); the message keeps the
    /// server's own words.
    Database(Box<dyn std::error::Error + Send + Sync>),
}

impl SerialsError {
    /// The kind of the shared table this error is reported as.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Serial(e) => e.kind(),
            Self::Unavailable { .. } => ErrorKind::SegmentUnavailable,
            Self::Unreachable(_) => ErrorKind::DatabaseUnreachable,
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
            Self::Unreachable(e) | Self::Database(e) => self.kind().render(f, |_, f| e.fmt(f)),
        }
    }
}

impl std::error::Error for SerialsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Unreachable(e) | Self::Database(e) => Some(&**e),
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

impl SerialsError {
    fn of_connect<C: Client>(e: ConnectError<C::Error>) -> Self {
        match e {
            ConnectError::Url(reason) => Self::InvalidArgument {
                argument: C::URL_ARGUMENT,
                reason,
            },
            ConnectError::NotMysql { server, reason } => {
                Self::Unreachable(format!("{server} did not greet as MySQL: {reason}").into())
            }
            ConnectError::Driver(e) => Self::Unreachable(C::boxed(e)),
        }
    }
}

/// A database error as what it is: an unknown tag and a mismatch as their kinds, a lost
/// connection as unreachable.
fn database_error<C: Client>(tag: &str, e: C::Error) -> SerialsError {
    match C::code(&e).as_deref() {
        Some(UNKNOWN_TAG) => SerialsError::UnknownTag { tag: tag.into() },
        Some(SERIAL_MISMATCH) => SerialsError::Mismatch {
            tag: tag.into(),
            reason: C::message(&e).map_or_else(
                || C::describe(&e),
                |m| super::mismatch_reason(&m, tag).to_string(),
            ),
        },
        _ if C::broken(&e) => SerialsError::Unreachable(C::boxed(e)),
        _ => SerialsError::Database(C::boxed(e)),
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

/// What a database's serials need besides its [`SegmentClient`] (whose protocol takes a
/// period's segments): the statements of one schema and the steps of each call.
pub(crate) trait SerialClient: SegmentClient {
    /// The statements of one schema.
    type Statements: Send + Sync + 'static;

    /// The statements of `schema`; the reason it is not a valid name.
    fn statements(schema: &str) -> Result<<Self as SerialClient>::Statements, String>;

    /// The segments' statements among them (the protocol of a period's take).
    fn segments(s: &<Self as SerialClient>::Statements) -> &<Self as SegmentClient>::Statements;

    /// Registers `tag` (see `create_serial`) on a server of `dialect`; `Some(reason)` when
    /// the tag is registered otherwise, or another tag prints its format
    /// (`SERIAL_MISMATCH`; the database may raise it as its error instead).
    fn create(
        &mut self,
        s: &<Self as SerialClient>::Statements,
        dialect: Dialect,
        r: &Registering<'_>,
    ) -> Result<Option<String>, Self::Error>;

    /// The registration of `tag`: `(canonical format, zone, max gap)`, `None` for none.
    fn info(
        &mut self,
        s: &<Self as SerialClient>::Statements,
        dialect: Dialect,
        tag: &str,
    ) -> Result<Option<(String, String, u64)>, Self::Error>;

    /// Gives `first..end` of the period's tag `period_tag` back; whether the server took it.
    fn give_back(
        &mut self,
        s: &<Self as SerialClient>::Statements,
        dialect: Dialect,
        period_tag: &str,
        first: u64,
        end: u64,
    ) -> Result<bool, Self::Error>;
}

/// A registration as every dialect's `info` statement returns it: `(canonical format, zone, max
/// gap)` (a gap the row leaves empty is 1), `None` for no row.
pub(crate) fn registration_of(row: Option<Vec<Owned>>) -> Option<(String, String, u64)> {
    row.and_then(|row| match row.as_slice() {
        [Owned::Text(canonical), Owned::Text(zone), max_gap] => Some((
            canonical.clone(),
            zone.clone(),
            max_gap.int().map_or(1, i64::unsigned_abs),
        )),
        _ => None,
    })
}

/// What registering and connecting both check before any connection, in this order (so every
/// client names the same first problem): the tag, the URL, the format in its zone, the schema.
fn checked<C: SerialClient>(
    url: &str,
    schema: &str,
    tag: &str,
    format: &str,
    zone: &str,
) -> Result<(SerialFormat, <C as SerialClient>::Statements), SerialsError> {
    check_tag(tag)?;
    if let Some(reason) = C::url_problem(url) {
        return Err(SerialsError::InvalidArgument {
            argument: C::URL_ARGUMENT,
            reason,
        });
    }
    let parsed = SerialFormat::new(format, zone)?;
    Ok((parsed, statements::<C>(schema)?))
}

/// What a registration writes: the tag, its format and zone as given, the columns the core
/// derives from them, and `max_gap` (at least 1).
pub(crate) struct Registering<'a> {
    pub(crate) tag: &'a str,
    pub(crate) format: &'a str,
    pub(crate) zone: &'a str,
    pub(crate) columns: Registration,
    pub(crate) max_gap: u32,
}

/// Registers a serial tag on the server `url` names: see each database's `create_serial`.
pub(crate) fn create_serial<C: SerialClient>(
    url: &str,
    schema: &str,
    tag: &str,
    format: &str,
    zone: &str,
    max_gap: u32,
) -> Result<(), SerialsError> {
    let (parsed, s) = checked::<C>(url, schema, tag, format, zone)?;
    let (mut client, dialect) = open::<C>(url)?;
    let registering = Registering {
        tag,
        format,
        zone: parsed.zone(),
        columns: parsed.registration(),
        max_gap: max_gap.max(1),
    };
    let result = client
        .create(&s, dialect, &registering)
        .map_err(|e| database_error::<C>(tag, e));
    client.close();
    match result? {
        Some(reason) => Err(SerialsError::Mismatch {
            tag: tag.into(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A new connection of `C` to `url` and its server's dialect.
fn open<C: Client>(url: &str) -> Result<(C, Dialect), SerialsError> {
    let mut conn = C::connect(url).map_err(SerialsError::of_connect::<C>)?;
    let dialect = conn
        .detect()
        .map_err(|e| SerialsError::Unreachable(C::boxed(e)))?;
    Ok((conn, dialect))
}

fn statements<C: SerialClient>(
    schema: &str,
) -> Result<<C as SerialClient>::Statements, SerialsError> {
    <C as SerialClient>::statements(schema).map_err(|reason| SerialsError::InvalidArgument {
        argument: "schema",
        reason,
    })
}

/// What the fetch thread and the callers share.
struct Shared<C: SerialClient> {
    allocator: SerialAllocator,
    url: String,
    statements: <C as SerialClient>::Statements,
    /// The connection and its server's dialect (`None`: reconnect at the next statement).
    client: Mutex<Option<(C, Dialect)>>,
    /// The server's stride, learnt at the first take where the dialect needs it.
    stride: Mutex<Option<u64>>,
    /// The last fetch's error (`None` after a success).
    error: Mutex<Option<String>>,
    arrived: Condvar,
    arrived_lock: Mutex<()>,
    closed: AtomicBool,
    wait: Duration,
}

impl<C: SerialClient> Shared<C> {
    fn with_client<T>(
        &self,
        f: impl FnOnce(&mut C, &<C as SerialClient>::Statements, Dialect) -> Result<T, C::Error>,
    ) -> Result<T, String> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        if client.as_ref().is_none_or(|(conn, _)| conn.is_closed()) {
            *client = Some(open::<C>(&self.url).map_err(|e| match e {
                SerialsError::Unreachable(e) => e.to_string(),
                e => e.to_string(),
            })?);
        }
        let Some((conn, dialect)) = client.as_mut() else {
            unreachable!("connected above")
        };
        let result = f(conn, &self.statements, *dialect);
        result.map_err(|e| {
            let why = C::describe(&e);
            if C::broken(&e) {
                // Reconnect next time; closed, not dropped (see `Shared`'s drop).
                if let Some((lost, _)) = client.take() {
                    lost.close();
                }
            }
            why
        })
    }

    fn fetch(&self, fetch: PeriodFetch) {
        let tag = self.allocator.tag().to_string();
        let period = fetch.period.to_string();
        let result = self.with_client(|conn, s, dialect| {
            let mut stride = self.stride.lock().unwrap_or_else(PoisonError::into_inner);
            take_period(conn, s, dialect, (&tag, &period), fetch.size, &mut stride)
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
                    let whole = Unused {
                        first: segment.first,
                        end: segment.end(),
                        count: segment.count,
                        stride: segment.stride,
                        lost: 0,
                    };
                    self.give_back_rest(&fetch.period.tag(&tag), whole);
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
                *error = Some(e);
            }
        }
        drop(error);
        let _guard = self
            .arrived_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.arrived.notify_all();
    }

    /// Gives a rest of the period's tag `period_tag` back; the allocator counts what could not
    /// be as skipped ([`SerialAllocator::settle`]).
    fn give_back_rest(&self, period_tag: &str, unused: Unused) {
        let returned = unused.count > 0
            && self
                .with_client(|conn, s, dialect| {
                    SerialClient::give_back(conn, s, dialect, period_tag, unused.first, unused.end)
                })
                .unwrap_or(false);
        self.allocator.settle(unused, returned);
    }

    fn give_back(&self, retired: Retired) {
        self.give_back_rest(&retired.period.tag(self.allocator.tag()), retired.unused);
    }
}

/// The serial numbers of one tag over the connections of `C`: what each database's `Serials`
/// wraps.
pub(crate) struct Driver<C: SerialClient> {
    shared: Arc<Shared<C>>,
}

impl<C: SerialClient> fmt::Debug for Driver<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serials")
            .field("tag", &self.shared.allocator.tag())
            .field("format", &self.shared.allocator.format().as_str())
            .finish_non_exhaustive()
    }
}

/// A `Serials` dropped without `close` gives its unused rest back as `close` does (at the end
/// of `main`, or of whatever owned it), so the next process continues at the next number
/// rather than past the segments this one held (issue 59); after `close`, nothing. Bounded as
/// `close` is: a fetch in flight is waited for at most `wait`, then one statement. A process
/// ended by `std::process::exit`, a panic that aborts or a signal runs no drops: what it held
/// is a hole, never a duplicate.
/// The connection closed through [`Client::close`], not dropped: the `postgres` crate's client
/// blocks on a runtime of its own when dropped, which panics on a tokio runtime's thread. After
/// [`Driver::close`] there is none left.
impl<C: SerialClient> Drop for Shared<C> {
    fn drop(&mut self) {
        let client = self
            .client
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((conn, _)) = client.take() {
            conn.close();
        }
    }
}

impl<C: SerialClient> Drop for Driver<C> {
    fn drop(&mut self) {
        self.close();
    }
}

impl<C: SerialClient> Driver<C> {
    /// Connects to the server `url` names, whose `schema` holds the segments' DDL, and checks
    /// that `tag` is registered with `format` in `zone`.
    pub(crate) fn connect(
        url: &str,
        tag: &str,
        format: &str,
        zone: &str,
        schema: &str,
        policy: SizePolicy,
    ) -> Result<Self, SerialsError> {
        let (parsed, statements) = checked::<C>(url, schema, tag, format, zone)?;
        let (mut client, dialect) = open::<C>(url)?;
        let registered = match client.info(&statements, dialect, tag) {
            Err(e) => Err(database_error::<C>(tag, e)),
            Ok(None) => Err(SerialsError::UnknownTag { tag: tag.into() }),
            Ok(Some((canonical, registered_zone, max_gap))) => {
                match parsed.mismatch(&canonical, &registered_zone) {
                    Some(reason) => Err(SerialsError::Mismatch {
                        tag: tag.into(),
                        reason,
                    }),
                    None => Ok(max_gap),
                }
            }
        };
        let max_gap = match registered {
            Ok(max_gap) => max_gap,
            Err(e) => {
                // Closed, not dropped: the `postgres` crate's drop panics on a tokio runtime's
                // thread (see `Shared`'s drop).
                client.close();
                return Err(e);
            }
        };
        let hiding = VolumeHiding::random(max_gap.max(1));
        Ok(Self {
            shared: Arc::new(Shared {
                allocator: SerialAllocator::new(parsed, tag, policy, hiding),
                url: url.into(),
                statements,
                client: Mutex::new(Some((client, dialect))),
                stride: Mutex::new(None),
                error: Mutex::new(None),
                arrived: Condvar::new(),
                arrived_lock: Mutex::new(()),
                closed: AtomicBool::new(false),
                wait: Duration::from_secs(5),
            }),
        })
    }

    pub(crate) fn format(&self) -> &SerialFormat {
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

    // The public methods' docs are on each database's `Serials`.

    pub(crate) fn next_serial(&self) -> Result<Serial, SerialsError> {
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

    pub(crate) fn next_serial_at(&self, unix_ms: u64) -> Result<Serial, SerialsError> {
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

    pub(crate) fn parse(&self, serial: &str) -> Result<Parsed, SerialsError> {
        Ok(self.format().parse(serial)?)
    }

    pub(crate) fn skipped(&self) -> u64 {
        self.stats().skipped
    }

    pub(crate) fn stats(&self) -> crate::stats::SegmentStats {
        self.shared.allocator.stats()
    }

    pub(crate) fn close(&self) -> u64 {
        // Once: a second close (or the drop after one) gives nothing back again (see the
        // segments' driver).
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return self.skipped();
        }
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
        let client = self
            .shared
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((conn, _)) = client {
            conn.close();
        }
        self.skipped()
    }
}

/// A segment of `tag`'s `period` (its text, as `PeriodFetch` renders it): the core's protocol
/// ([`crate::segment::protocol::SegmentProtocol::take_period`]: the take; at the period's first,
/// where its tag does not exist yet, the registration checked, the tag made and the take again),
/// run on this connection as Python's and Node's clients run it. `stride` is the server's, once
/// learnt where the dialect needs it. `Ok(None)`: the protocol refused (the tag is not
/// registered, the period is not one of its periods, an answer no DDL makes).
fn take_period<C: SerialClient>(
    conn: &mut C,
    s: &<C as SerialClient>::Statements,
    dialect: Dialect,
    (tag, period): (&str, &str),
    size: u64,
    stride: &mut Option<u64>,
) -> Result<Option<Segment>, C::Error> {
    let segments = C::segments(s);
    let Some(mut protocol) = C::protocol(segments, 1) else {
        return Ok(None);
    };
    protocol.learnt(0, *stride);
    protocol.take_period(tag, period, size);
    let done = execute(&mut protocol, &mut One(conn, dialect), segments);
    *stride = protocol.stride(0);
    match done {
        Ok(Done::Segment(segment)) => Ok(Some(segment)),
        Err(Failed::Driver(e)) => Err(e),
        _ => Ok(None),
    }
}

/// A database's public `create_serial` and `Serials` (wrapping a [`Driver`] over `$client`);
/// `$url` says what the URL is in the docs.
macro_rules! serials_client {
    ($client:ty, $database:literal, $url:literal) => {
        #[doc = concat!(
            "Registers the serial tag `tag` with `format` in `zone` on the server `url` names (",
            $url,
            "), whose `schema` holds the DDL, once; `max_gap` above 1 hides the volume (see ",
            "[`super::VolumeHiding`]). Registering it again alike does nothing.\n\n",
            "# Errors\n[`SerialsError::Serial`] for a bad format or zone, ",
            "[`SerialsError::Mismatch`] for a tag registered otherwise (or a format another tag ",
            "prints), [`SerialsError::Unreachable`], [`SerialsError::Database`]."
        )]
        // The arguments in `Serials::connect`'s order (url, tag, format, zone, schema), as
        // `create_tag` takes `DenseIds::connect`'s: the schema came before the tag here, and
        // every argument is a `&str`, so a call written in the other's order compiled (issue 59).
        pub fn create_serial(
            url: &str,
            tag: &str,
            format: &str,
            zone: &str,
            schema: &str,
            max_gap: u32,
        ) -> Result<(), SerialsError> {
            super::driver::create_serial::<$client>(url, schema, tag, format, zone, max_gap)
        }

        #[doc = concat!(
            "The serial numbers of one tag from ",
            $database,
            " segments: see the [module](self) docs. `Sync`: share it (in an `Arc`) between threads."
        )]
        #[derive(Debug)]
        pub struct Serials(super::driver::Driver<$client>);

        impl Serials {
            #[doc = concat!(
                "Connects to the server `url` names (",
                $url,
                "), whose `schema` holds the DDL, and checks that `tag` is registered with ",
                "`format` in `zone`.\n\n# Errors\n[`SerialsError::Serial`] for a bad format or ",
                "zone, [`SerialsError::InvalidArgument`] for a bad tag, schema or URL, ",
                "[`SerialsError::UnknownTag`], [`SerialsError::Mismatch`], ",
                "[`SerialsError::Unreachable`] when the server cannot be reached."
            )]
            pub fn connect(
                url: &str,
                tag: &str,
                format: &str,
                zone: &str,
                schema: &str,
                policy: $crate::segment::SizePolicy,
            ) -> Result<Self, SerialsError> {
                super::driver::Driver::connect(url, tag, format, zone, schema, policy).map(Self)
            }
            /// The format.
            pub fn format(&self) -> &SerialFormat {
                self.0.format()
            }

            /// The next serial, issued now (the process clock, which never goes back).
            ///
            /// # Errors
            /// As the `next_serial_at` method.
            pub fn next_serial(&self) -> Result<Serial, SerialsError> {
                self.0.next_serial()
            }

            /// The next serial, issued at `unix_ms` (a scripted clock, a replay): its period and
            /// fields are those of `unix_ms` — or of the first instant of the current period, if
            /// `unix_ms` is behind it (periods only move forward). Waits at most 5 s for a segment.
            ///
            /// # Errors
            /// [`SerialsError::Serial`] (a time the format refuses, the period's width used up),
            /// [`SerialsError::Unavailable`] (retry later), [`SerialsError::Closed`] after
            /// the `close` method.
            pub fn next_serial_at(&self, unix_ms: u64) -> Result<Serial, SerialsError> {
                self.0.next_serial_at(unix_ms)
            }

            /// Parses a serial of this format back.
            ///
            /// # Errors
            /// `SerialError::Serial` (as [`SerialsError::Serial`]) for text this format
            /// cannot have made.
            pub fn parse(&self, serial: &str) -> Result<Parsed, SerialsError> {
                self.0.parse(serial)
            }

            /// Numbers taken from the database and neither issued nor given back: the holes this
            /// allocator made (tails of periods another process took segments of after it).
            pub fn skipped(&self) -> u64 {
                self.0.skipped()
            }

            /// What this client did, over every period: segments fetched and their latency,
            /// calls that waited for one, `skipped`, what is left of the current period's
            /// segment ([`SegmentStats`](crate::stats::SegmentStats), as dense IDs report it).
            pub fn stats(&self) -> $crate::stats::SegmentStats {
                self.0.stats()
            }

            /// Gives every period's unused rest back and closes the connection; returns
            /// the `skipped` method. Call it when no other thread takes serials any more.
            pub fn close(&self) -> u64 {
                self.0.close()
            }
        }
    };
}

pub(crate) use serials_client;
