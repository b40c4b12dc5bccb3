//! The Rust driver of database leases that `postgres`, `mysql` and `sqlite` share: it
//! runs the core's lease protocol ([`crate::sql::LeaseProtocol`]) on a connection of the
//! database's crate, as Python's `shardid._lease` and Node's `database-lease.js` do. What differs
//! between the two crates (connecting, running one statement, how an error names itself, when a
//! connection is gone) is a [`Client`]; the rest — taking the lease, the heartbeat thread, the
//! ceiling writes, reconnecting, releasing — is here once.

use std::boxed::Box;
use std::fmt;
use std::format;
use std::ops::Range;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;
use std::vec::Vec;

use super::{
    BackendClaim, CeilingGenerator, CeilingStore, DatabaseFailure, Hold, LeaseError, LostLease,
    claim_backend, monotonic_ms, new_token,
};
use crate::driver::{Client, ConnectError, Owned};
use crate::sql::{Answer, Cell, LeaseKind, LeaseProtocol, Next, SqlError, Value};
use crate::{Layout, Options};

/// How a database lease is taken.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LeaseOptions {
    /// Expiring (the default) or session.
    pub kind: LeaseKind,
    /// The table of leases (`shardid_leases`).
    pub table: String,
    /// The table's schema (PostgreSQL), database (the MySQL family) or attached database
    /// (SQLite); `None`: on PostgreSQL where `search_path` finds the table when the lease
    /// starts (else its first schema), then named in every statement; on the MySQL family the
    /// URL's database; on SQLite `main` ([`LeaseProtocol::schema`]).
    pub schema: Option<String>,
    /// The generator's options.
    pub generator: Options,
}

