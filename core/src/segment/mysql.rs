//! The Rust client of dense IDs from segments on MySQL 8 and MariaDB, over the `mysql` crate
//! (feature `mysql`): [`DenseIds`] runs the core's [`SegmentAllocator`] with fetches on a
//! thread of their own, each fetch the steps of [`MysqlFetch`] (one `UPDATE` once the stride is
//! known), as the Python (PyMySQL) and Node (mysql2) clients do.
//!
//! ```no_run
//! use shardid::segment::mysql::DenseIds;
//! use shardid::segment::SizePolicy;
//!
//! let orders = DenseIds::connect("mysql://app:secret@127.0.0.1:3306/seg", "orders", "seg", SizePolicy::new())?;
//! let id = orders.next_id()?;
//! orders.close();
//! # Ok::<(), shardid::segment::mysql::SegmentError>(())
//! ```

use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use std::{fmt, format, thread};

use mysql::prelude::Queryable;

use super::{Empty, Fetch, Segment, SegmentAllocator, SizePolicy};
use crate::ErrorKind;
use crate::sql::mysql::connect::{ConnectError, connect, detect};
use crate::sql::mysql::{FetchError, FetchStep, MysqlFetch, MysqlUrl};
use crate::sql::{Dialect, MysqlSegments, Placeholders};

/// Why [`DenseIds`] could not hand out an ID.
#[derive(Debug)]
#[non_exhaustive]
pub enum SegmentError {
    /// Both segments are used up and no fetch arrived in time: retry later
    /// ([`ErrorKind::SegmentUnavailable`]).
    Unavailable {
        /// The tag.
        tag: String,
        /// What went wrong (the last fetch's error, or no segment in time).
        reason: String,
    },
    /// The allocator was closed ([`DenseIds::close`]): it hands out no more IDs, and retrying
    /// cannot change that ([`ErrorKind::Closed`]).
    Closed {
        /// The tag.
        tag: String,
    },
    /// The tag was never created ([`ErrorKind::UnknownTag`]).
    UnknownTag {
        /// The tag.
        tag: String,
    },
    /// A tag, schema or URL that is not allowed ([`ErrorKind::InvalidArgument`]).
    InvalidArgument {
        /// The argument.
        argument: &'static str,
        /// Why.
        reason: String,
    },
    /// The server did not greet as MySQL ([`ErrorKind::NotMysql`]).
    NotMysql {
        /// `host:port`.
        server: String,
        /// What it did instead.
        reason: String,
    },
    /// The first connection failed: the database cannot be reached
    /// ([`ErrorKind::DatabaseUnreachable`]; the driver's error is the source).
    Database(mysql::Error),
}

impl SegmentError {
    /// The kind of the shared table this error is reported as.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Unavailable { .. } => ErrorKind::SegmentUnavailable,
            Self::Closed { .. } => ErrorKind::Closed,
            Self::Database(_) => ErrorKind::DatabaseUnreachable,
            Self::UnknownTag { .. } => ErrorKind::UnknownTag,
            Self::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Self::NotMysql { .. } => ErrorKind::NotMysql,
        }
    }

    fn of_connect(e: ConnectError) -> Self {
        match e {
            ConnectError::Url(reason) => Self::InvalidArgument {
                argument: "url",
                reason: reason.into(),
            },
            ConnectError::NotMysql { server, reason } => Self::NotMysql { server, reason },
            ConnectError::Driver(e) => Self::Database(e),
        }
    }
}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unavailable { tag, reason } => self.kind().render(f, |name, f| match name {
                "tag" => f.write_str(tag),
                _ => f.write_str(reason),
            }),
            Self::UnknownTag { tag } => self.kind().render(f, |name, f| match name {
                "tag" => f.write_str(tag),
                _ => f.write_str("create_tag"),
            }),
            Self::Closed { tag } => self
                .kind()
                .render(f, |_, f| write!(f, "DenseIds of tag {tag}")),
            Self::InvalidArgument { argument, reason } => {
                self.kind().render(f, |name, f| match name {
                    "argument" => f.write_str(argument),
                    _ => f.write_str(reason),
                })
            }
            Self::NotMysql { server, reason } => self.kind().render(f, |name, f| match name {
                "server" => f.write_str(server),
                _ => f.write_str(reason),
            }),
            Self::Database(e) => self.kind().render(f, |_, f| write!(f, "{e}")),
        }
    }
}

