//! Shard leases kept in PostgreSQL from async Rust (feature `tokio-postgres`): the async twin
//! of [`super::postgres::PostgresLease`] for tokio applications, where the blocking lease's
//! acquire and release would block a runtime's thread.
//!
//! It executes the core's lease protocol ([`crate::sql::LeaseProtocol`]) over `tokio-postgres`
//! as the blocking lease does over `postgres` (every statement with `query_typed`: one round
//! trip on the unnamed statement, so it holds through a transaction pooler), around the same
//! [`super::CeilingGenerator`] and [`super::Hold`]. What is async's own:
//!
//! - The heartbeat is a tokio task (the *keeper*), spawned on the runtime the lease was taken
//!   on: it renews the lease every third of its time to live, records the ceilings the
//!   generator asks for, and stops the generator once the lease is lost (taken over, or past
//!   its time to live without a renewal: [`LeaseError::Lost`]).
//! - IDs come from the generator, synchronously: [`PostgresLease::try_next_id`] never waits,
//!   and [`PostgresLease::next_id`] completes at its first poll while the recorded ceiling
//!   covers the clock. While IDs are being taken the keeper records the next ceiling before
//!   the clock reaches the last one (a ceiling write every 100 ms of use at most, as the
//!   blocking lease's); once `try_next_id` has been called, it also keeps a ceiling a second
//!   ahead of the clock while IDs are taken seldom or not at all (a write about every half
//!   second), so `try_next_id` rarely finds none; when it does, it refuses rather than block
//!   (an [`std::io::ErrorKind::WouldBlock`] [`LeaseError::Io`]) and `next_id` waits for the
//!   keeper's write.
//! - Cancellation-safe: an ID is taken and returned in one poll; a future of `next_id` dropped
//!   while it waits for a ceiling leaves the write to the keeper. An `acquire` dropped at any
//!   `await` gives its connection back (a lent one to its pool; its own closed), and a claim
//!   it had sent expires after its time to live: only expiring leases are taken here (a session
//!   lease would hold as long as a connection nobody owns).
//! - The connection: one of its own to a URL ([`PostgresLease::acquire`], opened again when
//!   lost), the application's ([`PostgresLease::with_client`]), or one its pool lends for each
//!   statement ([`PostgresLease::with_pool`]), as [`crate::segment::tokio_postgres::DenseIds`].
//!
//! ```no_run
//! # async fn run() -> Result<(), shardid::lease::LeaseError> {
//! use shardid::Layout;
//! use shardid::lease::tokio_postgres::{LeaseOptions, PostgresLease};
//!
//! let url = "host=127.0.0.1 user=app dbname=app";
//! let lease = PostgresLease::acquire(url, Layout::INSTAGRAM, 0..64, &LeaseOptions::new()).await?;
//! let id = lease.next_id().await?;
//! lease.close().await; // released: another process may take the shard at once
//! # Ok(()) }
//! ```

use std::boxed::Box;
use std::fmt;
use std::format;
use std::future::Future;
use std::ops::{Deref, Range};
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use std::vec::Vec;

use ::tokio::runtime::Handle;
use ::tokio::sync::Notify;
use ::tokio::task::JoinHandle;
use ::tokio_postgres::Client;

pub use super::database::LeaseOptions;
use super::database::{claim_refused, hostname, sql_error};
use super::{CeilingGenerator, CeilingStore, Hold, LeaseError, Tally, monotonic_ms, new_token};
use crate::Layout;
use crate::driver::Owned;
use crate::driver::postgres::{ServerError, owned_row, texts, typed, url_problem};
use crate::segment::tokio_postgres::{Source, open};
use crate::sql::{Answer, Cell, Dialect, LeaseKind, LeaseProtocol, Next, Placeholders, Value};

/// How long the keeper waits after a ceiling write failed before it tries again.
const RETRY: Duration = Duration::from_millis(50);

/// How long after the last ID the keeper still writes ceilings ahead of the clock.
const ACTIVE_MS: u64 = 1_000;

/// How far ahead of the clock the keeper keeps a recorded ceiling once
/// [`PostgresLease::try_next_id`] has been called, however seldom IDs are taken: a synchronous
/// caller that takes one now and then (a column default at each request) finds its ceiling
/// written, where the writes ahead while IDs are taken stop [`ACTIVE_MS`] after the last one.
/// A write about every half second while the lease lives; a successor after a clean close
/// waits at most one and a half of it for the clock to pass the ceiling.
const NOWAIT_LEAD_MS: u64 = 1_000;

