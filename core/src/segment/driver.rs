//! The Rust driver of dense IDs from segments that `postgres`, `mysql` and `sqlite`
//! share: the core's [`SegmentAllocator`] with fetches on a thread of their own, as the Python
//! and Node clients do. The steps of a take and of a give-back, the rotation across ticket
//! servers and the MySQL family's resend are the core's [`SegmentProtocol`], which this
//! driver executes ([`execute`]) as Python's and Node's do: it opens the connection a step
//! names, runs the statement a step names on it, and feeds back the row or the driver's error
//! code. A database is a [`SegmentClient`] over the one connection trait ([`Client`]): its
//! protocol and how it runs one statement (SQLite: the tables made on first use); the rest —
//! the fetch thread, waiting for a segment, reconnecting, giving the unused rest back on
//! close, the errors — is here once.

use std::boxed::Box;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use std::vec::Vec;
use std::{fmt, format, thread};

use super::protocol::{Command, Failure, SegmentProtocol, Step};
use super::{Empty, Fetch, Segment, SegmentAllocator, SizePolicy, Unused};
use crate::ErrorKind;
use crate::driver::{Client, ConnectError, Owned};
use crate::sql::{Cell, Dialect, UNKNOWN_TAG, Value};

/// Why `DenseIds` could not hand out an ID (the same for every database).
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
    /// The allocator was closed (`DenseIds::close`): it hands out no more IDs, and retrying
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
    /// The server a `mysql://` URL names did not greet as MySQL ([`ErrorKind::NotMysql`]).
    NotMysql {
        /// `host:port`.
        server: String,
        /// What it did instead.
        reason: String,
    },
    /// The first connection failed: the database cannot be reached
    /// ([`ErrorKind::DatabaseUnreachable`]; the driver's error is the source, shown with the
    /// server's or the system's own message).
    Database(Box<dyn std::error::Error + Send + Sync>),
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

    pub(crate) fn of_connect<C: Client>(e: ConnectError<C::Error>) -> Self {
        match e {
            ConnectError::Url(reason) => Self::InvalidArgument {
                argument: C::URL_ARGUMENT,
                reason,
            },
            ConnectError::NotMysql { server, reason } => Self::NotMysql { server, reason },
            ConnectError::Driver(e) => Self::Database(C::boxed(e)),
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
            Self::Database(e) => Some(&**e),
            _ => None,
        }
    }
}

/// Why one fetch failed.
pub(crate) enum Failed<E> {
    /// The tag does not exist (the driver's description of it).
    #[cfg_attr(
        not(any(feature = "mysql", feature = "sqlite", test)),
        allow(dead_code)
    )]
    UnknownTag(String),
    /// The database answered with a row no shardid server writes, or the protocol refused
    /// its answer (an exhausted tag).
    Unusable(String),
    /// The last server tried could not be connected to (why, as shown).
    Unreachable(String),
    /// The driver's error.
    Driver(E),
}

impl<E> From<E> for Failed<E> {
    fn from(e: E) -> Self {
        Self::Driver(e)
    }
}

/// What a database's segments need besides its [`Client`]: the core's protocol of its takes
/// and give-backs, how it runs one of the protocol's statements, and the creation of a tag.
pub(crate) trait SegmentClient: Client {
    /// The statements of one schema, for every dialect the client's servers speak.
    type Statements: Send + Sync + 'static;

    /// The statements of `schema`; the reason it is not a valid name.
    fn statements(schema: &str) -> Result<Self::Statements, String>;

    /// The core's protocol over `servers` ticket servers, which [`execute`] runs; `None` for
    /// a client whose steps are its own ([`SegmentClient::take`] and
    /// [`SegmentClient::give_back`] overridden: a backend without SQL, Redis), which the driver
    /// runs on its one server.
    fn protocol(_: &Self::Statements, _servers: usize) -> Option<SegmentProtocol> {
        None
    }