impl std::error::Error for SegmentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Database(e) => Some(e),
            _ => None,
        }
    }
}

/// What the fetch thread and the callers share.
struct Shared {
    allocator: SegmentAllocator,
    tag: String,
    url: String,
    /// The read, the take and the give-back, for MySQL and for MariaDB (the server names itself
    /// in the rows it writes: [`Dialect::server_identity`]).
    statements: [[String; 3]; 2],
    /// The connection, and its server's dialect.
    client: Mutex<Option<(mysql::Conn, Dialect)>>,
    /// The tag's stride on the server, learnt at the first fetch.
    stride: Mutex<Option<u64>>,
    /// The last fetch's error (`None` after a success).
    error: Mutex<Option<String>>,
    unknown_tag: AtomicBool,
    arrived: Condvar,
    arrived_lock: Mutex<()>,
    closed: AtomicBool,
    wait: Duration,
}

/// Whether the server rolled the step back whole (a deadlock, a Galera certification
/// conflict) and the core says to send it again.
fn rolled_back(fetch: &mut MysqlFetch, e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(e) if fetch.rolled_back(e.code))
}

/// Why one fetch failed.
enum Failed {
    Tag(FetchError),
    Driver(mysql::Error),
    Connect(SegmentError),
}

impl Shared {
    fn statement(&self, dialect: Dialect, which: usize) -> &str {
        &self.statements[usize::from(dialect == Dialect::Mariadb)][which]
    }

    fn take(&self, conn: &mut (mysql::Conn, Dialect), size: u64) -> Result<Segment, Failed> {
        let (conn, dialect) = (&mut conn.0, conn.1);
        let mut stride = self.stride.lock().unwrap_or_else(PoisonError::into_inner);
        let mut fetch = MysqlFetch::new(size, *stride);
        loop {
            match fetch.step() {
                FetchStep::Read => {
                    let row: Option<(i64, i64, i64)> =
                        match conn.exec_first(self.statement(dialect, 0), (self.tag.as_str(),)) {
                            Ok(row) => row,
                            Err(e) if rolled_back(&mut fetch, &e) => continue,
                            Err(e) => return Err(Failed::Driver(e)),
                        };
                    fetch.read(row).map_err(Failed::Tag)?;
                    *stride = fetch.stride();
                }
                FetchStep::Take { size } => {
                    let tag = self.tag.as_str();
                    match conn.exec_drop(
                        self.statement(dialect, 1),
                        (size, size, size, tag, size, size),
                    ) {
                        Ok(()) => {}
                        Err(e) if rolled_back(&mut fetch, &e) => continue,
                        Err(e) => return Err(Failed::Driver(e)),
                    }
                    let took = fetch.took(conn.affected_rows(), conn.last_insert_id());
                    if let Some(segment) = took.map_err(Failed::Tag)? {
                        return Ok(segment);
                    }
                }
            }
        }
    }