impl LeaseOptions {
    /// An expiring lease of 10 s in `shardid_leases`, the generator's defaults.
    pub fn new() -> Self {
        Self {
            kind: LeaseKind::DEFAULT,
            table: "shardid_leases".into(),
            schema: None,
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

    /// Sets the table's schema (see [`LeaseOptions::schema`]).
    #[must_use]
    pub fn schema(mut self, schema: &str) -> Self {
        self.schema = Some(schema.into());
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

/// A new connection of `C` to `config`, its failure as the lease reports it.
fn connect<C: Client>(config: &str) -> Result<C, LeaseError> {
    C::connect(config).map_err(|e| match e {
        ConnectError::Url(reason) => LeaseError::InvalidArgument {
            argument: C::URL_ARGUMENT,
            reason,
        },
        ConnectError::NotMysql { server, reason } => LeaseError::NotMysql { server, reason },
        ConnectError::Driver(e) => LeaseError::Unreachable(C::boxed(e)),
    })
}

/// What the generator's ceiling store, the heartbeat and the lease share.
struct Shared<C: Client> {
    protocol: LeaseProtocol,
    shard: u64,
    config: String,
    /// The lease's connection (`None`: reconnect before the next statement; a session lease
    /// never does: its lock ended with its session).
    client: Mutex<Option<C>>,
    hold: Option<Arc<Hold>>,
    closed: AtomicBool,
    /// How far ahead of the database's this host's clock was found at a renewal (0: never):
    /// the lease then stops, reporting [`LeaseError::ClockSkew`].
    ahead_ms: std::sync::atomic::AtomicU64,
    /// Wakes the heartbeat early, when the lease is closed.
    wake: Condvar,
    wake_lock: Mutex<()>,
}

impl<C: Client> fmt::Debug for Shared<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseLease")
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

/// The protocol's answer to a statement that returned `row`.
fn answer_of<'a>(row: Option<&'a [Cell<'a>]>) -> Answer<'a> {
    row.map_or(Answer::NoRow, Answer::Row)
}

impl<C: Client> Shared<C> {
    /// Runs a statement of the lease's on its connection, reconnecting an expiring lease's
    /// first, and sending it again after an error the protocol says rolled it back whole
    /// ([`LeaseProtocol::resend_after`]) while the lease is not past its deadline; `Ok(true)`
    /// when the protocol says the lease is still held.
    fn held_after(&self, sql: &str, params: &[Value<'_>]) -> Result<bool, LeaseError> {
        self.run_held(sql, params, false)
    }

    /// [`Shared::held_after`]; with `renewal`, the answer also carries the database's clock,
    /// and a host whose clock is too far ahead of it is no longer held
    /// ([`LeaseProtocol::clock_ahead`]).
    fn run_held(&self, sql: &str, params: &[Value<'_>], renewal: bool) -> Result<bool, LeaseError> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        let session = self.protocol.kind() == LeaseKind::Session;
        let mut resent = 0;
        loop {
            if client.as_ref().is_none_or(C::is_closed) {
                if session {
                    return Err(LeaseError::Lost { shard: self.shard });
                }
                // Closed, not dropped: the `postgres` crate's drop panics on a tokio
                // runtime's thread; its `close` runs off it.
                if let Some(lost) = client.take() {
                    lost.close();
                }
                *client = Some(connect(&self.config)?);
            }
            let Some(conn) = client.as_mut() else {
                unreachable!("connected above")
            };
            let e = match conn.run(sql, params) {
                Ok(row) => {
                    let cells: Option<Vec<Cell<'_>>> = row
                        .as_ref()
                        .map(|row| row.iter().map(Owned::cell).collect());
                    let answer = answer_of(cells.as_deref());
                    if !self.protocol.kept(answer) {
                        return Ok(false);
                    }
                    if renewal && let Some(ahead) = self.protocol.clock_ahead(answer) {
                        self.ahead_ms.store(ahead, Ordering::Release);
                        return Ok(false);
                    }
                    return Ok(true);
                }
                Err(e) => e,
            };
            if C::broken(&e) {
                if let Some(lost) = client.take() {
                    lost.close();
                }
                if session {
                    return Err(LeaseError::Lost { shard: self.shard });
                }
            } else if let Some(wait) = self.protocol.resend_after(C::code(&e).as_deref(), resent)
                && self
                    .hold
                    .as_ref()
                    .is_none_or(|hold| hold.sending().is_some())
            {
                thread::sleep(Duration::from_millis(wait));
                resent += 1;
                continue;
            }
            return Err(LeaseError::Database(C::boxed(e)));
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
        match self.run_held(&sql, &params, true) {
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
struct Store<C: Client>(Arc<Shared<C>>);

impl<C: Client> fmt::Debug for Store<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<C: Client> CeilingStore for Store<C> {
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
            Err(LeaseError::Database(e) | LeaseError::Unreachable(e)) => {
                Err(std::io::Error::other(DatabaseFailure(e)))
            }
            Err(e) => Err(std::io::Error::other(DatabaseFailure(e.to_string().into()))),
        }
    }
}

pub(super) fn sql_error(e: &SqlError) -> LeaseError {
    match *e {
        SqlError::EmptyShards { first, end } => LeaseError::EmptyShards { shards: first..end },
        SqlError::TableName { reason } => LeaseError::InvalidArgument {
            argument: "table",
            reason: format!("is not a valid name: {reason}"),
        },
        SqlError::SchemaName { reason } => LeaseError::InvalidArgument {
            argument: "schema",
            reason: format!("is not a valid name: {reason}"),
        },
        SqlError::Core(e) => LeaseError::Id(e),
    }
}

/// A generator on a shard leased through a database over the connections of `C`.
pub(super) struct DatabaseLease<C: Client> {
    shared: Arc<Shared<C>>,
    generator: Arc<CeilingGenerator>,
    heartbeat: Mutex<Option<thread::JoinHandle<()>>>,
    _backend: Option<BackendClaim>,
}

impl<C: Client> fmt::Debug for DatabaseLease<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseLease")
            .field("shard", &self.shared.shard)
            .field("kind", &self.shared.protocol.kind())
            .finish_non_exhaustive()
    }
}

impl<C: Client> DatabaseLease<C> {
    /// Leases the first free shard of `shards` through the server at `config`.
    pub(super) fn acquire(
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
            C::PLACEHOLDERS,
            shards.start,
            shards.end,
            &holder,
            &new_token(),
        )
        .and_then(|p| p.schema(options.schema.as_deref()))
        .and_then(|p| p.dialect(C::DIALECT))
        .map_err(|e| sql_error(&e))?;
        let mut client = connect::<C>(config)?;
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
            ahead_ms: std::sync::atomic::AtomicU64::new(0),
            wake: Condvar::new(),
            wake_lock: Mutex::new(()),
        });
        let mut generator = CeilingGenerator::new(
            layout,
            shard,
            options.generator,
            recorded,
            Box::new(Store(Arc::clone(&state))),
        )?
        .with_tally(super::Tally::new(&layout, &options.table));
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

    pub(super) fn shard(&self) -> u64 {
        self.shared.shard
    }

    pub(super) fn stats(&self) -> crate::stats::LeaseStats {
        self.generator.lease_stats().unwrap_or_default()
    }

    pub(super) fn is_held(&self) -> bool {
        !self.shared.closed.load(Ordering::Acquire)
            && self.shared.hold.as_ref().is_none_or(|hold| hold.holds())
    }

    pub(super) fn next_id(&self) -> Result<u64, LeaseError> {
        self.generator.next_id().map_err(|e| self.closed_or(e))
    }

    pub(super) fn next_id_at(&self, now_ms: u64) -> Result<u64, LeaseError> {
        self.generator
            .next_id_at(now_ms)
            .map_err(|e| self.closed_or(e))
    }

    pub(super) fn next_ids(&self, out: &mut [u64]) -> Result<(), LeaseError> {
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

    pub(super) fn close(&self) {
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.generator.close();
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
            let _ = conn.run(&sql, &params);
            conn.close();
        }
    }
}

impl<C: Client> Drop for DatabaseLease<C> {
    fn drop(&mut self) {
        self.close();
    }
}

/// What taking a lease came back with: the shard, its recorded ceiling, the server session of
/// a session lease, and when the claim that took it was sent.
type Taken = (u64, Option<u64>, Option<String>, u64);

/// Runs the protocol until the lease is taken.
fn take<C: Client>(
    client: &mut C,
    protocol: &mut LeaseProtocol,
    table: &str,
) -> Result<Taken, LeaseError> {
    let mut sent = monotonic_ms();
    loop {
        match protocol.next() {
            Next::Run { sql, params } => {
                sent = monotonic_ms();
                let result = client.run(&sql, &params);
                match &result {
                    Ok(Some(row)) => {
                        let cells: Vec<Cell<'_>> = row.iter().map(Owned::cell).collect();
                        protocol.feed(Answer::Row(&cells));
                    }
                    Ok(None) => protocol.feed(Answer::NoRow),
                    Err(e) => protocol.feed(Answer::Error(C::code(e).as_deref())),
                }
                if matches!(protocol.next(), Next::Raise) {
                    return Err(match result {
                        Err(e) => LeaseError::Database(C::boxed(e)),
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
            Next::Raise => unreachable!("raised above"),
            refused => return Err(claim_refused(refused, table)),
        }
    }
}

/// The error of a claim the protocol ended without a shard (no free shard, a refusal, a bad
/// argument, a corrupt row, the clocks too far apart): one reading for each Rust executor of
/// [`LeaseProtocol`], this driver's `take` and the async lease's
/// (`lease::tokio_postgres`'s `claim`).
pub(super) fn claim_refused(next: Next<'_>, table: &str) -> LeaseError {
    match next {
        Next::NoFreeShard { first, end, .. } => LeaseError::NoFreeShard {
            directory: format!("table {table}").into(),
            shards: first..end,
        },
        Next::Refuse { reason } => LeaseError::Unsupported {
            reason: reason.into(),
        },
        Next::Invalid { argument, reason } => LeaseError::InvalidArgument { argument, reason },
        Next::Corrupt { reason } => LeaseError::Database(reason.into()),
        Next::ClockSkew { ahead_ms, max_ms } => LeaseError::ClockSkew { ahead_ms, max_ms },
        Next::Run { .. } | Next::Taken { .. } | Next::Raise => {
            unreachable!("a statement to run, a shard taken or an error to raise: the executor's")
        }
    }
}

/// The heartbeat thread of an expiring lease: renews it when due, and stops the generator
/// once the lease is lost (taken over, or past its deadline without a renewal).
fn heartbeat<C: Client>(shared: &Shared<C>, generator: &CeilingGenerator) {
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
                match shared.ahead_ms.load(Ordering::Acquire) {
                    0 => generator.revoke(),
                    // A renewal found this host's clock too far ahead of the database's.
                    ahead_ms => generator.revoke_clock_skew(ahead_ms),
                }
            }
            return;
        }
    }
}

/// This host's name, for the holder column.
pub(super) fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
}

/// The public methods of a lease type wrapping a [`DatabaseLease`] (`self.0`).
macro_rules! lease_methods {
    ($name:ident, $client:ty, $what:literal, $url:literal, $errors:literal) => {
        #[doc = concat!(
            "A generator on a shard leased through ", $what, ": see the [module](self) docs. ",
            "`Sync`: share it between threads. Dropping it releases the shard."
        )]
        pub struct $name(DatabaseLease<$client>);

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl $name {
            #[doc = concat!(
                "Leases the first free shard of `shards` through ", $url, ".\n\n# Errors\n",
                "[`LeaseError::EmptyShards`]; [`LeaseError::InvalidArgument`] for a URL the ",
                "core cannot read or a bad table name; [`LeaseError::NoFreeShard`] when every ",
                "shard is held; ", $errors
            )]
            pub fn acquire(
                url: &str,
                layout: Layout,
                shards: Range<u64>,
                options: &LeaseOptions,
            ) -> Result<Self, LeaseError> {
                DatabaseLease::acquire(url, layout, shards, options).map(Self)
            }
        }

        lease_methods!($name);
    };
    ($name:ident) => {
        impl $name {
            /// The shard held.
            pub fn shard(&self) -> u64 {
                self.0.shard()
            }

            /// What the lease did: acquisitions, renewals, ceiling writes, late renewals,
            /// losses, and whether it holds now ([`crate::stats::LeaseStats`]). Exporters see
            /// it too ([`crate::stats::collect`], family `lease`).
            pub fn stats(&self) -> crate::stats::LeaseStats {
                self.0.stats()
            }

            /// Whether the lease is still held (an expiring lease: not lost and not past its
            /// deadline).
            pub fn is_held(&self) -> bool {
                self.0.is_held()
            }

            /// One ID now.
            ///
            /// # Errors
            /// [`LeaseError::Lost`] once the lease is lost, [`LeaseError::Closed`] after the
            /// `close` method; [`LeaseError::Database`] when a new ceiling could not be written
            /// (nothing is handed out; the next call tries again); the generator's errors.
            pub fn next_id(&self) -> Result<u64, LeaseError> {
                self.0.next_id()
            }

            /// One ID as if the clock read `now_ms`.
            ///
            /// # Errors
            /// As the `next_id` method.
            pub fn next_id_at(&self, now_ms: u64) -> Result<u64, LeaseError> {
                self.0.next_id_at(now_ms)
            }

            /// Fills `out` with IDs.
            ///
            /// # Errors
            /// As the `next_id` method; none of `out` may then be used.
            pub fn next_ids(&self, out: &mut [u64]) -> Result<(), LeaseError> {
                self.0.next_ids(out)
            }

            /// Releases the shard at once (another process may take it and continue above this
            /// one's IDs); later calls fail with [`LeaseError::Closed`]. Closing twice is fine.
            pub fn close(&self) {
                self.0.close();
            }
        }
    };
}

pub(super) use lease_methods;

#[cfg(test)]
mod tests {
    //! The driver's loop over a fake MariaDB connection: what no real server can be made to
    //! do on demand (a Galera node refusing a write while the cluster evicts a node; a trigger
    //! that raised it would also hide the statement's last insert ID, by which the lease reads
    //! its answers). Python's and Node's drivers get the same error from a real server's
    //! connection in `tests/mysql/test_lease.py`.
    use super::*;
    use crate::driver::ConnectError;
    use crate::sql::{Dialect, MAX_RESENDS, Placeholders};
    use std::io;
    use std::sync::atomic::AtomicU32;