    /// Runs one statement of the protocol: its first row (`None`: none). SQLite's makes the
    /// tables of a file no client used yet and runs it again.
    fn step(
        &mut self,
        _: &Self::Statements,
        statement: &str,
        values: &[Value<'_>],
    ) -> Result<Option<Vec<Owned>>, Self::Error> {
        self.run(statement, values)
    }

    /// Takes a segment of `size` IDs of `tag` on this connection to a server of `dialect`,
    /// whose stride for the tag is `stride` once learnt (kept for the next take): the
    /// protocol's take on one server (serial periods take their segments so).
    fn take(
        &mut self,
        statements: &Self::Statements,
        dialect: Dialect,
        tag: &str,
        size: u64,
        stride: &mut Option<u64>,
    ) -> Result<Segment, Failed<Self::Error>> {
        let Some(mut protocol) = Self::protocol(statements, 1) else {
            return Err(Failed::Unusable("this client has no take".into()));
        };
        protocol.learnt(0, *stride);
        protocol.take(tag, size);
        let done = execute(&mut protocol, &mut One(self, dialect), statements);
        *stride = protocol.stride(0);
        match done? {
            Done::Segment(segment) => Ok(segment),
            Done::GivenBack(_) => Err(Failed::Unusable("a take gave back".into())),
        }
    }

    /// Gives `unused` back on this connection; whether the server took it.
    fn give_back(
        &mut self,
        statements: &Self::Statements,
        dialect: Dialect,
        tag: &str,
        unused: &Unused,
    ) -> Result<bool, Self::Error> {
        give_back_on(self, statements, dialect, tag, unused.first, unused.end)
    }

    /// Creates `tag`, its first number 1, on a server of `dialect` whose schema holds the
    /// segments' DDL (SQLite: the tables too); an existing tag is left as it is.
    fn create_tag(
        &mut self,
        statements: &Self::Statements,
        dialect: Dialect,
        tag: &str,
    ) -> Result<(), Self::Error>;
}

/// Gives `first..end` of `tag` back on `conn`, to a server of `dialect`, by the protocol;
/// whether the server took it.
pub(crate) fn give_back_on<C: SegmentClient>(
    conn: &mut C,
    statements: &C::Statements,
    dialect: Dialect,
    tag: &str,
    first: u64,
    end: u64,
) -> Result<bool, C::Error> {
    let Some(mut protocol) = C::protocol(statements, 1) else {
        return Ok(false);
    };
    protocol.give_back(tag, first, end);
    match execute(&mut protocol, &mut One(conn, dialect), statements) {
        Ok(Done::GivenBack(returned)) => Ok(returned),
        Err(Failed::Driver(e)) => Err(e),
        _ => Ok(false),
    }
}

/// What an operation of the protocol came to.
pub(crate) enum Done {
    /// A take's segment.
    Segment(Segment),
    /// A give-back's: whether the server took the rest back.
    GivenBack(bool),
}

/// The connections an executor runs the protocol's steps on.
pub(crate) trait Links<C> {
    /// Server `server`'s connection (opened if there is none, or it was lost) and its server's
    /// dialect; why not, as shown.
    fn link(&mut self, server: usize) -> Result<(&mut C, Dialect), String>;

    /// Server `server`'s connection is gone: closed, opened again when a step needs it.
    fn lost(&mut self, server: usize);
}

/// One connection the caller keeps (a serial period's take), to a server of its dialect.
pub(crate) struct One<'c, C>(pub(crate) &'c mut C, pub(crate) Dialect);

impl<C> Links<C> for One<'_, C> {
    fn link(&mut self, _: usize) -> Result<(&mut C, Dialect), String> {
        Ok((&mut *self.0, self.1))
    }

    /// The caller sees the driver's error and reconnects as it does.
    fn lost(&mut self, _: usize) {}
}

