//! Shard leases kept in PostgreSQL, from Rust (feature `postgres`, over the `postgres` crate):
//! the driver of the core's lease protocol ([`crate::sql::LeaseProtocol`]), as Python's
//! `shardid.postgres` and Node's `shardid/postgres` are.
//!
//! ```no_run
//! use shardid::Layout;
//! use shardid::lease::postgres::{LeaseOptions, PostgresLease};
//!
//! let lease = PostgresLease::acquire(
//!     "host=db user=app dbname=app",
//!     Layout::INSTAGRAM,
//!     0..64,
//!     &LeaseOptions::new(),
//! )?;
//! let id = lease.next_id()?;
//! # Ok::<(), shardid::lease::LeaseError>(())
//! ```
//!
//! The default lease expires (see [`crate::sql::LeaseKind`]): a heartbeat thread renews it
//! every third of its time to live, so it holds through a transaction pooler. Every statement
//! is sent with `query_typed` (one round trip, the unnamed statement, parameters as text): no
//! server-side prepared statement outlives it, which a pooler in transaction mode could not
//! carry. The lease does not follow `fork()`: take one in each process.

use std::boxed::Box;
use std::fmt;
use std::format;
use std::ops::Range;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::vec::Vec;

use postgres::types::Type;

use super::{
    BackendClaim, CeilingGenerator, CeilingStore, DatabaseFailure, Hold, LeaseError, LostLease,
    claim_backend, monotonic_ms, new_token,
};
use crate::sql::{Answer, Cell, LeaseKind, LeaseProtocol, Next, Placeholders, SqlError, Value};
use crate::{Layout, Options};

/// How a [`PostgresLease`] is taken.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LeaseOptions {
    /// Expiring (the default) or session.
    pub kind: LeaseKind,
    /// The table of leases (`shardid_leases`).
    pub table: String,
    /// The generator's options.
    pub generator: Options,
}

impl LeaseOptions {
    /// An expiring lease of 10 s in `shardid_leases`, the generator's defaults.
    pub fn new() -> Self {
        Self {
            kind: LeaseKind::DEFAULT,
            table: "shardid_leases".into(),
            generator: Options::new(),
        }
    }

    /// Sets the kind of lease.
    #[must_use]
    pub fn kind(mut self, kind: LeaseKind) -> Self {
        self.kind = kind;
        self
    }

    /// Sets the table.
    #[must_use]
    pub fn table(mut self, table: &str) -> Self {
        self.table = table.into();
        self
    }

    /// Sets the generator's options.
    #[must_use]
    pub fn generator(mut self, options: Options) -> Self {
        self.generator = options;
        self
    }
}

impl Default for LeaseOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs one of the protocol's statements with its parameters sent as text (each is cast in
/// the SQL), in one round trip; returns the first row's columns.
fn run(
    client: &mut postgres::Client,
    sql: &str,
    params: &[Value<'_>],
) -> Result<Option<Vec<Owned>>, postgres::Error> {
    let texts: Vec<String> = params
        .iter()
        .map(|value| match value {
            Value::Text(text) => (*text).to_string(),
            Value::Int(n) => n.to_string(),
        })
        .collect();
    let typed: Vec<(&(dyn postgres::types::ToSql + Sync), Type)> = texts
        .iter()
        .map(|text| (text as &(dyn postgres::types::ToSql + Sync), Type::TEXT))
        .collect();
    let rows = client.query_typed(sql, &typed)?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let cells = row
        .columns()
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let ty = column.type_();
            Ok(if *ty == Type::BOOL {
                row.try_get::<_, Option<bool>>(i)?
                    .map_or(Owned::Null, Owned::Bool)
            } else if *ty == Type::INT8 {
                row.try_get::<_, Option<i64>>(i)?
                    .map_or(Owned::Null, Owned::Int)
            } else if *ty == Type::INT4 {
                row.try_get::<_, Option<i32>>(i)?
                    .map_or(Owned::Null, |n| Owned::Int(n.into()))
            } else {
                row.try_get::<_, Option<String>>(i)?
                    .map_or(Owned::Null, Owned::Text)
            })
        })
        .collect::<Result<Vec<_>, postgres::Error>>()?;
    Ok(Some(cells))
}