    /// Ceiling records still to refuse, and how many were sent.
    static REFUSALS: AtomicU32 = AtomicU32::new(0);
    static RECORDS: AtomicU32 = AtomicU32::new(0);

    /// A MariaDB connection that holds one free row: shard 0, ceiling 0.
    struct Fake;

    impl Client for Fake {
        type Error = io::Error;
        const DIALECT: Dialect = Dialect::Mariadb;
        const PLACEHOLDERS: Placeholders = Placeholders::Question;
        const URL_ARGUMENT: &'static str = "url";

        fn url_problem(_: &str) -> Option<String> {
            None
        }

        fn connect(_: &str) -> Result<Self, ConnectError<io::Error>> {
            Ok(Self)
        }

        /// Every statement of an expiring lease is an `UPDATE` answered by
        /// `(affected rows, last insert ID)`: the claim's packs shard 0 with ceiling 0; a
        /// record's is the ceiling written plus one, unless it is refused as a surviving Galera
        /// node refused it in CI.
        fn run(
            &mut self,
            sql: &str,
            params: &[Value<'_>],
        ) -> Result<Option<Vec<Owned>>, io::Error> {
            let now = i64::try_from(crate::clock::now_ms()).unwrap();
            if sql.starts_with("SELECT") {
                // The server's clock, read before the claim: this host's.
                return Ok(Some(std::vec![Owned::Int(now)]));
            }
            let id = if sql.contains("0 * LAST_INSERT_ID(") {
                // A renewal: the server's clock.
                now
            } else if sql.contains("LAST_INSERT_ID(GREATEST(") {
                RECORDS.fetch_add(1, Ordering::SeqCst);
                if REFUSALS
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok()
                {
                    return Err(io::Error::other("1180"));
                }
                // The ceiling is the largest number passed (the time to live and the shard
                // are the others).
                let units = params.iter().filter_map(|p| match p {
                    Value::Int(n) => Some(*n),
                    Value::Text(_) => None,
                });
                i64::try_from(units.max().expect("a record names its ceiling")).unwrap() + 1
            } else {
                1
            };
            Ok(Some(std::vec![Owned::Int(1), Owned::Int(id)]))
        }

        fn describe(e: &io::Error) -> String {
            e.to_string()
        }

        fn message(_: &io::Error) -> Option<String> {
            None
        }

        /// The error's text is its MySQL error number.
        fn code(e: &io::Error) -> Option<String> {
            Some(e.to_string())
        }

        fn broken(_: &io::Error) -> bool {
            false
        }

        fn is_closed(&self) -> bool {
            false
        }

        fn close(self) {}
    }