/// What the keeper, the generator's store and the lease share.
struct Shared {
    protocol: LeaseProtocol,
    shard: u64,
    layout: Layout,
    source: Source,
    /// The runtime the lease was taken on: its keeper and its release run there.
    runtime: Handle,
    hold: Arc<Hold>,
    /// The ceiling recorded (time units), set by the keeper once its write returned the row.
    confirmed: AtomicU64,
    /// The ceiling the generator asked for and the keeper has not written yet.
    wanted: AtomicU64,
    /// How far ahead of an ID the generator asks for a ceiling (its span, in time units).
    span: AtomicU64,
    /// An ID was handed out since the keeper last looked: it writes ahead while IDs are taken.
    used: AtomicBool,
    /// `try_next_id` was called: the keeper keeps a ceiling [`NOWAIT_LEAD_MS`] ahead from then.
    nowait: AtomicBool,
    /// Wakes the keeper: a ceiling is wanted, or the lease is closed.
    demand: Notify,
    /// Woken when a ceiling write ends (written, failed, or the lease lost).
    written: Notify,
    /// Ceiling writes that failed, and the last one's error.
    failures: AtomicU64,
    error: Mutex<Option<String>>,
    closed: AtomicBool,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresLease")
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

/// Runs one statement on `client`: its first row, if any.
async fn run(
    client: &Client,
    sql: &str,
    params: &[Value<'_>],
) -> Result<Option<Vec<Owned>>, ::tokio_postgres::Error> {
    let texts = texts(params);
    let rows = client.query_typed(sql, &typed(&texts)).await?;
    rows.first().map(owned_row).transpose()
}

impl Shared {
    /// Runs a statement of the held lease (a renewal, a ceiling write, the release): `Ok(true)`
    /// when the protocol says the lease is still held; with `renewal`, also that this host's
    /// clock is not too far ahead of the database's (else the generator stops, `CLOCK_SKEW`).
    async fn run_held(
        &self,
        generator: &CeilingGenerator,
        sql: &str,
        params: &[Value<'_>],
        renewal: bool,
    ) -> Result<bool, String> {
        let mut conn = self.source.conn(&self.runtime).await?;
        match run(conn.client(), sql, params).await {
            Ok(row) => {
                let cells: Option<Vec<Cell<'_>>> = row
                    .as_ref()
                    .map(|row| row.iter().map(Owned::cell).collect());
                let answer = cells.as_deref().map_or(Answer::NoRow, Answer::Row);
                if !self.protocol.kept(answer) {
                    generator.revoke();
                    return Ok(false);
                }
                if renewal && let Some(ahead) = self.protocol.clock_ahead(answer) {
                    generator.revoke_clock_skew(ahead);
                    return Ok(false);
                }
                Ok(true)
            }
            Err(e) => {
                conn.failed(&e);
                Err(crate::driver::postgres::Described(&e).to_string())
            }
        }
    }

    /// Writes a ceiling of `units` (which renews the lease too), and wakes whoever waits.
    async fn record(&self, generator: &CeilingGenerator, units: u64) {
        let Some(sent) = self.hold.sending() else {
            generator.revoke();
            self.written.notify_waiters();
            return;
        };
        let (sql, params) = self.protocol.record(self.shard, units);
        match self.run_held(generator, &sql, &params, false).await {
            Ok(true) => {
                self.hold.renewed(sent);
                self.confirmed.fetch_max(units, Ordering::AcqRel);
            }
            Ok(false) => {}
            Err(e) => {
                *self.error.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                self.failures.fetch_add(1, Ordering::AcqRel);
            }
        }
        self.written.notify_waiters();
    }

    /// One renewal.
    async fn renew(&self, generator: &CeilingGenerator) {
        let Some(sent) = self.hold.sending() else {
            generator.revoke();
            return;
        };
        let Some((sql, params)) = self.protocol.renew(self.shard) else {
            return;
        };
        match self.run_held(generator, &sql, &params, true).await {
            Ok(true) => self.hold.renewed(sent),
            Ok(false) => {}
            Err(_) => self.hold.failed(),
        }
    }

    /// The time unit of the clock now.
    fn units_now(&self) -> u64 {
        crate::now_ms().saturating_sub(self.layout.epoch_ms()) / self.layout.unit_ms()
    }
}

/// The generator's ceiling store: what the keeper has written. A ceiling not written yet is
/// asked of the keeper, and refused for now (`WouldBlock`): the generator then hands nothing
/// out above the last one.
struct Store(Arc<Shared>);

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl CeilingStore for Store {
    fn store(&self, at_least: u64, wanted: u64) -> std::io::Result<u64> {
        let shared = &self.0;
        shared
            .span
            .store(wanted.saturating_sub(at_least).max(1), Ordering::Release);
        let confirmed = shared.confirmed.load(Ordering::Acquire);
        if at_least <= confirmed {
            return Ok(confirmed);
        }
        shared.wanted.fetch_max(wanted, Ordering::AcqRel);
        shared.demand.notify_one();
        Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "the lease's next ceiling is being recorded: await next_id, or retry",
        ))
    }
}

/// The keeper: renews the lease when due, writes the ceilings the generator asks for (and,
/// while IDs are being taken, the next one before the clock reaches the last), and stops the
/// generator once the lease is lost. Ends when the lease is closed or lost.
async fn keep(shared: Arc<Shared>, generator: Arc<CeilingGenerator>) {
    let mut active_until = 0;
    loop {
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        let Some(beat) = shared.hold.wait_ms() else {
            generator.revoke();
            shared.written.notify_waiters();
            return;
        };
        let now = monotonic_ms();
        if shared.used.swap(false, Ordering::AcqRel) {
            active_until = now + ACTIVE_MS;
        }
        let confirmed = shared.confirmed.load(Ordering::Acquire);
        let mut target = shared.wanted.load(Ordering::Acquire);
        let mut refresh_ms = u64::MAX;
        let span = shared.span.load(Ordering::Acquire);
        let unit_ms = shared.layout.unit_ms();
        if now < active_until {
            let units = shared.units_now();
            if confirmed < units + span {
                target = target.max(units + 2 * span);
            } else {
                refresh_ms = (confirmed - span - units) * unit_ms;
            }
        }
        if shared.nowait.load(Ordering::Acquire) {
            // A synchronous caller: a ceiling a lead ahead, idle or not (see NOWAIT_LEAD_MS).
            let lead = (NOWAIT_LEAD_MS / unit_ms).max(2 * span);
            let units = shared.units_now();
            if confirmed < units + lead {
                target = target.max(units + lead + lead / 2);
            } else {
                refresh_ms = refresh_ms.min((confirmed - lead - units) * unit_ms);
            }
        }
        if target > confirmed {
            let failures = shared.failures.load(Ordering::Acquire);
            shared.record(&generator, target).await;
            if shared.failures.load(Ordering::Acquire) != failures {
                ::tokio::time::sleep(RETRY).await;
            }
            continue;
        }
        if beat == 0 {
            shared.renew(&generator).await;
            continue;
        }
        let nap = Duration::from_millis(beat.min(refresh_ms).max(1));
        drop(::tokio::time::timeout(nap, shared.demand.notified()).await);
    }
}

/// A generator on a shard leased through PostgreSQL over `tokio-postgres`: see the
/// [module](self) docs. `Send + Sync`: share it (in an `Arc`, axum's state) between tasks.
///
/// Dropped without [`PostgresLease::close`], it releases the shard in a task of the runtime
/// it was taken on; a runtime that is shutting down may not run it, and the lease then expires
/// after its time to live.
pub struct PostgresLease {
    shared: Arc<Shared>,
    generator: Arc<CeilingGenerator>,
    keeper: Mutex<Option<JoinHandle<()>>>,
}

impl fmt::Debug for PostgresLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shared.fmt(f)
    }
}

