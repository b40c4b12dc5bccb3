//! The Rust client of dense IDs from segments, over the `postgres` crate (feature `postgres`):
//! [`DenseIds`] runs the core's [`SegmentAllocator`] with fetches on a thread of their own, as
//! the Python (psycopg) and Node (pg) clients do.
//!
//! ```no_run
//! use shardid::segment::postgres::DenseIds;
//! use shardid::segment::SizePolicy;
//!
//! let orders = DenseIds::connect("host=127.0.0.1 user=app dbname=app", "orders", "seg", SizePolicy::new())?;
//! let id = orders.next_id()?;
//! orders.close();
//! # Ok::<(), shardid::segment::postgres::SegmentError>(())
//! ```

use postgres::types::Type;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use std::{fmt, format, thread};

use super::{Empty, Fetch, Segment, SegmentAllocator, SizePolicy};
use crate::ErrorKind;
use crate::driver::postgres::Described;
use crate::sql::{Placeholders, Segments, UNKNOWN_TAG};

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
    /// A tag or schema name that is not allowed ([`ErrorKind::InvalidArgument`]).
    InvalidArgument {
        /// The argument.
        argument: &'static str,
        /// Why.
        reason: String,
    },
    /// The first connection failed: the database cannot be reached
    /// ([`ErrorKind::DatabaseUnreachable`]; the driver's error is the source).
    Database(postgres::Error),
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
            Self::Database(e) => self.kind().render(f, |_, f| Described(e).fmt(f)),
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
    config: String,
    take: String,
    give_back: String,
    client: Mutex<Option<postgres::Client>>,
    /// The last fetch's error (`None` after a success).
    error: Mutex<Option<String>>,
    unknown_tag: AtomicBool,
    arrived: Condvar,
    arrived_lock: Mutex<()>,
    closed: AtomicBool,
    wait: Duration,
}

impl Shared {
    fn fetch(&self, fetch: Fetch) {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        let result = (|| -> Result<Segment, postgres::Error> {
            if client.as_ref().is_none_or(postgres::Client::is_closed) {
                *client = Some(postgres::Client::connect(&self.config, postgres::NoTls)?);
            }
            let Some(conn) = client.as_mut() else {
                unreachable!("connected above")
            };
            let size = i64::try_from(fetch.size).unwrap_or(i64::MAX);
            // One round trip on the unnamed statement: no prepared statement outlives it, which
            // a pooler in transaction mode could not carry.
            let rows = conn.query_typed(
                self.take.as_str(),
                &[(&self.tag, Type::TEXT), (&size, Type::INT8)],
            )?;
            let Some(row) = rows.first() else {
                unreachable!("take_segment returns one row or raises")
            };
            let (first, count, stride): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
            Ok(Segment {
                first: first.unsigned_abs(),
                count: count.unsigned_abs(),
                stride: stride.unsigned_abs(),
            })
        })();
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
                if e.code().map(postgres::error::SqlState::code) == Some(UNKNOWN_TAG) {
                    self.unknown_tag.store(true, Ordering::Release);
                }
                if e.is_closed() || e.code().is_none() {
                    *client = None; // reconnect at the next fetch
                }
                *error = Some(Described(&e).to_string());
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

/// Dense IDs of one tag from PostgreSQL segments: see the [module](self) docs. `Sync`: share
/// it (in an `Arc`) between threads.
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
    /// Connects to the server (`config`: a libpq-style connection string) whose `schema` holds
    /// the segments' DDL, and takes the first segment of `tag`.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] for a bad tag or schema name,
    /// [`SegmentError::UnknownTag`], [`SegmentError::Database`] when the server cannot be
    /// reached, [`SegmentError::Unavailable`] when the first segment does not arrive.
    pub fn connect(
        config: &str,
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
        if let Some(reason) = crate::driver::postgres::url_problem(config) {
            return Err(SegmentError::InvalidArgument {
                argument: "config",
                reason,
            });
        }
        let statements = Segments::new(schema)
            .map_err(|e| SegmentError::InvalidArgument {
                argument: "schema",
                reason: e.to_string(),
            })?
            .statements(Placeholders::Numbered);
        let client =
            postgres::Client::connect(config, postgres::NoTls).map_err(SegmentError::Database)?;
        let shared = Arc::new(Shared {
            allocator: SegmentAllocator::new(policy),
            tag: tag.into(),
            config: config.into(),
            take: statements.take().to_string(),
            give_back: statements.give_back().to_string(),
            client: Mutex::new(Some(client)),
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
                // Both segments are used up: one ID through next_id waits for the fetch.
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
        let returned = (|| -> Result<bool, postgres::Error> {
            if client.as_ref().is_none_or(postgres::Client::is_closed) {
                *client = Some(postgres::Client::connect(
                    &self.shared.config,
                    postgres::NoTls,
                )?);
            }
            let Some(conn) = client.as_mut() else {
                unreachable!("connected above")
            };
            let first = i64::try_from(unused.first).unwrap_or(i64::MAX);
            let end = i64::try_from(unused.end).unwrap_or(i64::MAX);
            let rows = conn.query_typed(
                self.shared.give_back.as_str(),
                &[
                    (&self.shared.tag, Type::TEXT),
                    (&first, Type::INT8),
                    (&end, Type::INT8),
                ],
            )?;
            Ok(rows.first().is_some_and(|row| row.get(0)))
        })()
        .unwrap_or(false);
        *client = None;
        unused.lost + if returned { 0 } else { unused.count }
    }
}