    fn connected<'c>(
        &self,
        client: &'c mut Option<(mysql::Conn, Dialect)>,
    ) -> Result<&'c mut (mysql::Conn, Dialect), SegmentError> {
        if client.is_none() {
            let mut conn = connect(&self.url).map_err(SegmentError::of_connect)?;
            let dialect = detect(&mut conn).map_err(SegmentError::Database)?;
            *client = Some((conn, dialect));
        }
        Ok(client
            .as_mut()
            .unwrap_or_else(|| unreachable!("connected above")))
    }

    fn fetch(&self, fetch: Fetch) {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        let result = self
            .connected(&mut client)
            .map_err(Failed::Connect)
            .and_then(|conn| self.take(conn, fetch.size));
        let now = crate::now_ms();
        let mut error = self.error.lock().unwrap_or_else(PoisonError::into_inner);
        match result {
            Ok(segment) if self.allocator.fill(segment, now).is_ok() => *error = None,
            Ok(segment) => {
                self.allocator.fetch_failed(now);
                *error = Some(format!(
                    "the database returned an unusable segment {segment:?}"
                ));
            }
            Err(e) => {
                self.allocator.fetch_failed(now);
                *error = Some(match e {
                    Failed::Tag(FetchError::UnknownTag) => {
                        self.unknown_tag.store(true, Ordering::Release);
                        "the tag does not exist".into()
                    }
                    Failed::Tag(e) => e.to_string(),
                    Failed::Driver(e) => {
                        if !matches!(e, mysql::Error::MySqlError(_)) {
                            *client = None; // reconnect at the next fetch
                        }
                        e.to_string()
                    }
                    Failed::Connect(e) => e.to_string(),
                });
            }
        }
        drop(error);
        drop(client);
        let _guard = self
            .arrived_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.arrived.notify_all();
    }
}

/// Dense IDs of one tag from MySQL or MariaDB segments: see the [module](self) docs. `Sync`:
/// share it (in an `Arc`) between threads.
pub struct DenseIds {
    shared: Arc<Shared>,
}

impl fmt::Debug for DenseIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DenseIds")
            .field("tag", &self.shared.tag)
            .finish_non_exhaustive()
    }
}

impl DenseIds {
    /// Connects to the server `url` names (`mysql://user:password@host:port/database`, or
    /// `mariadb://`) whose database `schema` holds the segments' DDL, and takes the first
    /// segment of `tag`.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] for a bad tag, schema or URL,
    /// [`SegmentError::UnknownTag`], [`SegmentError::NotMysql`], [`SegmentError::Database`]
    /// when the server cannot be reached, [`SegmentError::Unavailable`] when the first segment
    /// does not arrive.
    pub fn connect(
        url: &str,
        tag: &str,
        schema: &str,
        policy: SizePolicy,
    ) -> Result<Self, SegmentError> {
        if tag.is_empty() || tag.len() > crate::sql::MAX_TAG_LEN {
            return Err(SegmentError::InvalidArgument {
                argument: "tag",
                reason: "must be 1 to 200 bytes of text".into(),
            });
        }
        let ddl = MysqlSegments::new(schema).map_err(|e| SegmentError::InvalidArgument {
            argument: "schema",
            reason: e.to_string(),
        })?;
        let statements = [Dialect::Mysql, Dialect::Mariadb].map(|dialect| {
            let s = ddl.dialect(dialect).statements(Placeholders::Question);
            [
                s.read().to_string(),
                s.take().to_string(),
                s.give_back().to_string(),
            ]
        });
        MysqlUrl::parse(url).map_err(|reason| SegmentError::InvalidArgument {
            argument: "url",
            reason: reason.into(),
        })?;
        let mut client = connect(url).map_err(SegmentError::of_connect)?;
        let dialect = detect(&mut client).map_err(SegmentError::Database)?;
        let shared = Arc::new(Shared {
            allocator: SegmentAllocator::new(policy),
            tag: tag.into(),
            url: url.into(),
            statements,
            client: Mutex::new(Some((client, dialect))),
            stride: Mutex::new(None),
            error: Mutex::new(None),
            unknown_tag: AtomicBool::new(false),
            arrived: Condvar::new(),
            arrived_lock: Mutex::new(()),
            closed: AtomicBool::new(false),
            wait: Duration::from_secs(5),
        });
        if let Some(fetch) = shared.allocator.prime(crate::now_ms()) {
            shared.fetch(fetch); // the first segment, before the first ID
        }
        if shared.unknown_tag.load(Ordering::Acquire) {
            return Err(SegmentError::UnknownTag { tag: tag.into() });
        }
        Ok(Self { shared })
    }