impl Drop for PostgresLease {
    fn drop(&mut self) {
        if let Some(release) = self.start_close() {
            drop(self.shared.runtime.spawn(release));
        }
    }
}

impl PostgresLease {
    /// Leases the first free shard of `shards` through the server at `url` (a libpq
    /// connection string or a `postgresql://` URL), on a connection of its own. Call it inside
    /// a tokio runtime: its keeper runs there.
    ///
    /// # Errors
    /// [`LeaseError::EmptyShards`]; [`LeaseError::InvalidArgument`] for a URL the core cannot
    /// read, a bad table name, a session lease, or outside a runtime;
    /// [`LeaseError::NoFreeShard`] when every shard is held; [`LeaseError::Unreachable`] when
    /// the server cannot be reached, [`LeaseError::Database`] when it refuses a statement.
    pub async fn acquire(
        url: &str,
        layout: Layout,
        shards: Range<u64>,
        options: &LeaseOptions,
    ) -> Result<Self, LeaseError> {
        if let Some(reason) = url_problem(url) {
            return Err(LeaseError::InvalidArgument {
                argument: "config",
                reason,
            });
        }
        let (runtime, protocol) = prepare(layout, &shards, options)?;
        let client = open(url, &runtime)
            .await
            .map_err(|e| LeaseError::Unreachable(e.to_string().into()))?;
        Self::take(runtime, Source::own(url, client), protocol, layout, options).await
    }