/// A column as [`run`] returns it.
enum Owned {
    Null,
    Bool(bool),
    Int(i64),
    Text(String),
}

impl Owned {
    fn cell(&self) -> Cell<'_> {
        match self {
            Self::Null => Cell::Null,
            Self::Bool(b) => Cell::Bool(*b),
            Self::Int(n) => Cell::Int(*n),
            Self::Text(t) => Cell::Text(t),
        }
    }
}

fn sql_error(e: &SqlError) -> LeaseError {
    match *e {
        SqlError::EmptyShards { first, end } => LeaseError::EmptyShards { shards: first..end },
        SqlError::TableName { reason } => LeaseError::InvalidArgument {
            argument: "table",
            reason: format!("is not a valid name: {reason}"),
        },
        _ => LeaseError::InvalidArgument {
            argument: "table",
            reason: e.to_string(),
        },
    }
}

/// What the generator's ceiling store, the heartbeat and the lease share.
struct Shared {
    protocol: LeaseProtocol,
    shard: u64,
    config: String,
    /// The lease's connection (`None`: reconnect before the next statement; a session lease
    /// never does: its lock ended with its session).
    client: Mutex<Option<postgres::Client>>,
    hold: Option<Arc<Hold>>,
    closed: AtomicBool,
    /// Wakes the heartbeat early, when the lease is closed.
    wake: Condvar,
    wake_lock: Mutex<()>,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresLease")
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Runs a statement of the lease's on its connection, reconnecting an expiring lease's
    /// first; `Ok(true)` when it returned a row (the lease is still held).
    fn held_after(&self, sql: &str, params: &[Value<'_>]) -> Result<bool, LeaseError> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        let session = self.protocol.kind() == LeaseKind::Session;
        if client.as_ref().is_none_or(postgres::Client::is_closed) {
            if session {
                return Err(LeaseError::Lost { shard: self.shard });
            }
            let fresh = postgres::Client::connect(&self.config, postgres::NoTls)
                .map_err(|e| LeaseError::Database(Box::new(e)))?;
            *client = Some(fresh);
        }
        let Some(conn) = client.as_mut() else {
            unreachable!("connected above")
        };
        match run(conn, sql, params) {
            Ok(row) => Ok(row.is_some()),
            Err(e) => {
                if e.is_closed() || e.code().is_none() {
                    *client = None;
                    if session {
                        return Err(LeaseError::Lost { shard: self.shard });
                    }
                }
                Err(LeaseError::Database(Box::new(e)))
            }
        }
    }

    /// One renewal of an expiring lease, if due; `false` once the lease is lost or closed.
    fn heartbeat(&self) -> bool {
        let Some(hold) = &self.hold else {
            return false;
        };
        let Some((sql, params)) = self.protocol.renew(self.shard) else {
            return false;
        };
        if self.closed.load(Ordering::Acquire) {
            return false;
        }
        let Some(sent) = hold.sending() else {
            return false;
        };
        match self.held_after(&sql, &params) {
            Ok(true) => hold.renewed(sent),
            Ok(false) => {
                hold.lose();
                return false;
            }
            Err(_) => hold.failed(),
        }
        true
    }
}

/// The ceiling store of a lease: the protocol's `record` statement.
#[derive(Debug)]
struct Store(Arc<Shared>);

impl CeilingStore for Store {
    fn store(&self, _at_least: u64, wanted: u64) -> std::io::Result<u64> {
        let shared = &self.0;
        if shared.closed.load(Ordering::Acquire) {
            return Err(std::io::Error::other(LostLease));
        }
        let sent = match &shared.hold {
            Some(hold) => hold
                .sending()
                .ok_or_else(|| std::io::Error::other(LostLease))?,
            None => monotonic_ms(),
        };
        let (sql, params) = shared.protocol.record(shared.shard, wanted);
        match shared.held_after(&sql, &params) {
            Ok(true) => {
                if let Some(hold) = &shared.hold {
                    hold.renewed(sent);
                }
                Ok(wanted)
            }
            Ok(false) | Err(LeaseError::Lost { .. }) => {
                if let Some(hold) = &shared.hold {
                    hold.lose();
                }
                Err(std::io::Error::other(LostLease))
            }
            Err(LeaseError::Database(e)) => Err(std::io::Error::other(DatabaseFailure(e))),
            Err(e) => Err(std::io::Error::other(DatabaseFailure(e.to_string().into()))),
        }
    }
}

/// A generator on a shard leased through PostgreSQL: see the [module](self) docs. `Sync`:
/// share it between threads. Dropping it releases the shard.
pub struct PostgresLease {
    shared: Arc<Shared>,
    generator: Arc<CeilingGenerator>,
    heartbeat: Mutex<Option<thread::JoinHandle<()>>>,
    _backend: Option<BackendClaim>,
}

impl fmt::Debug for PostgresLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresLease")
            .field("shard", &self.shared.shard)
            .field("kind", &self.shared.protocol.kind())
            .finish_non_exhaustive()
    }
}

