//! The async Rust client of dense IDs from segments, over `tokio-postgres` (feature
//! `tokio-postgres`): the async twin of [`super::postgres::DenseIds`], for tokio applications
//! (axum, tonic, ...), where the blocking client would block a runtime's thread.
//!
//! It runs the core's [`SegmentAllocator`] (the hot path is the allocator's lock-free step, no
//! `await` on it) and executes the core's [`SegmentProtocol`] as the blocking PostgreSQL client
//! does (one `take_segment` per fetch with `query_typed`: one round trip on the unnamed
//! statement, so it works through a transaction pooler): it sends what the protocol says and
//! feeds back rows and error codes, holding no rule of a take. What is async's own:
//!
//! - A fetch is a tokio task of its own, spawned on the runtime the client was made on: the
//!   caller's future only waits for it (bounded, 5 s), and another task keeps running meanwhile.
//! - Cancellation-safe: a future of [`DenseIds`] dropped at any `await` hands out nothing twice
//!   and leaks no connection. An ID is taken and returned in one poll (no `await` between the
//!   allocator's step and the return); the fetch and the give-back run in their own tasks, which
//!   a dropped caller does not stop, so a segment taken is always handed to the allocator (or
//!   the fetch counted as failed) and the connection is released when the statement ends. A
//!   `connect` dropped while its first fetch is in flight leaves that segment unused: a hole,
//!   never a duplicate.
//! - The connection: one of its own to a URL ([`DenseIds::connect`], opened again when lost),
//!   the application's ([`DenseIds::with_client`]), or one its pool lends for each statement
//!   ([`DenseIds::with_pool`]: deadpool, bb8, ...), given back when the statement ends.
//!
//! The runtime needs its timer (`#[tokio::main]` and `Builder::enable_all` have it).
//!
//! ```no_run
//! # async fn run() -> Result<(), shardid::segment::tokio_postgres::SegmentError> {
//! use shardid::segment::SizePolicy;
//! use shardid::segment::tokio_postgres::DenseIds;
//!
//! let orders = DenseIds::connect("host=127.0.0.1 user=app dbname=app", "orders", "seg", SizePolicy::new()).await?;
//! let id = orders.next_id().await?;
//! orders.close().await; // the unused rest goes back
//! # Ok(()) }
//! ```

use std::boxed::Box;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use std::vec::Vec;
use std::{fmt, format};

use ::tokio::runtime::Handle;
use ::tokio::sync::Notify;
use ::tokio_postgres::Client;

pub use super::driver::SegmentError;
use super::driver::check_tag;
use super::protocol::{Command, Failure, SegmentProtocol, Step};
use super::{Empty, Fetch, Segment, SegmentAllocator, SizePolicy, Unused};
use crate::ErrorKind;
use crate::driver::Owned;
use crate::driver::postgres::{Described, ServerError, owned_row, texts, typed, url_problem};
use crate::sql::{Cell, Dialect, Placeholders, UNKNOWN_TAG};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A connection the application lends for one statement (a pool's guard, an `Arc<Client>`):
/// dropped, so given back, when the statement ends.
type Lent = Box<dyn Deref<Target = Client> + Send>;

type Lending = Pin<Box<dyn Future<Output = Result<Lent, BoxError>> + Send>>;

/// Where the statements go (the async lease's too: `crate::lease::tokio_postgres`).
pub(crate) enum Source {
    /// A connection of its own to `config`, opened at the first statement after it was lost.
    Own {
        config: String,
        conn: Box<::tokio::sync::Mutex<Option<Client>>>,
    },
    /// The application's connections, lent for each statement.
    Lender(Box<dyn Fn() -> Lending + Send + Sync>),
}

/// A connection for one statement: the client's own (locked) or a lent one.
pub(crate) enum Conn<'a> {
    Own(::tokio::sync::MutexGuard<'a, Option<Client>>),
    Lent(Lent),
}

impl Conn<'_> {
    pub(crate) fn client(&self) -> &Client {
        match self {
            Self::Own(guard) => guard
                .as_ref()
                .unwrap_or_else(|| unreachable!("opened when locked")),
            Self::Lent(lent) => lent,
        }
    }

    /// After `e`: a lost connection of its own is opened again at the next statement (a lent
    /// one is its pool's to judge).
    pub(crate) fn failed(&mut self, e: &::tokio_postgres::Error) {
        if let Self::Own(guard) = self
            && (e.is_closed() || e.code().is_none())
        {
            **guard = None;
        }
    }
}