    /// Leases a shard over the application's connection (each statement one of its own, never
    /// inside the application's transaction), shared with it.
    ///
    /// # Errors
    /// As [`PostgresLease::acquire`], but for the URL.
    pub async fn with_client(
        client: Arc<Client>,
        layout: Layout,
        shards: Range<u64>,
        options: &LeaseOptions,
    ) -> Result<Self, LeaseError> {
        Self::with_pool(
            move || std::future::ready(Ok::<_, LeaseError>(Arc::clone(&client))),
            layout,
            shards,
            options,
        )
        .await
    }

    /// Leases a shard over connections the application's pool lends: `lend` is called for
    /// each statement (the claim, each renewal and ceiling write, the release), and what it
    /// returns is dropped, so given back, when the statement ends (see
    /// [`crate::segment::tokio_postgres::DenseIds::with_pool`] for bb8 and deadpool).
    ///
    /// # Errors
    /// As [`PostgresLease::acquire`], but for the URL; [`LeaseError::Unreachable`] when the
    /// pool lends no connection for the claim.
    pub async fn with_pool<F, Fut, C, E>(
        lend: F,
        layout: Layout,
        shards: Range<u64>,
        options: &LeaseOptions,
    ) -> Result<Self, LeaseError>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<C, E>> + Send + 'static,
        C: Deref<Target = Client> + Send + 'static,
        E: fmt::Display,
    {
        let (runtime, protocol) = prepare(layout, &shards, options)?;
        Self::take(runtime, Source::lender(lend), protocol, layout, options).await
    }