impl<C: Client> Links<C> for [Server<C>] {
    fn link(&mut self, server: usize) -> Result<(&mut C, Dialect), String> {
        let Server { url, conn } = &mut self[server];
        match connected(conn, url) {
            Ok((conn, dialect)) => Ok((conn, *dialect)),
            // A connection's failure with the driver's own message; the rest as reported.
            Err(SegmentError::Database(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn lost(&mut self, server: usize) {
        // Closed, not dropped (see `Shared`'s drop).
        if let Some((lost, _)) = self[server].conn.take() {
            lost.close();
        }
    }
}

/// What a step came to, fed back to the protocol.
enum Fed<E> {
    Connected(Dialect),
    Row(Option<Vec<Owned>>),
    Failed(Option<String>, Failed<E>),
}

/// Runs the protocol's operation under way until it ends: opens the connection a step names,
/// runs the statement it names there, feeds back the row or the driver's error code. Every
/// rule of a take (which server, which statement, what to send again) is the protocol's.
///
/// # Errors
/// The last driver's error or connection failure once every server was tried
/// ([`Failed::Driver`], [`Failed::Unreachable`]), the protocol's refusals
/// ([`Failed::UnknownTag`], [`Failed::Unusable`]); a give-back that failed on the driver's
/// error, that error.
pub(crate) fn execute<C, L>(
    protocol: &mut SegmentProtocol,
    links: &mut L,
    statements: &C::Statements,
) -> Result<Done, Failed<C::Error>>
where
    C: SegmentClient,
    L: Links<C> + ?Sized,
{
    let mut met = None;
    loop {
        let fed = match protocol.next() {
            Step::Segment(segment) => return Ok(Done::Segment(segment)),
            Step::GivenBack(false) if met.is_some() => {
                return Err(met.unwrap_or_else(|| unreachable!("checked")));
            }
            Step::GivenBack(returned) => return Ok(Done::GivenBack(returned)),
            Step::Failed(Failure::Driver) => {
                return Err(met.unwrap_or_else(|| Failed::Unusable("no server was tried".into())));
            }
            Step::Failed(Failure::Refused {
                kind: ErrorKind::UnknownTag,
                reason,
                ..
            }) => return Err(Failed::UnknownTag(reason)),
            Step::Failed(Failure::Refused { reason, .. }) => return Err(Failed::Unusable(reason)),
            Step::Idle => return Err(Failed::Unusable("no operation under way".into())),
            Step::Connect { server } => match links.link(server) {
                Ok((_, dialect)) => Fed::Connected(dialect),
                Err(why) => Fed::Failed(None, Failed::Unreachable(why)),
            },
            Step::Run {
                server,
                command: Command::Sql { statement, values },
            } => match links.link(server) {
                Err(why) => Fed::Failed(None, Failed::Unreachable(why)),
                Ok((conn, _)) => match SegmentClient::step(conn, statements, statement, &values) {
                    Ok(row) => Fed::Row(row),
                    Err(e) => {
                        if C::broken(&e) {
                            links.lost(server);
                        }
                        Fed::Failed(C::code(&e), Failed::Driver(e))
                    }
                },
            },
        };
        match fed {
            Fed::Connected(dialect) => protocol.connected(dialect),
            Fed::Row(row) => {
                let cells: Option<Vec<Cell<'_>>> = row
                    .as_ref()
                    .map(|row| row.iter().map(Owned::cell).collect());
                protocol.answer(cells.as_deref());
            }
            Fed::Failed(code, failed) => {
                protocol.failed(code.as_deref());
                met = Some(failed);
            }
        }
    }
}

/// `tag`'s refusal, if it is not 1 to [`MAX_TAG_LEN`](crate::sql::MAX_TAG_LEN) bytes.
pub(crate) fn check_tag(tag: &str) -> Result<(), SegmentError> {
    if tag.is_empty() || tag.len() > crate::sql::MAX_TAG_LEN {
        return Err(SegmentError::InvalidArgument {
            argument: "tag",
            reason: "must be 1 to 200 bytes of text".into(),
        });
    }
    Ok(())
}

/// Creates `tag` (from 1) on the server `url` names, whose `schema` holds the segments' DDL:
/// what each database's public `create_tag` runs, as Python's `create_tag` and Node's
/// `createTag` do (SQLite's own `create_tag` also takes the first number).
#[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
pub(crate) fn create_tag<C: SegmentClient>(
    url: &str,
    tag: &str,
    schema: &str,
) -> Result<(), SegmentError> {
    check_tag(tag)?;
    let statements = C::statements(schema).map_err(|reason| SegmentError::InvalidArgument {
        argument: "schema",
        reason,
    })?;
    let (mut conn, dialect) = open::<C>(url)?;
    let created = conn.create_tag(&statements, dialect, tag);
    let result = created.map_err(|e| SegmentError::Database(C::boxed(e)));
    conn.close();
    result
}

/// Creates `tag` (its first number 1) in `schema` of the database `url` names, whichever it
/// is (the core's one rule for URLs, [`Dialect::of_url`](crate::sql::Dialect::of_url)):
/// `shardid::segment::create_tag`, as Python's `create_tag` and Node's `createTag` take any
/// URL. An existing tag is left as it is.
///
/// # Errors
/// [`SegmentError::InvalidArgument`] for a bad tag or schema, a URL that names no database, or
/// one whose database this build leaves out (its cargo feature); then as the database's own
/// `create_tag`.
pub fn create_any(url: &str, tag: &str, schema: &str) -> Result<(), SegmentError> {
    #[cfg(feature = "redis")]
    if crate::redis::is_redis_url(url) {
        return crate::redis::create_tag(url, tag, schema);
    }
    let dialect = Dialect::of_url(url).map_err(|e| SegmentError::InvalidArgument {
        argument: "url",
        reason: e.to_string(),
    })?;
    match dialect {
        #[cfg(feature = "postgres")]
        Dialect::Postgres => super::postgres::create_tag(url, tag, schema),
        #[cfg(feature = "mysql")]
        Dialect::Mysql | Dialect::Mariadb => super::mysql::create_tag(url, tag, schema),
        #[cfg(feature = "sqlite")]
        Dialect::Sqlite => super::sqlite::create_tag(url, tag, schema, 1).map(drop),
        #[allow(unreachable_patterns)] // with every feature, no database is left out
        other => Err(SegmentError::InvalidArgument {
            argument: "url",
            reason: format!(
                "this build of shardid has no {} client (cargo feature `{}`)",
                other.family_name(),
                other.family_name()
            ),
        }),
    }
}

/// What the fetch thread and the callers share.
struct Shared<C: SegmentClient> {
    allocator: SegmentAllocator,
    tag: String,
    statements: C::Statements,
    /// The ticket servers and the protocol taken from them (one fetch at a time: one lock).
    servers: Mutex<Servers<C>>,
    /// The last fetch's error (`None` after a success).
    error: Mutex<Option<String>>,
    unknown_tag: AtomicBool,
    arrived: Condvar,
    arrived_lock: Mutex<()>,
    closed: AtomicBool,
    wait: Duration,
}

/// The ticket servers' connections and the protocol that says which to take from and what to
/// send (`None`: a client whose steps are its own, on its one server).
struct Servers<C> {
    links: Vec<Server<C>>,
    protocol: Option<SegmentProtocol>,
}

/// One ticket server of a tag.
pub(crate) struct Server<C> {
    url: String,
    /// The connection and its server's dialect (`None`: reconnect at the next fetch).
    conn: Option<(C, crate::sql::Dialect)>,
}

/// The connection `conn` to `url`, opened if there is none.
fn connected<'c, C: Client>(
    conn: &'c mut Option<(C, crate::sql::Dialect)>,
    url: &str,
) -> Result<&'c mut (C, crate::sql::Dialect), SegmentError> {
    if conn.as_ref().is_none_or(|(conn, _)| conn.is_closed()) {
        *conn = Some(open::<C>(url)?);
    }
    Ok(conn
        .as_mut()
        .unwrap_or_else(|| unreachable!("connected above")))
}

/// A new connection of `C` to `url` and its server's dialect.
fn open<C: Client>(url: &str) -> Result<(C, crate::sql::Dialect), SegmentError> {
    let mut conn = C::connect(url).map_err(SegmentError::of_connect::<C>)?;
    let dialect = conn
        .detect()
        .map_err(|e| SegmentError::Database(C::boxed(e)))?;
    Ok((conn, dialect))
}

impl<C: SegmentClient> Shared<C> {
    /// One segment: the protocol's take (each server in turn, starting after the last that
    /// answered, until one does), or a client's own take on its one server; its error as the
    /// fetch reports it.
    fn take(&self, servers: &mut Servers<C>, size: u64) -> Result<Segment, String> {
        let Servers { links, protocol } = servers;
        let taken = match protocol {
            Some(protocol) => {
                protocol.take(&self.tag, size);
                match execute(protocol, links.as_mut_slice(), &self.statements) {
                    Ok(Done::Segment(segment)) => Ok(segment),
                    Ok(Done::GivenBack(_)) => Err(Failed::Unusable("a take gave back".into())),
                    Err(failed) => Err(failed),
                }
            }
            None => match links.as_mut_slice().link(0) {
                Err(why) => Err(Failed::Unreachable(why)),
                Ok((conn, dialect)) => {
                    let taken = conn.take(&self.statements, dialect, &self.tag, size, &mut None);
                    if matches!(&taken, Err(Failed::Driver(e)) if C::broken(e)) {
                        links.as_mut_slice().lost(0);
                    }
                    taken
                }
            },
        };
        taken.map_err(|failed| match failed {
            Failed::UnknownTag(why) => {
                self.unknown_tag.store(true, Ordering::Release);
                why
            }
            Failed::Unusable(why) | Failed::Unreachable(why) => why,
            Failed::Driver(e) => {
                if C::code(&e).as_deref() == Some(UNKNOWN_TAG) {
                    self.unknown_tag.store(true, Ordering::Release);
                }
                C::describe(&e)
            }
        })
    }

    /// Takes one segment (on a thread of its own) and hands it to the allocator.
    fn fetch(&self, fetch: Fetch) {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let result = self.take(&mut servers, fetch.size);
        let mut error = self.error.lock().unwrap_or_else(PoisonError::into_inner);
        settle(&self.allocator, result, &mut error);
        drop(error);
        drop(servers);
        let _guard = self
            .arrived_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.arrived.notify_all();
    }
}

/// The connections closed through [`Client::close`], not dropped: the `postgres` crate's client
/// blocks on a runtime of its own when dropped, which panics on a tokio runtime's thread (a
/// `connect` inside an async handler that fails after connecting: an unknown tag, a refused
/// first take); its `close` runs off it. After [`Driver::close`] there is none left.
impl<C: SegmentClient> Drop for Shared<C> {
    fn drop(&mut self) {
        let servers = self
            .servers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for server in &mut servers.links {
            if let Some((conn, _)) = server.conn.take() {
                conn.close();
            }
        }
    }
}

/// What a fetch came to, handed to the allocator: the segment filled in, or the fetch marked
/// failed (its backoff) and `error` set to what a caller that finds no segment is told. Where
/// every Rust client's fetch ends (this driver's thread, the async client's task).
pub(super) fn settle(
    allocator: &SegmentAllocator,
    result: Result<Segment, String>,
    error: &mut Option<String>,
) {
    let now = crate::now_ms();
    match result {
        Ok(segment) if allocator.fill(segment, now).is_ok() => *error = None,
        Ok(segment) => {
            allocator.fetch_failed(now);
            *error = Some(format!(
                "the database returned an unusable segment {segment:?}"
            ));
        }
        Err(why) => {
            allocator.fetch_failed(now);
            *error = Some(why);
        }
    }
}

/// Dense IDs of one tag over the connections of `C`: what each database's `DenseIds` wraps.
pub(crate) struct Driver<C: SegmentClient> {
    shared: Arc<Shared<C>>,
}

impl<C: SegmentClient> fmt::Debug for Driver<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DenseIds")
            .field("tag", &self.shared.tag)
            .finish_non_exhaustive()
    }
}