impl PostgresLease {
    /// Leases the first free shard of `shards` through the server at `config` (a libpq-style
    /// connection string or URL).
    ///
    /// # Errors
    /// [`LeaseError::EmptyShards`]; [`LeaseError::NoFreeShard`] when every shard is held;
    /// [`LeaseError::Database`] when the server cannot be reached or refuses a statement (a
    /// bad table name too, as its `INVALID_ARGUMENT` reason); [`LeaseError::SessionPooled`]
    /// for a session lease whose connection another session lease of this process shares.
    pub fn acquire(
        config: &str,
        layout: Layout,
        shards: Range<u64>,
        options: &LeaseOptions,
    ) -> Result<Self, LeaseError> {
        let holder = format!(
            "{} pid {} (rust)",
            hostname().unwrap_or_else(|| "?".into()),
            std::process::id()
        );
        let mut protocol = LeaseProtocol::new(
            options.kind,
            layout,
            &options.table,
            Placeholders::Numbered,
            shards.start,
            shards.end,
            &holder,
            &new_token(),
        )
        .map_err(|e| sql_error(&e))?;
        let mut client = postgres::Client::connect(config, postgres::NoTls)
            .map_err(|e| LeaseError::Database(Box::new(e)))?;
        let (shard, recorded, backend, sent) = take(&mut client, &mut protocol, &options.table)?;
        let backend = backend
            .map(|identity| claim_backend(&identity))
            .transpose()?;
        let hold = match options.kind {
            LeaseKind::Expiring { ttl_ms } => Some(Arc::new(Hold::new(ttl_ms, sent))),
            _ => None,
        };
        let state = Arc::new(Shared {
            protocol,
            shard,
            config: config.into(),
            client: Mutex::new(Some(client)),
            hold: hold.clone(),
            closed: AtomicBool::new(false),
            wake: Condvar::new(),
            wake_lock: Mutex::new(()),
        });
        let mut generator = CeilingGenerator::new(
            layout,
            shard,
            options.generator,
            recorded,
            Box::new(Store(Arc::clone(&state))),
        )?;
        if let Some(hold) = hold {
            generator = generator.with_hold(hold);
        }
        let generator = Arc::new(generator);
        let heartbeat = if state.hold.is_some() {
            let (beat_state, beat_generator) = (Arc::clone(&state), Arc::clone(&generator));
            let beat = move || heartbeat(&beat_state, &beat_generator);
            Some(
                thread::Builder::new()
                    .name("shardid-lease".into())
                    .spawn(beat)
                    .map_err(LeaseError::Io)?,
            )
        } else {
            None
        };
        // After a failover the ceiling may be ahead of this host's clock: wait it out here,
        // the heartbeat running, rather than fail the first IDs.
        super::wait_for_ceiling(&layout, recorded);
        Ok(Self {
            shared: state,
            generator,
            heartbeat: Mutex::new(heartbeat),
            _backend: backend,
        })
    }

    /// The shard held.
    pub fn shard(&self) -> u64 {
        self.shared.shard
    }

    /// Whether the lease is still held (an expiring lease: not lost and not past its deadline).
    pub fn is_held(&self) -> bool {
        !self.shared.closed.load(Ordering::Acquire)
            && self.shared.hold.as_ref().is_none_or(|hold| hold.holds())
    }

    /// One ID now.
    ///
    /// # Errors
    /// [`LeaseError::Lost`] once the lease is lost, [`LeaseError::Closed`] after
    /// [`PostgresLease::close`]; [`LeaseError::Database`] when a new ceiling could not be
    /// written (nothing is handed out; the next call tries again); the generator's errors.
    pub fn next_id(&self) -> Result<u64, LeaseError> {
        self.generator.next_id().map_err(|e| self.closed_or(e))
    }