    fn start(&self, fetch: Option<Fetch>) {
        if let Some(fetch) = fetch {
            let shared = Arc::clone(&self.shared);
            let started = thread::Builder::new()
                .name("shardid-segment".into())
                .spawn(move || shared.fetch(fetch));
            if started.is_err() {
                self.shared.allocator.fetch_failed(crate::now_ms());
            }
        }
    }

    fn failure(&self) -> SegmentError {
        let tag = self.shared.tag.clone();
        if self.shared.unknown_tag.load(Ordering::Acquire) {
            return SegmentError::UnknownTag { tag };
        }
        if self.shared.closed.load(Ordering::Acquire) {
            return SegmentError::Closed { tag };
        }
        // What the last fetch met, or (none failed) that none arrived in time: a refusal is
        // not "did not answer".
        let reason = match self
            .shared
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_deref()
        {
            Some(e) => format!("the last fetch failed: {e}"),
            None => format!(
                "no segment arrived within {} ms",
                self.shared.wait.as_millis()
            ),
        };
        SegmentError::Unavailable { tag, reason }
    }

    /// The next ID (increasing), waiting at most 5 s for a segment when both are used up.
    ///
    /// # Errors
    /// [`SegmentError::Unavailable`] (retry later), [`SegmentError::UnknownTag`].
    pub fn next_id(&self) -> Result<u64, SegmentError> {
        let deadline = Instant::now() + self.shared.wait;
        loop {
            if self.shared.closed.load(Ordering::Acquire) {
                return Err(self.failure());
            }
            match self.shared.allocator.next_id_with(crate::now_ms) {
                Ok((id, fetch)) => {
                    self.start(fetch);
                    return Ok(id);
                }
                Err(Empty::Fetch(fetch)) => self.start(Some(fetch)),
                Err(Empty::Wait) => {}
            }
            let now = Instant::now();
            if now >= deadline || self.shared.unknown_tag.load(Ordering::Acquire) {
                return Err(self.failure());
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

    /// Fills `out` with IDs, waiting for segments as [`DenseIds::next_id`] does.
    ///
    /// # Errors
    /// As [`DenseIds::next_id`]; the IDs written before the error are lost (a hole, never a
    /// duplicate).
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), SegmentError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(self.failure());
        }
        let mut written = 0;
        while written < out.len() {
            let (n, fetch) = self
                .shared
                .allocator
                .next_ids_with(&mut out[written..], crate::now_ms);
            self.start(fetch);
            written += n;
            if n == 0 && written < out.len() {
                out[written] = self.next_id()?;
                written += 1;
            }
        }
        Ok(())
    }

    /// What this allocator did: fetches, failed fetches and their latency, waits with both
    /// segments empty, numbers skipped, what is left of the current segment
    /// ([`crate::stats::SegmentStats`], the names of Python's and Node's `stats()`).
    pub fn stats(&self) -> crate::stats::SegmentStats {
        self.shared.allocator.stats()
    }

    /// Gives the unused rest back (a restart then continues at the next number) and closes the
    /// connection; returns how many numbers were lost (neither handed out nor given back). Call
    /// it when no other thread takes IDs any more.
    pub fn close(&self) -> u64 {
        self.shared.closed.store(true, Ordering::Release);
        let deadline = Instant::now() + self.shared.wait;
        while self.shared.allocator.fetching() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        let Some(unused) = self.shared.allocator.unused() else {
            return 0;
        };
        let mut client = self
            .shared
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let returned = self
            .shared
            .connected(&mut client)
            .ok()
            .and_then(|(conn, dialect)| {
                let (first, end) = (unused.first, unused.end);
                let tag = self.shared.tag.as_str();
                conn.exec_drop(
                    self.shared.statement(*dialect, 2),
                    (first, tag, end, first, first),
                )
                .ok()
                .map(|()| conn.affected_rows() == 1)
            })
            .unwrap_or(false);
        *client = None;
        unused.lost + if returned { 0 } else { unused.count }
    }
}