/// A `DenseIds` dropped without `close` gives its unused rest back as `close` does (at the end
/// of `main`, or of whatever owned it), so the next process continues at the next number
/// rather than past the segments this one held (issue 59); after `close`, nothing. Bounded as
/// `close` is: a fetch in flight is waited for at most `wait`, then one statement. A process
/// ended by `std::process::exit`, a panic that aborts or a signal runs no drops: what it held
/// is a hole, never a duplicate.
impl<C: SegmentClient> Drop for Driver<C> {
    fn drop(&mut self) {
        self.close();
    }
}

impl<C: SegmentClient> Driver<C> {
    /// Connects to the first of `urls` (ticket servers of the tag, taken from in turn) that
    /// answers, whose `schema` holds the segments' DDL, and takes the first segment of `tag`.
    pub(crate) fn connect<S: AsRef<str>>(
        urls: &[S],
        tag: &str,
        schema: &str,
        policy: SizePolicy,
    ) -> Result<Self, SegmentError> {
        check_tag(tag)?;
        let statements = C::statements(schema).map_err(|reason| SegmentError::InvalidArgument {
            argument: "schema",
            reason,
        })?;
        if urls.is_empty() {
            return Err(SegmentError::InvalidArgument {
                argument: "servers",
                reason: "must hold at least one URL".into(),
            });
        }
        let mut servers = Vec::with_capacity(urls.len());
        for url in urls {
            if let Some(reason) = C::url_problem(url.as_ref()) {
                return Err(SegmentError::InvalidArgument {
                    argument: C::URL_ARGUMENT,
                    reason,
                });
            }
            servers.push(Server {
                url: url.as_ref().into(),
                conn: None,
            });
        }
        // The database cannot be reached when no server answers (the last one's error).
        let mut first = Err(SegmentError::InvalidArgument {
            argument: "servers",
            reason: "must hold at least one URL".into(),
        });
        for (index, server) in servers.iter_mut().enumerate() {
            first = connected(&mut server.conn, &server.url).map(|_| index);
            if first.is_ok() {
                break;
            }
        }
        let first = first?;
        let protocol = C::protocol(&statements, servers.len()).map(|mut protocol| {
            protocol.start_at(first);
            protocol
        });
        let shared = Arc::new(Shared {
            allocator: SegmentAllocator::new(policy),
            tag: tag.into(),
            statements,
            servers: Mutex::new(Servers {
                links: servers,
                protocol,
            }),
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

    pub(crate) fn next_id(&self) -> Result<u64, SegmentError> {
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

    pub(crate) fn next_ids(&self, out: &mut [u64]) -> Result<(), SegmentError> {
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

    pub(crate) fn stats(&self) -> crate::stats::SegmentStats {
        self.shared.allocator.stats()
    }

    pub(crate) fn close(&self) -> u64 {
        // Once: a second close (or the drop after one) gives nothing back again. The rest
        // given back twice could be handed out twice: another process may have taken that very
        // range in between, and the second give-back would find the row where it expects it.
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return 0;
        }
        let deadline = Instant::now() + self.shared.wait;
        while self.shared.allocator.fetching() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        let Some(unused) = self.shared.allocator.unused() else {
            return 0;
        };
        let mut servers = self
            .shared
            .servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let shared = &self.shared;
        let Servers { links, protocol } = &mut *servers;
        // The rest goes back to the server it came from (the protocol knows which).
        let returned = match protocol {
            Some(protocol) => {
                protocol.give_back(&shared.tag, unused.first, unused.end);
                let done = execute(protocol, links.as_mut_slice(), &shared.statements);
                matches!(done, Ok(Done::GivenBack(true)))
            }
            None => links
                .as_mut_slice()
                .link(0)
                .ok()
                .and_then(|(conn, dialect)| {
                    conn.give_back(&shared.statements, dialect, &shared.tag, &unused)
                        .ok()
                })
                .unwrap_or(false),
        };
        for server in links.iter_mut() {
            if let Some((conn, _)) = server.conn.take() {
                conn.close();
            }
        }
        unused.lost + if returned { 0 } else { unused.count }
    }
}

/// The public type `DenseIds` of a database's module, wrapping a [`Driver`] (`self.0`): its
/// `connect` and these methods.
macro_rules! dense_ids_methods {
    ($client:ty, $what:literal, $url:literal, $errors:literal $(, $servers:ident)?) => {
        #[doc = concat!(
            "Dense IDs of one tag from ", $what, ": see the [module](self) docs. `Sync`: share ",
            "it (in an `Arc`) between threads."
        )]
        pub struct DenseIds(Driver<$client>);

        impl DenseIds {
            #[doc = concat!(
                "Connects to ", $url, ", whose `schema` holds the tag `tag` (`create_tag`), and ",
                "takes its first segment.\n\n# Errors\n[`SegmentError::InvalidArgument`] for a ",
                "bad tag, schema or URL, [`SegmentError::UnknownTag`], ", $errors,
                ", [`SegmentError::Unavailable`] when the first segment does not arrive."
            )]
            pub fn connect(
                url: &str,
                tag: &str,
                schema: &str,
                policy: SizePolicy,
            ) -> Result<Self, SegmentError> {
                Driver::connect(&[url], tag, schema, policy).map(Self)
            }
        }

        dense_ids_methods!(DenseIds $(, $servers)?);
    };
    ($name:ident, connect_servers) => {
        impl $name {
            /// Dense IDs of `tag` from several ticket servers (each `schema` rendered as one of
            /// them: `Segments::ticket_server`), taken from in turn: each fetch from the server
            /// after the last that answered, passing over one that does not (as Python's and
            /// Node's clients do). Connects to the first that answers and takes the first
            /// segment. The IDs are unique across the servers (each hands out its own residue)
            /// but increase only per server.
            ///
            /// # Errors
            /// As the `connect` method; [`SegmentError::InvalidArgument`] for an empty list,
            /// [`SegmentError::Database`] (the last server's error) when no server answers.
            pub fn connect_servers<S: AsRef<str>>(
                servers: &[S],
                tag: &str,
                schema: &str,
                policy: SizePolicy,
            ) -> Result<Self, SegmentError> {
                Driver::connect(servers, tag, schema, policy).map(Self)
            }
        }
        dense_ids_methods!($name);
    };
    ($name:ident) => {
        impl $name {
            /// The next ID (increasing), waiting at most 5 s for a segment when both are used
            /// up.
            ///
            /// # Errors
            /// [`SegmentError::Unavailable`] (retry later), [`SegmentError::UnknownTag`],
            /// [`SegmentError::Closed`] after the `close` method.
            pub fn next_id(&self) -> Result<u64, SegmentError> {
                self.0.next_id()
            }

            /// Fills `out` with IDs, waiting for segments as the `next_id` method does.
            ///
            /// # Errors
            /// As the `next_id` method; the IDs written before the error are lost (a hole,
            /// never a duplicate).
            pub fn next_ids(&self, out: &mut [u64]) -> Result<(), SegmentError> {
                self.0.next_ids(out)
            }

            /// What this allocator did: fetches, failed fetches and their latency, waits with
            /// both segments empty, numbers skipped, what is left of the current segment
            /// ([`crate::stats::SegmentStats`], the names of Python's and Node's `stats()`).
            pub fn stats(&self) -> crate::stats::SegmentStats {
                self.0.stats()
            }

            /// Gives the unused rest back (a restart then continues at the next number) and
            /// closes the connection; returns how many numbers were lost (neither handed out
            /// nor given back). Call it when no other thread takes IDs any more.
            pub fn close(&self) -> u64 {
                self.0.close()
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

pub(crate) use dense_ids_methods;

/// The driver over a client with no database behind it: a row per URL that answers
/// PostgreSQL's statements as the server would and counts them, the connections and the
/// gives-back, so each test reads what the driver sent.
#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::io;
    use std::vec::Vec;

    use super::*;
    use crate::driver::Owned;
    use crate::sql::{Dialect, Placeholders, Value};

    #[derive(Default)]
    struct Row {
        next: u64,
        takes: u64,
        connects: u64,
        given_back: Vec<(u64, u64)>,
        down: bool,
        unknown: bool,
        /// The next take fails as a lost connection would.
        break_next: bool,
    }

    static ROWS: Mutex<BTreeMap<String, Row>> = Mutex::new(BTreeMap::new());

    fn with<T>(url: &str, f: impl FnOnce(&mut Row) -> T) -> T {
        let mut rows = ROWS.lock().unwrap_or_else(PoisonError::into_inner);
        f(rows.entry(url.into()).or_default())
    }

    struct Fake(String);

    impl Client for Fake {
        type Error = io::Error;
        const DIALECT: Dialect = Dialect::Postgres;
        const PLACEHOLDERS: Placeholders = Placeholders::Numbered;
        const URL_ARGUMENT: &'static str = "url";

        fn url_problem(url: &str) -> Option<String> {
            url.is_empty().then(|| "is empty".into())
        }

        fn connect(url: &str) -> Result<Self, ConnectError<io::Error>> {
            if url.is_empty() {
                return Err(ConnectError::Url("is empty".into()));
            }
            with(url, |row| {
                if row.down {
                    return Err(ConnectError::Driver(io::Error::other("connection refused")));
                }
                row.connects += 1;
                Ok(Self(url.into()))
            })
        }

        /// `take_segment(tag, size)` and `give_back(tag, first, end)`, as the protocol sends
        /// them.
        fn run(
            &mut self,
            statement: &str,
            values: &[Value<'_>],
        ) -> Result<Option<Vec<Owned>>, io::Error> {
            let int = |i: usize| match values.get(i) {
                Some(Value::Int(n)) => *n,
                other => panic!("{statement}: {other:?}"),
            };
            with(&self.0, |row| {
                if statement.contains("take_segment") {
                    row.takes += 1;
                    if row.unknown {
                        return Err(io::Error::new(io::ErrorKind::NotFound, "no such tag"));
                    }
                    if core::mem::take(&mut row.break_next) {
                        return Err(io::Error::from(io::ErrorKind::BrokenPipe));
                    }
                    let size = int(1).max(1);
                    let first = row.next;
                    row.next += size;
                    let cells = [first, size, 1].map(|n| Owned::Int(n.cast_signed()));
                    return Ok(Some(cells.to_vec()));
                }
                assert!(statement.contains("give_back"), "{statement}");
                let (first, end) = (int(1), int(2));
                row.given_back.push((first, end));
                if row.next == end {
                    row.next = first;
                }
                Ok(Some([Owned::Bool(true)].to_vec()))
            })
        }

        fn describe(e: &io::Error) -> String {
            e.to_string()
        }

        fn message(_: &io::Error) -> Option<String> {
            None
        }

        fn code(e: &io::Error) -> Option<String> {
            (e.kind() == io::ErrorKind::NotFound).then(|| UNKNOWN_TAG.into())
        }

        fn broken(e: &io::Error) -> bool {
            e.kind() == io::ErrorKind::BrokenPipe
        }

        fn is_closed(&self) -> bool {
            false
        }

        fn close(self) {}
    }

    impl SegmentClient for Fake {
        type Statements = SegmentProtocol;

        fn statements(schema: &str) -> Result<SegmentProtocol, String> {
            SegmentProtocol::new(Dialect::Postgres, schema, Self::PLACEHOLDERS, 1)
                .map_err(|e| e.to_string())
        }

        fn protocol(protocol: &SegmentProtocol, servers: usize) -> Option<SegmentProtocol> {
            Some(protocol.over(servers))
        }

        fn create_tag(
            &mut self,
            _: &SegmentProtocol,
            _: Dialect,
            _: &str,
        ) -> Result<(), io::Error> {
            with(&self.0, |row| row.unknown = false);
            Ok(())
        }
    }

    #[test]
    fn create_tag_checks_its_arguments_then_creates_on_one_connection() {
        let url = "fake://create";
        with(url, |row| row.unknown = true);
        let e = create_tag::<Fake>(url, "", "seg").unwrap_err();
        assert!(
            matches!(
                e,
                SegmentError::InvalidArgument {
                    argument: "tag",
                    ..
                }
            ),
            "{e}"
        );
        let e = create_tag::<Fake>(url, "t", "no schema").unwrap_err();
        assert!(
            matches!(
                e,
                SegmentError::InvalidArgument {
                    argument: "schema",
                    ..
                }
            ),
            "{e}"
        );
        let e = create_tag::<Fake>("", "t", "seg").unwrap_err();
        assert!(
            matches!(
                e,
                SegmentError::InvalidArgument {
                    argument: "url",
                    ..
                }
            ),
            "{e}"
        );
        with(url, |row| {
            assert_eq!(row.connects, 0, "no connection for a refused argument");
        });
        create_tag::<Fake>(url, "t", "seg").unwrap();
        with(url, |row| {
            assert_eq!((row.connects, row.unknown), (1, false));
        });
        with("fake://create-down", |row| row.down = true);
        let e = create_tag::<Fake>("fake://create-down", "t", "seg").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable, "{e}");
    }

    #[test]
    fn create_tag_of_any_url_refuses_one_that_names_no_database() {
        let e = crate::segment::create_tag("postgresql+psycopg://h/d", "t", "seg").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("not a database URL"), "{e}");
    }

    fn policy() -> SizePolicy {
        SizePolicy::new().bounds(10, 10)
    }

    #[test]
    fn one_statement_a_fetch_dense_ids_and_the_rest_given_back() {
        let url = "fake://dense";
        let ids = Driver::<Fake>::connect(&[url], "t", "seg", policy()).unwrap();
        let mut got = Vec::new();
        for _ in 0..95 {
            got.push(ids.next_id().unwrap());
        }
        assert_eq!(got, (0..95).collect::<Vec<_>>());
        assert_eq!(ids.close(), 0);
        // After close: no prefetch is in flight any more.
        let fetches = ids.stats().fetches;
        with(url, |row| {
            assert_eq!(row.takes, fetches, "one statement per fetch");
            assert_eq!(row.connects, 1);
            assert_eq!(row.given_back.len(), 1);
            assert_eq!(row.given_back[0].0, 95);
        });
        assert_eq!(ids.next_id().unwrap_err().kind(), ErrorKind::Closed);
        // A restart continues at the number given back.
        let again = Driver::<Fake>::connect(&[url], "t", "seg", policy()).unwrap();
        assert_eq!(again.next_id().unwrap(), 95);
        again.close();
    }

    #[test]
    fn a_lost_connection_is_reopened_at_the_next_fetch() {
        let url = "fake://broken";
        let ids = Driver::<Fake>::connect(&[url], "t", "seg", policy()).unwrap();
        with(url, |row| row.break_next = true);
        let mut out = [0; 40];
        ids.next_ids(&mut out).unwrap();
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(with(url, |row| row.connects), 2);
        ids.close();
    }

    #[test]
    fn servers_are_taken_from_in_turn_and_one_that_is_down_is_passed_over() {
        let urls = ["fake://turn-a", "fake://turn-b", "fake://turn-c"];
        with(urls[1], |row| row.next = 1_000_000);
        with(urls[2], |row| row.down = true);
        let ids = Driver::<Fake>::connect(&urls, "t", "seg", policy()).unwrap();
        let mut out = [0; 100];
        ids.next_ids(&mut out).unwrap();
        ids.close();
        let takes = urls.map(|url| with(url, |row| row.takes));
        assert!(takes[0] >= 4 && takes[1] >= 4, "{takes:?}");
        assert!(takes[0].abs_diff(takes[1]) <= 1, "in turn: {takes:?}");
        assert_eq!(takes[2], 0, "a server down takes nothing");
        assert!(out.iter().any(|&id| id < 1_000_000) && out.iter().any(|&id| id >= 1_000_000));
        // The rest went back to the server of the last segment, and to that one only.
        let given = urls.map(|url| with(url, |row| row.given_back.len()));
        assert_eq!(given[0] + given[1], 1, "{given:?}");
        // No server at all: the last one's error.
        with("fake://turn-d", |row| row.down = true);
        let e = Driver::<Fake>::connect(&[urls[2], "fake://turn-d"], "t", "seg", policy());
        assert_eq!(e.unwrap_err().kind(), ErrorKind::DatabaseUnreachable);
        let e = Driver::<Fake>::connect::<&str>(&[], "t", "seg", policy()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn errors_of_every_database_alike() {
        let e = Driver::<Fake>::connect(&[""], "t", "seg", policy()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = Driver::<Fake>::connect(&["fake://x"], "", "seg", policy()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = Driver::<Fake>::connect(&["fake://x"], "t", "no such", policy()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        with("fake://down", |row| row.down = true);
        let e = Driver::<Fake>::connect(&["fake://down"], "t", "seg", policy()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable);
        assert!(e.to_string().contains("connection refused"), "{e}");
        with("fake://unknown", |row| row.unknown = true);
        let e = Driver::<Fake>::connect(&["fake://unknown"], "t", "seg", policy()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownTag);
        assert!(e.to_string().contains("create_tag"), "{e}");
    }
}

/// Dense IDs and serials dropped without `close` give their unused rest back, as `close` does
/// (issue 59): successive short processes (each a scope here) hand out consecutive numbers,
/// where each skipped the rest of its segment (1, 11, 21, ...). A close before the drop gives
/// back once. On SQLite files (`sqlite` in the names: scripts/test.sh runs these with the
/// `sqlite` feature).
#[cfg(all(test, feature = "sqlite", feature = "serial"))]
mod sqlite_drop_tests {
    use std::format;
    use std::path::PathBuf;
    use std::string::{String, ToString};
    use std::vec::Vec;

    use crate::segment::SizePolicy;
    use crate::segment::sqlite::{DenseIds, create_tag};
    use crate::serial::sqlite::{Serials, create_serial};

    const FORMAT: &str = "S-{yyyy}-{seq:6}";

    fn file(name: &str) -> (String, PathBuf) {
        let path =
            std::env::temp_dir().join(format!("shardid-drop-{name}-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        (format!("sqlite:///{}", path.display()), path)
    }

    #[test]
    fn sqlite_dense_ids_dropped_without_close_hand_out_consecutive_numbers() {
        let (url, path) = file("dense");
        create_tag(&url, "d", "main", 1).unwrap();
        let policy = SizePolicy::new().bounds(10, 10);
        let mut got = Vec::new();
        for _ in 0..5 {
            let ids = DenseIds::connect(&url, "d", "main", policy).unwrap();
            got.push(ids.next_id().unwrap());
        }
        let ids = DenseIds::connect(&url, "d", "main", policy).unwrap();
        got.push(ids.next_id().unwrap());
        assert_eq!(ids.close(), 0);
        assert_eq!(ids.close(), 0, "a second close gives nothing back again");
        drop(ids);
        let ids = DenseIds::connect(&url, "d", "main", policy).unwrap();
        got.push(ids.next_id().unwrap());
        drop(ids);
        assert_eq!(got, (1..=7).collect::<Vec<u64>>());
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn sqlite_serials_dropped_without_close_hand_out_consecutive_numbers() {
        let (url, path) = file("serials");
        create_serial(&url, "s", FORMAT, "UTC", "main", 1).unwrap();
        let policy = SizePolicy::new().bounds(10, 10);
        let mut got: Vec<String> = Vec::new();
        for _ in 0..5 {
            let serials = Serials::connect(&url, "s", FORMAT, "UTC", "main", policy).unwrap();
            got.push(serials.next_serial().unwrap().to_string());
        }
        let serials = Serials::connect(&url, "s", FORMAT, "UTC", "main", policy).unwrap();
        got.push(serials.next_serial().unwrap().to_string());
        serials.close();
        serials.close();
        drop(serials);
        let serials = Serials::connect(&url, "s", FORMAT, "UTC", "main", policy).unwrap();
        got.push(serials.next_serial().unwrap().to_string());
        drop(serials);
        // The year's serials: only New Year's midnight itself could split them.
        let numbers: Vec<&str> = got.iter().map(|s| &s[s.len() - 6..]).collect();
        assert_eq!(
            numbers,
            [
                "000001", "000002", "000003", "000004", "000005", "000006", "000007"
            ]
        );
        let _ = std::fs::remove_file(path);
    }
}