impl Source {
    /// A connection of its own to `config`, already open (`conn`).
    pub(crate) fn own(config: &str, conn: Client) -> Self {
        Self::Own {
            config: config.into(),
            conn: Box::new(::tokio::sync::Mutex::new(Some(conn))),
        }
    }

    /// The application's connections, `lend` called for each statement (see
    /// [`DenseIds::with_pool`]).
    pub(crate) fn lender<F, Fut, C, E>(lend: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<C, E>> + Send + 'static,
        C: Deref<Target = Client> + Send + 'static,
        E: fmt::Display,
    {
        Self::Lender(Box::new(move || {
            let lending = lend();
            Box::pin(async move {
                match lending.await {
                    Ok(conn) => Ok(Box::new(conn) as Lent),
                    Err(e) => Err(e.to_string().into()),
                }
            })
        }))
    }

    /// A connection: its own, opened if there is none (the driver's task on `runtime`), or one
    /// the application lends.
    pub(crate) async fn conn(&self, runtime: &Handle) -> Result<Conn<'_>, String> {
        match self {
            Self::Own { config, conn } => {
                let mut guard = conn.lock().await;
                if guard.as_ref().is_none_or(Client::is_closed) {
                    *guard = Some(open(config, runtime).await.map_err(|e| e.to_string())?);
                }
                Ok(Conn::Own(guard))
            }
            Self::Lender(lend) => lend()
                .await
                .map(Conn::Lent)
                .map_err(|e| format!("the pool lent no connection: {e}")),
        }
    }

    /// Closes the connection of its own (its driver's task then ends).
    pub(crate) async fn close(&self) {
        if let Self::Own { conn, .. } = self {
            conn.lock().await.take();
        }
    }
}

/// A connection to `config`, its driver a task on `runtime`.
pub(crate) async fn open(config: &str, runtime: &Handle) -> Result<Client, SegmentError> {
    let (client, connection) = ::tokio_postgres::connect(config, ::tokio_postgres::NoTls)
        .await
        .map_err(|e| SegmentError::Database(ServerError::boxed(e)))?;
    // Ends when the client is dropped (or the server goes).
    drop(runtime.spawn(async move { drop(connection.await) }));
    Ok(client)
}

/// How an operation of the protocol ended.
enum Ended {
    Segment(Segment),
    GivenBack(bool),
}

/// What the fetch tasks and the callers share.
struct Shared {
    allocator: SegmentAllocator,
    tag: String,
    /// The take and the give-back's steps: one operation at a time (one fetch in flight; the
    /// give-back after it).
    protocol: Mutex<SegmentProtocol>,
    source: Source,
    /// The runtime the client was made on: its fetches run there, whoever polls the caller's
    /// future.
    runtime: Handle,
    /// The last fetch's error (`None` after a success).
    error: Mutex<Option<String>>,
    unknown_tag: AtomicBool,
    /// Woken when a fetch ends (filled, failed or cancelled) and at `close`.
    arrived: Notify,
    closed: AtomicBool,
    wait: Duration,
}

/// A fetch from its spawning to its end: dropped unfinished (its task cancelled, the runtime
/// shut down, before or during the statement), the fetch counts as failed, so the allocator is
/// never left waiting for a fetch no task makes.
struct InFlight {
    shared: Arc<Shared>,
    done: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.done {
            self.shared.allocator.fetch_failed(crate::now_ms());
            *self.shared.error() = Some("the fetch's task was cancelled".into());
            self.shared.arrived.notify_waiters();
        }
    }
}

impl InFlight {
    /// Takes one segment and hands it to the allocator.
    async fn run(mut self, fetch: Fetch) {
        let shared = Arc::clone(&self.shared);
        let result = shared.take(fetch.size).await;
        let mut error = shared.error();
        super::driver::settle(&shared.allocator, result, &mut error);
        drop(error);
        self.done = true;
        shared.arrived.notify_waiters();
    }
}