    /// A ceiling's record refused with 1180 is sent again (after 25, 50, 100 ms) and the ID
    /// handed out; refused every time, it is sent `1 + MAX_RESENDS` times and no more, and the
    /// error is the driver's, as it was.
    #[test]
    fn a_record_a_galera_node_refused_is_sent_again_a_bounded_number_of_times() {
        let lease =
            DatabaseLease::<Fake>::acquire("fake", Layout::TWITTER, 0..1, &LeaseOptions::new())
                .expect("the fake's row is free");
        REFUSALS.store(3, Ordering::SeqCst);
        assert!(lease.next_id().is_ok());
        assert_eq!(RECORDS.swap(0, Ordering::SeqCst), 4);
        assert_eq!(REFUSALS.load(Ordering::SeqCst), 0);
        // Well past the ceiling just recorded (a span ahead), so the next ID needs another.
        REFUSALS.store(MAX_RESENDS + 2, Ordering::SeqCst);
        let err = lease
            .next_id_at(crate::clock::now_ms() + 60_000)
            .expect_err("refused every time");
        assert!(err.to_string().contains("1180"), "{err}");
        assert_eq!(RECORDS.load(Ordering::SeqCst), 1 + MAX_RESENDS);
        assert_eq!(REFUSALS.load(Ordering::SeqCst), 1);
        lease.close();
    }
}