    /// One ID as if the clock read `now_ms`.
    ///
    /// # Errors
    /// As [`PostgresLease::next_id`].
    pub fn next_id_at(&self, now_ms: u64) -> Result<u64, LeaseError> {
        self.generator
            .next_id_at(now_ms)
            .map_err(|e| self.closed_or(e))
    }

    /// Fills `out` with IDs.
    ///
    /// # Errors
    /// As [`PostgresLease::next_id`]; none of `out` may then be used.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), LeaseError> {
        self.generator.next_ids(out).map_err(|e| self.closed_or(e))
    }

    /// `e`, or [`LeaseError::Closed`] when the lease was closed: a closed lease's revoked
    /// generator reports a loss, which is not what happened.
    fn closed_or(&self, e: LeaseError) -> LeaseError {
        if self.shared.closed.load(Ordering::Acquire) {
            LeaseError::Closed {
                shard: self.shared.shard,
            }
        } else {
            e
        }
    }

    /// Releases the shard at once (another process may take it and continue above this one's
    /// IDs); later calls fail with [`LeaseError::Closed`]. Closing twice is fine.
    pub fn close(&self) {
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.generator.revoke();
        {
            let _wake = self
                .shared
                .wake_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.shared.wake.notify_all();
        }
        let handle = self
            .heartbeat
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
        let (sql, params) = self.shared.protocol.release(self.shared.shard);
        let mut client = self
            .shared
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(mut conn) = client.take() {
            // Best effort: an expiring lease that cannot be released expires on its own.
            let _ = run(&mut conn, &sql, &params);
            let _ = conn.close();
        }
    }
}

impl Drop for PostgresLease {
    fn drop(&mut self) {
        self.close();
    }
}

/// Runs the protocol until the lease is taken: the shard, its recorded ceiling, the server
/// session of a session lease, and when the claim that took it was sent.
fn take(
    client: &mut postgres::Client,
    protocol: &mut LeaseProtocol,
    table: &str,
) -> Result<(u64, Option<u64>, Option<String>, u64), LeaseError> {
    let mut sent = monotonic_ms();
    loop {
        match protocol.next() {
            Next::Run { sql, params } => {
                sent = monotonic_ms();
                let result = run(client, &sql, &params);
                match &result {
                    Ok(Some(row)) => {
                        let cells: Vec<Cell<'_>> = row.iter().map(Owned::cell).collect();
                        protocol.feed(Answer::Row(&cells));
                    }
                    Ok(None) => protocol.feed(Answer::NoRow),
                    Err(e) => {
                        let code = e.code().map(postgres::error::SqlState::code);
                        protocol.feed(Answer::Error(code));
                    }
                }
                if matches!(protocol.next(), Next::Raise) {
                    return Err(match result {
                        Err(e) => LeaseError::Database(Box::new(e)),
                        Ok(_) => LeaseError::Database(
                            "the database answered a lease statement unexpectedly".into(),
                        ),
                    });
                }
            }
            Next::Taken {
                shard,
                recorded,
                backend,
            } => return Ok((shard, recorded, backend.map(ToString::to_string), sent)),
            Next::NoFreeShard { first, end, .. } => {
                return Err(LeaseError::NoFreeShard {
                    directory: format!("table {table}").into(),
                    shards: first..end,
                });
            }
            Next::Raise => unreachable!("raised above"),
        }
    }
}

/// The heartbeat thread of an expiring lease: renews it when due, and stops the generator
/// once the lease is lost (taken over, or past its deadline without a renewal).
fn heartbeat(shared: &Shared, generator: &CeilingGenerator) {
    let Some(hold) = &shared.hold else {
        return;
    };
    loop {
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        let Some(wait) = hold.wait() else {
            generator.revoke();
            return;
        };
        if !wait.is_zero() {
            let guard = shared
                .wake_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let _ = shared
                .wake
                .wait_timeout(guard, wait)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        if !shared.heartbeat() {
            if !shared.closed.load(Ordering::Acquire) {
                generator.revoke();
            }
            return;
        }
    }
}

/// This host's name, for the holder column.
fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
}