impl Shared {
    fn error(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.error.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The protocol, for one step (never held across an `await`).
    fn protocol(&self) -> std::sync::MutexGuard<'_, SegmentProtocol> {
        self.protocol.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the protocol's operation (started by the caller) to its end: connects and sends
    /// what it says, feeding back rows and error codes, as the blocking driver does. The
    /// connection is held from the protocol's `Connect` to the operation's end.
    async fn converse(&self) -> Result<Ended, String> {
        let mut conn: Option<Conn<'_>> = None;
        let mut last_error = String::new();
        loop {
            let next = match self.protocol().next() {
                Step::Connect { .. } => None,
                Step::Run {
                    command: Command::Sql { statement, values },
                    ..
                } => Some((statement.to_string(), texts(&values))),
                Step::Segment(segment) => return Ok(Ended::Segment(segment)),
                Step::GivenBack(returned) => return Ok(Ended::GivenBack(returned)),
                Step::Failed(Failure::Refused { kind, reason, .. }) => {
                    if kind == ErrorKind::UnknownTag {
                        self.unknown_tag.store(true, Ordering::Release);
                    }
                    return Err(reason);
                }
                Step::Failed(_) => return Err(last_error),
                _ => return Err("the protocol has no operation under way".into()),
            };
            let Some((statement, texts)) = next else {
                match self.source.conn(&self.runtime).await {
                    Ok(c) => {
                        conn = Some(c);
                        self.protocol().connected(Dialect::Postgres);
                    }
                    Err(why) => {
                        last_error = why;
                        self.protocol().failed(None);
                    }
                }
                continue;
            };
            let Some(c) = conn.as_mut() else {
                return Err("a statement before its connection".into());
            };
            let answered = match c.client().query_typed(&statement, &typed(&texts)).await {
                Ok(rows) => rows.first().map(owned_row).transpose(),
                Err(e) => Err(e),
            };
            match answered {
                Ok(row) => {
                    let cells: Option<Vec<Cell<'_>>> = row
                        .as_ref()
                        .map(|row| row.iter().map(Owned::cell).collect());
                    self.protocol().answer(cells.as_deref());
                }
                Err(e) => {
                    let code = e.code().map(|state| state.code().to_string());
                    if code.as_deref() == Some(UNKNOWN_TAG) {
                        self.unknown_tag.store(true, Ordering::Release);
                    }
                    c.failed(&e);
                    last_error = Described(&e).to_string();
                    self.protocol().failed(code.as_deref());
                }
            }
        }
    }

    /// One segment of `size` IDs (the protocol's take), its error as the fetch reports it.
    async fn take(&self, size: u64) -> Result<Segment, String> {
        self.protocol().take(&self.tag, size);
        match self.converse().await? {
            Ended::Segment(segment) => Ok(segment),
            Ended::GivenBack(_) => Err("a take ended as a give-back".into()),
        }
    }

    /// Gives `unused` back (the protocol's give-back); whether the server took it.
    async fn give_back(&self, unused: &Unused) -> bool {
        self.protocol()
            .give_back(&self.tag, unused.first, unused.end);
        matches!(self.converse().await, Ok(Ended::GivenBack(true)))
    }

    /// After `close`: waits (bounded) for a fetch in flight, gives the unused rest back, closes
    /// the connection of its own; how many numbers were lost.
    async fn wind_up(self: Arc<Self>) -> u64 {
        let deadline = Instant::now() + self.wait;
        while self.allocator.fetching() && Instant::now() < deadline {
            ::tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let lost = match self.allocator.unused() {
            Some(unused) => {
                let returned = self.give_back(&unused).await;
                self.allocator.settle(unused, returned);
                unused.lost + if returned { 0 } else { unused.count }
            }
            None => 0,
        };
        self.source.close().await;
        lost
    }
}

/// Dense IDs of one tag over `tokio-postgres`: see the [module](self) docs. `Send + Sync`:
/// share it (in an `Arc`, axum's state) between tasks.
///
/// Dropped without [`DenseIds::close`], it gives its unused rest back in a task of the runtime
/// it was made on, as the blocking client does on drop; a runtime that is shutting down may not
/// run it (a hole, never a duplicate).
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

impl Drop for DenseIds {
    fn drop(&mut self) {
        if !self.shared.closed.swap(true, Ordering::AcqRel) {
            let shared = Arc::clone(&self.shared);
            drop(self.shared.runtime.spawn(shared.wind_up()));
        }
    }
}

impl DenseIds {
    /// Connects to `config` (a libpq connection string or a `postgresql://` URL), whose
    /// `schema` holds the tag `tag` (`create_tag`), and takes its first segment. Call it inside
    /// a tokio runtime: its fetches run there.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] for a bad tag, schema or URL, or outside a tokio
    /// runtime; [`SegmentError::Database`] when the server cannot be reached;
    /// [`SegmentError::UnknownTag`].
    pub async fn connect(
        config: &str,
        tag: &str,
        schema: &str,
        policy: SizePolicy,
    ) -> Result<Self, SegmentError> {
        if let Some(reason) = url_problem(config) {
            return Err(SegmentError::InvalidArgument {
                argument: "config",
                reason,
            });
        }
        let (runtime, protocol) = prepare(tag, schema)?;
        let conn = open(config, &runtime).await?;
        let source = Source::own(config, conn);
        Self::start(runtime, source, tag, protocol, policy).await
    }

    /// Dense IDs of `tag` over the application's connection (not in a transaction: each fetch
    /// is one statement of its own), shared with it; takes the first segment.
    ///
    /// # Errors
    /// As [`DenseIds::connect`], but for the URL.
    pub async fn with_client(
        client: Arc<Client>,
        tag: &str,
        schema: &str,
        policy: SizePolicy,
    ) -> Result<Self, SegmentError> {
        Self::with_pool(
            move || std::future::ready(Ok::<_, SegmentError>(Arc::clone(&client))),
            tag,
            schema,
            policy,
        )
        .await
    }

    /// Dense IDs of `tag` over connections the application's pool lends: `lend` is called for
    /// each statement (a fetch, the give-back), and what it returns is dropped, so given back
    /// to the pool, when the statement ends. With bb8-postgres:
    /// `move || { let pool = pool.clone(); async move { pool.get_owned().await } }`; a guard
    /// that derefs to the client through another type (deadpool's `Object` derefs to its
    /// `ClientWrapper`) goes in a newtype whose `Deref` returns `&**self.0`. Takes the first
    /// segment.
    ///
    /// # Errors
    /// As [`DenseIds::connect`], but for the URL; a pool that lends no connection for the first
    /// fetch is [`SegmentError::Unavailable`] at the first ID.
    pub async fn with_pool<F, Fut, C, E>(
        lend: F,
        tag: &str,
        schema: &str,
        policy: SizePolicy,
    ) -> Result<Self, SegmentError>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<C, E>> + Send + 'static,
        C: Deref<Target = Client> + Send + 'static,
        E: fmt::Display,
    {
        let (runtime, protocol) = prepare(tag, schema)?;
        let source = Source::lender(lend);
        Self::start(runtime, source, tag, protocol, policy).await
    }

    async fn start(
        runtime: Handle,
        source: Source,
        tag: &str,
        protocol: SegmentProtocol,
        policy: SizePolicy,
    ) -> Result<Self, SegmentError> {
        let this = Self {
            shared: Arc::new(Shared {
                allocator: SegmentAllocator::new(policy),
                tag: tag.into(),
                protocol: Mutex::new(protocol),
                source,
                runtime,
                error: Mutex::new(None),
                unknown_tag: AtomicBool::new(false),
                arrived: Notify::new(),
                closed: AtomicBool::new(false),
                wait: Duration::from_secs(5),
            }),
        };
        // The first segment, before the first ID.
        this.spawn(this.shared.allocator.prime(crate::now_ms()));
        let deadline = Instant::now() + this.shared.wait;
        loop {
            let arrived = this.shared.arrived.notified();
            let mut arrived = std::pin::pin!(arrived);
            arrived.as_mut().enable();
            if !this.shared.allocator.fetching() || Instant::now() >= deadline {
                break;
            }
            drop(::tokio::time::timeout(Duration::from_millis(50), arrived).await);
        }
        if this.shared.unknown_tag.load(Ordering::Acquire) {
            // Nothing was taken: nothing to give back.
            this.shared.closed.store(true, Ordering::Release);
            this.shared.source.close().await;
            return Err(SegmentError::UnknownTag { tag: tag.into() });
        }
        Ok(this)
    }

    /// Spawns `fetch` on the client's runtime.
    fn spawn(&self, fetch: Option<Fetch>) {
        if let Some(fetch) = fetch {
            let in_flight = InFlight {
                shared: Arc::clone(&self.shared),
                done: false,
            };
            // A task the runtime drops unpolled drops `in_flight`: the fetch counts as failed.
            drop(self.shared.runtime.spawn(in_flight.run(fetch)));
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
        let reason = match self.shared.error().as_deref() {
            Some(e) => format!("the last fetch failed: {e}"),
            None => format!(
                "no segment arrived within {} ms",
                self.shared.wait.as_millis()
            ),
        };
        SegmentError::Unavailable { tag, reason }
    }

    /// The next ID (increasing). Once a segment is held this completes at its first poll, with
    /// no `await` inside; with both segments used up it waits at most 5 s for the fetch, which
    /// runs in a task of its own.
    ///
    /// # Errors
    /// [`SegmentError::Unavailable`] (retry later), [`SegmentError::UnknownTag`],
    /// [`SegmentError::Closed`] after [`DenseIds::close`].
    pub async fn next_id(&self) -> Result<u64, SegmentError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(self.failure());
        }
        match self.shared.allocator.next_id_with(crate::now_ms) {
            Ok((id, fetch)) => {
                self.spawn(fetch);
                return Ok(id);
            }
            Err(Empty::Fetch(fetch)) => self.spawn(Some(fetch)),
            Err(Empty::Wait) => {}
        }
        self.wait_for_id().await
    }

    /// Both segments were used up: waits for the fetch, retrying as each ends.
    async fn wait_for_id(&self) -> Result<u64, SegmentError> {
        let deadline = Instant::now() + self.shared.wait;
        loop {
            // Registered before the allocator is asked, so a fetch ending in between wakes it.
            let arrived = self.shared.arrived.notified();
            let mut arrived = std::pin::pin!(arrived);
            arrived.as_mut().enable();
            if self.shared.closed.load(Ordering::Acquire) {
                return Err(self.failure());
            }
            match self.shared.allocator.retry_id_with(crate::now_ms) {
                Ok((id, fetch)) => {
                    self.spawn(fetch);
                    return Ok(id);
                }
                Err(Empty::Fetch(fetch)) => self.spawn(Some(fetch)),
                Err(Empty::Wait) => {}
            }
            let now = Instant::now();
            if now >= deadline || self.shared.unknown_tag.load(Ordering::Acquire) {
                return Err(self.failure());
            }
            // Bounded: a fetch held back by the backoff after failures wakes nobody.
            let nap = (deadline - now).min(Duration::from_millis(50));
            drop(::tokio::time::timeout(nap, arrived).await);
        }
    }

    /// Fills `out` with IDs, waiting for segments as [`DenseIds::next_id`] does.
    ///
    /// # Errors
    /// As [`DenseIds::next_id`]; the IDs written before the error (or before the future was
    /// dropped) are lost if not used: a hole, never a duplicate.
    pub async fn next_ids(&self, out: &mut [u64]) -> Result<(), SegmentError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(self.failure());
        }
        let mut written = 0;
        while written < out.len() {
            let (n, fetch) = self
                .shared
                .allocator
                .next_ids_with(&mut out[written..], crate::now_ms);
            self.spawn(fetch);
            written += n;
            if n == 0 && written < out.len() {
                out[written] = self.next_id().await?;
                written += 1;
            }
        }
        Ok(())
    }

    /// What this allocator did ([`crate::stats::SegmentStats`], as the blocking client's).
    pub fn stats(&self) -> crate::stats::SegmentStats {
        self.shared.allocator.stats()
    }

    /// Hands out no more IDs, gives the unused rest back (a restart then continues at the next
    /// number) and closes the connection of its own; returns how many numbers were lost
    /// (neither handed out nor given back). Runs in a task of its own: a dropped `close` still
    /// gives back. A second call returns 0.
    pub async fn close(&self) -> u64 {
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return 0;
        }
        self.shared.arrived.notify_waiters();
        let shared = Arc::clone(&self.shared);
        self.shared
            .runtime
            .spawn(shared.wind_up())
            .await
            .unwrap_or(0)
    }
}

/// The runtime and the protocol of `schema`, after the tag's and the schema's checks.
fn prepare(tag: &str, schema: &str) -> Result<(Handle, SegmentProtocol), SegmentError> {
    check_tag(tag)?;
    let protocol = SegmentProtocol::new(Dialect::Postgres, schema, Placeholders::Numbered, 1)
        .map_err(|e| SegmentError::InvalidArgument {
            argument: "schema",
            reason: e.to_string(),
        })?;
    let runtime = Handle::try_current().map_err(|_| SegmentError::InvalidArgument {
        argument: "runtime",
        reason: "must be a tokio runtime's: call it inside one (its fetches run there)".into(),
    })?;
    Ok((runtime, protocol))
}