    /// Runs the protocol until the lease is taken, then starts the keeper.
    async fn take(
        runtime: Handle,
        source: Source,
        mut protocol: LeaseProtocol,
        layout: Layout,
        options: &LeaseOptions,
    ) -> Result<Self, LeaseError> {
        let LeaseKind::Expiring { ttl_ms } = options.kind else {
            unreachable!("refused by prepare")
        };
        let (shard, recorded, claimed_at) = {
            let conn = source
                .conn(&runtime)
                .await
                .map_err(|e| LeaseError::Unreachable(e.into()))?;
            claim(conn.client(), &mut protocol, &options.table).await?
            // The connection goes back here: a lent one to its pool.
        };
        let hold = Arc::new(Hold::new(ttl_ms, claimed_at));
        let state = Arc::new(Shared {
            protocol,
            shard,
            layout,
            source,
            runtime,
            hold: Arc::clone(&hold),
            confirmed: AtomicU64::new(recorded.unwrap_or(0)),
            wanted: AtomicU64::new(0),
            // The generator's (`CeilingGenerator::new`), until its first call of the store says.
            span: AtomicU64::new(
                ((options.generator.backwards_tolerance_ms / 2).min(100) / layout.unit_ms()).max(1),
            ),
            used: AtomicBool::new(false),
            nowait: AtomicBool::new(false),
            demand: Notify::new(),
            written: Notify::new(),
            failures: AtomicU64::new(0),
            error: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        // From here a dropped future drops `this`, which releases the shard in a task.
        let generator = CeilingGenerator::new(
            layout,
            shard,
            options.generator,
            recorded,
            Box::new(Store(Arc::clone(&state))),
        )
        .map_err(LeaseError::Id)?
        .with_tally(Tally::new(&layout, &options.table))
        .with_hold(hold);
        let this = Self {
            generator: Arc::new(generator),
            keeper: Mutex::new(None),
            shared: state,
        };
        let keeper = this
            .shared
            .runtime
            .spawn(keep(Arc::clone(&this.shared), Arc::clone(&this.generator)));
        *this.keeper.lock().unwrap_or_else(PoisonError::into_inner) = Some(keeper);
        // After a failover the ceiling may be ahead of this host's clock: wait it out here, the
        // keeper running, rather than fail the first IDs.
        let wait = super::ceiling_wait_ms(&layout, recorded);
        if wait > 0 {
            ::tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        Ok(this)
    }

    /// The shard held.
    pub fn shard(&self) -> u64 {
        self.shared.shard
    }

    /// What the lease did ([`crate::stats::LeaseStats`], as the blocking lease's).
    pub fn stats(&self) -> crate::stats::LeaseStats {
        self.generator.lease_stats().unwrap_or_default()
    }

    /// Whether the lease is still held: not closed, not lost, not past its deadline.
    pub fn is_held(&self) -> bool {
        !self.shared.closed.load(Ordering::Acquire) && self.shared.hold.holds()
    }

    /// One ID now, without waiting: the generator's, while the recorded ceiling covers it.
    /// From its first call on, the keeper keeps a ceiling recorded a second ahead of the clock
    /// (a write about every half second, idle or not), so later calls find one however seldom
    /// they come; the first may refuse (await [`PostgresLease::next_id`] once after taking the
    /// lease, and it will not).
    ///
    /// # Errors
    /// [`LeaseError::Io`] of kind [`std::io::ErrorKind::WouldBlock`] when the next ceiling is
    /// not recorded yet (the keeper is writing it: retry, or [`PostgresLease::next_id`]);
    /// [`LeaseError::Lost`] once the lease is lost, [`LeaseError::Closed`] after
    /// [`PostgresLease::close`]; the generator's errors.
    pub fn try_next_id(&self) -> Result<u64, LeaseError> {
        if !self.shared.nowait.load(Ordering::Relaxed) {
            self.shared.nowait.store(true, Ordering::Release);
            self.shared.demand.notify_one();
        }
        self.take_one()
    }

    /// One ID from the generator, without waiting ([`PostgresLease::try_next_id`]'s, and
    /// [`PostgresLease::next_id`]'s tries, which leave the keeper's lead off).
    fn take_one(&self) -> Result<u64, LeaseError> {
        match self.generator.next_id() {
            Ok(id) => {
                if !self.shared.used.load(Ordering::Relaxed) {
                    self.shared.used.store(true, Ordering::Relaxed);
                }
                Ok(id)
            }
            Err(e) => Err(self.closed_or(e)),
        }
    }

    /// One ID: at once while the recorded ceiling covers the clock (no `await` on that path),
    /// else after the keeper's ceiling write (one round trip). A database that does not answer
    /// keeps it waiting until the lease's time to live has passed at most (then
    /// [`LeaseError::Lost`]).
    ///
    /// # Errors
    /// [`LeaseError::Lost`] once the lease is lost (nothing is handed out above the last
    /// ceiling), [`LeaseError::Closed`] after [`PostgresLease::close`],
    /// [`LeaseError::Database`] when the ceiling write failed (nothing is handed out; the next
    /// call tries again); the generator's errors.
    pub async fn next_id(&self) -> Result<u64, LeaseError> {
        loop {
            let written = self.shared.written.notified();
            let mut written = std::pin::pin!(written);
            written.as_mut().enable();
            let failures = self.shared.failures.load(Ordering::Acquire);
            match self.take_one() {
                Err(LeaseError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                other => return other,
            }
            // Bounded: a write that ends without waking anyone (the keeper gone) is seen
            // again at the next try.
            drop(::tokio::time::timeout(Duration::from_millis(50), written).await);
            if self.shared.failures.load(Ordering::Acquire) != failures {
                let e = self
                    .shared
                    .error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let why = e.clone().unwrap_or_default();
                return Err(LeaseError::Database(
                    format!("the lease's ceiling could not be recorded: {why}").into(),
                ));
            }
        }
    }

    /// Fills `out` with IDs, waiting for a ceiling as [`PostgresLease::next_id`] does.
    ///
    /// # Errors
    /// As [`PostgresLease::next_id`]; none of `out` may then be used.
    pub async fn next_ids(&self, out: &mut [u64]) -> Result<(), LeaseError> {
        loop {
            let written = self.shared.written.notified();
            let mut written = std::pin::pin!(written);
            written.as_mut().enable();
            match self.generator.next_ids(out) {
                Ok(()) => {
                    self.shared.used.store(true, Ordering::Relaxed);
                    return Ok(());
                }
                Err(LeaseError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(self.closed_or(e)),
            }
            drop(::tokio::time::timeout(Duration::from_millis(50), written).await);
        }
    }

    /// `e`, or [`LeaseError::Closed`] when the lease was closed.
    fn closed_or(&self, e: LeaseError) -> LeaseError {
        if self.shared.closed.load(Ordering::Acquire) {
            LeaseError::Closed {
                shard: self.shared.shard,
            }
        } else {
            e
        }
    }

    /// Marks the lease closed and stops the generator; the release to run, the first time.
    fn start_close(&self) -> Option<impl Future<Output = ()> + Send + 'static> {
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return None;
        }
        self.generator.close();
        self.shared.demand.notify_one();
        let keeper = self
            .keeper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let shared = Arc::clone(&self.shared);
        let generator = Arc::clone(&self.generator);
        Some(async move {
            // After the keeper's statement in flight, so no ceiling write follows the release.
            if let Some(keeper) = keeper {
                drop(keeper.await);
            }
            drop(generator);
            let (sql, params) = shared.protocol.release(shared.shard);
            // Best effort: a lease that cannot be released expires on its own.
            if let Ok(conn) = shared.source.conn(&shared.runtime).await {
                drop(run(conn.client(), &sql, &params).await);
            }
            shared.source.close().await;
        })
    }

    /// Releases the shard (another process may take it at once, and continues above this
    /// one's IDs); later calls fail with [`LeaseError::Closed`]. The release runs in a task of
    /// its own: a dropped `close` still releases. Closing twice is fine.
    pub async fn close(&self) {
        if let Some(release) = self.start_close() {
            drop(self.shared.runtime.spawn(release).await);
        }
    }
}

/// The runtime and the protocol, after the arguments' checks.
fn prepare(
    layout: Layout,
    shards: &Range<u64>,
    options: &LeaseOptions,
) -> Result<(Handle, LeaseProtocol), LeaseError> {
    if !matches!(options.kind, LeaseKind::Expiring { .. }) {
        return Err(LeaseError::InvalidArgument {
            argument: "kind",
            reason: "must be an expiring lease here: a session lease lasts as long as one \
                     connection, which a dropped future or a pool would not keep"
                .into(),
        });
    }
    let holder = format!(
        "{} pid {} (rust, tokio)",
        hostname().unwrap_or_else(|| "?".into()),
        std::process::id()
    );
    let protocol = LeaseProtocol::new(
        options.kind,
        layout,
        &options.table,
        Placeholders::Numbered,
        shards.start,
        shards.end,
        &holder,
        &new_token(),
    )
    .and_then(|p| p.schema(options.schema.as_deref()))
    .and_then(|p| p.dialect(Dialect::Postgres))
    .map_err(|e| sql_error(&e))?;
    let runtime = Handle::try_current().map_err(|_| LeaseError::InvalidArgument {
        argument: "runtime",
        reason: "must be a tokio runtime's: call it inside one (its keeper runs there)".into(),
    })?;
    Ok((runtime, protocol))
}

/// Runs the protocol on `conn` until the lease is taken: the shard, its recorded ceiling, and
/// when the claim that took it was sent.
async fn claim(
    conn: &Client,
    protocol: &mut LeaseProtocol,
    table: &str,
) -> Result<(u64, Option<u64>, u64), LeaseError> {
    let mut sent = monotonic_ms();
    loop {
        match protocol.next() {
            Next::Run { sql, params } => {
                sent = monotonic_ms();
                let result = run(conn, &sql, &params).await;
                match &result {
                    Ok(Some(row)) => {
                        let cells: Vec<Cell<'_>> = row.iter().map(Owned::cell).collect();
                        protocol.feed(Answer::Row(&cells));
                    }
                    Ok(None) => protocol.feed(Answer::NoRow),
                    Err(e) => {
                        let code = e.code().map(|state| state.code().to_string());
                        protocol.feed(Answer::Error(code.as_deref()));
                    }
                }
                if matches!(protocol.next(), Next::Raise) {
                    return Err(match result {
                        Err(e) => LeaseError::Database(ServerError::boxed(e)),
                        Ok(_) => LeaseError::Database(
                            "the database answered a lease statement unexpectedly".into(),
                        ),
                    });
                }
            }
            Next::Taken {
                shard, recorded, ..
            } => return Ok((shard, recorded, sent)),
            Next::Raise => unreachable!("raised above"),
            refused => return Err(claim_refused(refused, table)),
        }
    }
}
