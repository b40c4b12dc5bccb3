//! The steps of taking a segment and of giving its unused rest back, for every database, as a
//! value an executor feeds and asks (sans I/O, as [`crate::sql::LeaseProtocol`]): the rotation
//! across ticket servers, each database family's statements and the order it sends them in
//! (PostgreSQL's one function call; the MySQL family's [`MysqlFetch`], with the take the server
//! rolled back whole sent again; SQLite's [`SqliteTake`]), and a serial period's first take
//! (the take; the period's tag unknown; on SQLite the registration read and the period checked
//! against it; the tag made; the take again). Rust's driver, Python's and Node's run it, each
//! only sending what it says and feeding back what came: none of them holds a rule of a take.
//!
//! ```
//! use shardid::segment::protocol::{Command, SegmentProtocol, Step};
//! use shardid::sql::{Cell, Dialect, Placeholders};
//!
//! let mut take = SegmentProtocol::new(Dialect::Postgres, "seg", Placeholders::Numbered, 1).unwrap();
//! take.take("orders", 100);
//! assert_eq!(take.next(), Step::Connect { server: 0 });
//! take.connected(Dialect::Postgres);
//! let Step::Run { server: 0, command: Command::Sql { statement, values } } = take.next() else {
//!     panic!()
//! };
//! assert!(statement.contains("take_segment"));
//! assert_eq!(values.len(), 2);
//! take.answer(Some(&[Cell::Int(1), Cell::Int(100), Cell::Int(1)]));
//! let Step::Segment(segment) = take.next() else { panic!() };
//! assert_eq!((segment.first, segment.count), (1, 100));
//! ```
//!
//! # The conversation
//! One operation at a time ([`SegmentProtocol::take`], [`SegmentProtocol::take_period`],
//! [`SegmentProtocol::give_back`]); then, until it ends, [`SegmentProtocol::next`]:
//! - [`Step::Connect`]: use server `server`'s connection (open it if there is none, or it was
//!   lost) and say its dialect ([`SegmentProtocol::connected`]; the MySQL family's servers name
//!   themselves, MySQL or MariaDB), or feed the failure to connect
//!   ([`SegmentProtocol::failed`]);
//! - [`Step::Run`]: run the [`Command`] on that server's connection and feed its first row
//!   ([`SegmentProtocol::answer`]: `None` for no row; the MySQL family answers a statement
//!   without rows with `(affected rows, last insert ID)`), or the driver's error code
//!   ([`SegmentProtocol::failed`]: a SQLSTATE, or the MySQL family's error number in decimal);
//! - [`Step::Segment`], [`Step::GivenBack`]: the operation's result;
//! - [`Step::Failed`]: the take failed on every server it tried ([`Failure`]).
//!
//! An executor keeps the connections (one per server), says when one is lost, and maps its
//! driver's errors to codes; it never branches on the database, never retries, and sends no SQL
//! of its own. The SQLite executor makes the file's tables on first use as part of opening it
//! (as it sets the busy timeout and WAL), since that is how a SQLite file is opened, not a step
//! of a take.
//!
//! # Another kind of backend
//! A step names what to send as a [`Command`], whose one variant today is a SQL statement with
//! its values; a backend that is not SQL (a key-value store taking a segment with a script and
//! its arguments) adds a variant of its own (`Command::Script { .. }`), a family in
//! [`SegmentProtocol::new`] whose steps produce it, and an executor that runs it. The answers
//! stay the same: a row of cells, or an error code; the rotation and the serial period's first
//! take are the protocol's for it too.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write as _;

use super::Segment;
use crate::ErrorKind;
use crate::sql::mysql::{FetchError, FetchStep, MysqlFetch, MysqlSerials};
use crate::sql::sqlite::{SqliteSegments, SqliteTake, SqliteTakeStep, TakeError, period_fits};
use crate::sql::{Cell, Dialect, MysqlSegments, Placeholders, SqlError, UNKNOWN_TAG, Value};

/// What an executor sends: today a SQL statement and its values (see the module's doc for a
/// backend that is not SQL).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command<'a> {
    /// A statement, with the executor's placeholders, and its values in their order.
    Sql {
        /// The statement.
        statement: &'a str,
        /// Its values.
        values: Vec<Value<'a>>,
    },
}

/// What an executor does next ([`SegmentProtocol::next`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step<'a> {
    /// Use (open if needed) the connection of server `server` (an index of the URLs given) and
    /// answer [`SegmentProtocol::connected`], or [`SegmentProtocol::failed`].
    Connect {
        /// The server.
        server: usize,
    },
    /// Run `command` on server `server`'s connection and answer [`SegmentProtocol::answer`]
    /// or [`SegmentProtocol::failed`].
    Run {
        /// The server.
        server: usize,
        /// What to send.
        command: Command<'a>,
    },
    /// The take's segment: hand it to the allocator.
    Segment(Segment),
    /// The give-back is over: whether the server took the rest back (`false`: a hole, counted
    /// by the allocator).
    GivenBack(bool),
    /// The take failed on every server it tried.
    Failed(Failure),
    /// No operation under way.
    Idle,
}

/// Why a take gave no segment.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The last error the executor fed ([`SegmentProtocol::failed`]): raise it as the driver
    /// raised it (its message is the server's).
    Driver,
    /// The protocol's own refusal of the database's answer.
    Refused {
        /// The kind it is reported as: [`ErrorKind::UnknownTag`] (no such tag, or a serial tag
        /// never registered), [`ErrorKind::InvalidArgument`] (a period that is not one of the
        /// serial tag's), [`ErrorKind::Database`] (a row no shardid DDL makes, an exhausted tag).
        kind: ErrorKind,
        /// The SQLSTATE PostgreSQL's functions raise for the same case ([`UNKNOWN_TAG`],
        /// [`crate::sql::TAG_EXHAUSTED`], `22023`, `XX000`), which the bindings' errors carry as
        /// their code.
        sqlstate: &'static str,
        /// Why, in the core's words (the binding names the tag, in its language's way:
        /// `no segment of tag orders: ...`).
        reason: String,
    },
}

impl Failure {
    /// Whether it says the tag does not exist, which every server would say too.
    const fn unknown_tag(&self) -> bool {
        matches!(
            self,
            Self::Refused {
                kind: ErrorKind::UnknownTag,
                ..
            }
        )
    }
}

/// Each family's statements, rendered once with the executor's placeholders.
#[derive(Clone, Debug)]
enum Statements {
    Postgres {
        take: String,
        give_back: String,
        take_period: String,
    },
    /// MySQL's, then MariaDB's ([`MysqlStatements`]).
    Mysql(Box2<MysqlStatements>),
    Sqlite {
        take: String,
        read: String,
        give_back: String,
        create_tag: String,
        info: String,
    },
}

type Box2<T> = alloc::boxed::Box<[T; 2]>;

#[derive(Clone, Debug)]
struct MysqlStatements {
    read: String,
    take: String,
    give_back: String,
    create_period: String,
}

/// One ticket server's state across takes.
#[derive(Clone, Copy, Debug, Default)]
struct Server {
    /// Its dialect, said at the last [`Step::Connect`].
    dialect: Option<Dialect>,
    /// The tag's stride there, once learnt (the MySQL family's first read).
    stride: Option<u64>,
}

/// What is taken: a tag's segment, or a serial period's.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Of {
    Tag(String),
    Period {
        tag: String,
        period: String,
        period_tag: String,
    },
}

impl Of {
    /// The tag whose row the segment comes from.
    fn segment_tag(&self) -> &str {
        match self {
            Self::Tag(tag)
            | Self::Period {
                period_tag: tag, ..
            } => tag,
        }
    }
}

/// Where a take is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Connect,
    /// PostgreSQL: its one statement sent.
    Postgres,
    Mysql(MysqlFetch),
    Sqlite(SqliteTake),
    /// The MySQL family: the period's tag made by `create_period`.
    MakePeriod,
    /// SQLite: the serial tag's registration read.
    Registration,
    /// SQLite: the period's tag made.
    CreatePeriod,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Idle,
    Take {
        of: Of,
        size: u64,
        /// How many servers were tried before this one.
        tried: usize,
        server: usize,
        at: At,
        /// Whether the period's tag was made (once per take).
        made: bool,
    },
    GiveBack {
        tag: String,
        first: u64,
        end: u64,
        connected: bool,
    },
    Done(Option<Segment>, bool),
    Failed(Failure),
}

/// The take and the give-back of one allocator's segments over its ticket servers (see the
/// module's doc): made once per allocator, one operation at a time.
#[derive(Clone, Debug)]
pub struct SegmentProtocol {
    statements: Statements,
    servers: Vec<Server>,
    /// The server the next take tries first: the one after the last that answered.
    turn: usize,
    /// The server of the last segment taken, which its unused rest goes back to.
    last: usize,
    op: Op,
}

/// The integer of a cell (drivers that return `bigint` as text pass it so).
fn int(cell: Option<&Cell<'_>>) -> Option<i64> {
    match cell? {
        Cell::Int(n) => Some(*n),
        Cell::Text(text) => text.parse().ok(),
        Cell::Bool(b) => Some(i64::from(*b)),
        Cell::Null => None,
    }
}

/// The unsigned integer of a cell (a MySQL reply's last insert ID may pass `i64::MAX`).
fn uint(cell: Option<&Cell<'_>>) -> Option<u64> {
    match cell? {
        Cell::Int(n) => u64::try_from(*n).ok(),
        Cell::Text(text) => text.parse().ok(),
        Cell::Bool(b) => Some(u64::from(*b)),
        Cell::Null => None,
    }
}

/// The three integers of a row.
fn row3(row: &[Cell<'_>]) -> Option<(i64, i64, i64)> {
    Some((int(row.first())?, int(row.get(1))?, int(row.get(2))?))
}

fn rendered(statement: impl core::fmt::Display) -> String {
    let mut text = String::new();
    let _ = write!(text, "{statement}");
    text
}

impl SegmentProtocol {
    /// The protocol of an allocator over `servers` ticket servers (at least 1) of `dialect`'s
    /// family, whose `schema` holds the segments' DDL, for an executor whose driver writes
    /// `placeholders`.
    ///
    /// # Errors
    /// [`SqlError::SchemaName`] for a schema that is not a plain identifier (SQLite: `main`
    /// or an attached database's name).
    pub fn new(
        dialect: Dialect,
        schema: &str,
        placeholders: Placeholders,
        servers: usize,
    ) -> Result<Self, SqlError> {
        let statements = match dialect {
            Dialect::Postgres => {
                let s = crate::sql::Segments::new(schema)?;
                let segments = s.statements(placeholders);
                Statements::Postgres {
                    take: rendered(segments.take()),
                    give_back: rendered(segments.give_back()),
                    take_period: rendered(s.serial_statements(placeholders).take()),
                }
            }
            Dialect::Mysql | Dialect::Mariadb => {
                let ddl = MysqlSegments::new(schema)?;
                let serials = MysqlSerials::new(schema)?.statements(placeholders);
                let of = |dialect| {
                    let s = ddl.dialect(dialect).statements(placeholders);
                    MysqlStatements {
                        read: rendered(s.read()),
                        take: rendered(s.take()),
                        give_back: rendered(s.give_back()),
                        create_period: rendered(serials.create_period()),
                    }
                };
                Statements::Mysql(alloc::boxed::Box::new([
                    of(Dialect::Mysql),
                    of(Dialect::Mariadb),
                ]))
            }
            Dialect::Sqlite => {
                let ddl = SqliteSegments::new(schema)?;
                let s = ddl.statements(placeholders);
                Statements::Sqlite {
                    take: rendered(s.take()),
                    read: rendered(s.read()),
                    give_back: rendered(s.give_back()),
                    create_tag: rendered(s.create_tag()),
                    info: rendered(ddl.serial_statements(placeholders).info()),
                }
            }
        };
        Ok(Self {
            statements,
            servers: alloc::vec![Server::default(); servers.max(1)],
            turn: 0,
            last: 0,
            op: Op::Idle,
        })
    }

    /// The same statements over `servers` ticket servers, nothing learnt yet: what Rust's
    /// blocking driver makes of the protocol each database's statements hold, rendered once.
    #[cfg_attr(
        not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
        allow(dead_code)
    )]
    pub(crate) fn over(&self, servers: usize) -> Self {
        Self {
            statements: self.statements.clone(),
            servers: alloc::vec![Server::default(); servers.max(1)],
            turn: 0,
            last: 0,
            op: Op::Idle,
        }
    }

    /// The next take starts at `server`, and a give-back before any take goes there: the
    /// server a driver found answering when it connected.
    #[cfg(any(
        feature = "postgres",
        feature = "mysql",
        feature = "sqlite",
        feature = "redis"
    ))]
    pub(crate) fn start_at(&mut self, server: usize) {
        let server = server % self.servers.len();
        (self.turn, self.last) = (server, server);
    }

    /// The tag's stride on `server`, once learnt (the MySQL family's first read).
    #[cfg(any(
        feature = "postgres",
        feature = "mysql",
        feature = "sqlite",
        feature = "redis"
    ))]
    pub(crate) fn stride(&self, server: usize) -> Option<u64> {
        self.servers.get(server).and_then(|s| s.stride)
    }

    /// The tag's stride on `server` as a caller learnt it before (`None`: not yet), so that a
    /// take on a connection the caller keeps is one `UPDATE` once the stride is known.
    #[cfg(any(
        feature = "postgres",
        feature = "mysql",
        feature = "sqlite",
        feature = "redis"
    ))]
    pub(crate) fn learnt(&mut self, server: usize, stride: Option<u64>) {
        if let Some(s) = self.servers.get_mut(server) {
            s.stride = stride;
        }
    }

    /// Starts a take of `size` IDs (0: the size the tag's row remembers) of `tag`, from the
    /// server after the last that answered.
    pub fn take(&mut self, tag: &str, size: u64) {
        self.start(Of::Tag(tag.into()), size);
    }

    /// Starts a take of `size` numbers of serial tag `tag`'s `period` (its text, `2026-11-25`,
    /// or `''` for a tag that never resets), whose numbers are the segments of the period's own
    /// tag ([`crate::sql::sqlite::period_tag`]), made at the period's first take.
    pub fn take_period(&mut self, tag: &str, period: &str, size: u64) {
        let period_tag = rendered(crate::sql::sqlite::period_tag(tag, period));
        self.start(
            Of::Period {
                tag: tag.into(),
                period: period.into(),
                period_tag,
            },
            size,
        );
    }

    fn start(&mut self, of: Of, size: u64) {
        self.op = Op::Take {
            of,
            size,
            tried: 0,
            server: self.turn % self.servers.len(),
            at: At::Connect,
            made: false,
        };
    }

    /// Starts giving `first..end` of `tag` (a serial period's tag for a period's rest) back to
    /// the server of the last segment taken.
    pub fn give_back(&mut self, tag: &str, first: u64, end: u64) {
        self.op = Op::GiveBack {
            tag: tag.into(),
            first,
            end,
            connected: false,
        };
    }

    /// What to do now.
    pub fn next(&self) -> Step<'_> {
        match &self.op {
            Op::Idle => Step::Idle,
            Op::Done(Some(segment), _) => Step::Segment(*segment),
            Op::Done(None, returned) => Step::GivenBack(*returned),
            Op::Failed(failure) => Step::Failed(failure.clone()),
            Op::GiveBack {
                tag,
                first,
                end,
                connected,
            } => {
                let server = self.last;
                if !connected {
                    return Step::Connect { server };
                }
                let (first, end) = (Value::Int(*first), Value::Int(*end));
                let tag = Value::Text(tag);
                let (statement, values) = match &self.statements {
                    Statements::Postgres { give_back, .. } => {
                        (give_back.as_str(), alloc::vec![tag, first, end])
                    }
                    Statements::Mysql(s) => (
                        self.mysql(s, server).give_back.as_str(),
                        alloc::vec![first, tag, end, first, first],
                    ),
                    Statements::Sqlite { give_back, .. } => {
                        (give_back.as_str(), alloc::vec![first, end, tag])
                    }
                };
                Step::Run {
                    server,
                    command: Command::Sql { statement, values },
                }
            }
            Op::Take {
                of,
                size,
                server,
                at,
                ..
            } => match self.take_command(of, *size, *server, *at) {
                Some(command) => Step::Run {
                    server: *server,
                    command,
                },
                None => Step::Connect { server: *server },
            },
        }
    }

    /// The statement a take sends at `at` (`None`: connect first).
    fn take_command<'s>(
        &'s self,
        of: &'s Of,
        size: u64,
        server: usize,
        at: At,
    ) -> Option<Command<'s>> {
        let tag = Value::Text(of.segment_tag());
        let n = Value::Int(size);
        let (statement, values) = match (at, &self.statements, of) {
            (At::Connect, ..) => return None,
            (At::Postgres, Statements::Postgres { take, .. }, Of::Tag(_)) => {
                (take.as_str(), alloc::vec![tag, n])
            }
            (
                At::Postgres,
                Statements::Postgres { take_period, .. },
                Of::Period { tag, period, .. },
            ) => (
                take_period.as_str(),
                alloc::vec![Value::Text(tag), Value::Text(period), n],
            ),
            (At::Mysql(fetch), Statements::Mysql(s), _) => {
                let s = self.mysql(s, server);
                match fetch.step() {
                    FetchStep::Read => (s.read.as_str(), alloc::vec![tag]),
                    FetchStep::Take { size } => {
                        let n = Value::Int(size);
                        (s.take.as_str(), alloc::vec![n, n, n, tag, n, n])
                    }
                }
            }
            (
                At::MakePeriod,
                Statements::Mysql(s),
                Of::Period {
                    tag, period_tag, ..
                },
            ) => (
                self.mysql(s, server).create_period.as_str(),
                alloc::vec![Value::Text(tag), Value::Text(period_tag)],
            ),
            (At::Sqlite(steps), Statements::Sqlite { take, read, .. }, _) => match steps.step() {
                SqliteTakeStep::Read => (read.as_str(), alloc::vec![tag]),
                _ => (take.as_str(), alloc::vec![n, tag]),
            },
            (At::Registration, Statements::Sqlite { info, .. }, Of::Period { tag, .. }) => {
                (info.as_str(), alloc::vec![Value::Text(tag)])
            }
            (At::CreatePeriod, Statements::Sqlite { create_tag, .. }, _) => {
                (create_tag.as_str(), alloc::vec![tag, Value::Int(1)])
            }
            _ => unreachable!("each family's steps are its own, a period's its own"),
        };
        Some(Command::Sql { statement, values })
    }
    /// The MySQL family's statements for `server`'s dialect.
    fn mysql<'s>(&self, s: &'s [MysqlStatements; 2], server: usize) -> &'s MysqlStatements {
        &s[usize::from(self.servers[server].dialect == Some(Dialect::Mariadb))]
    }

    /// The connection of [`Step::Connect`]'s server is there, and its server is of `dialect`.
    pub fn connected(&mut self, dialect: Dialect) {
        match &mut self.op {
            Op::Take {
                server, at, size, ..
            } if *at == At::Connect => {
                let state = &mut self.servers[*server];
                state.dialect = Some(dialect);
                *at = match self.statements {
                    Statements::Postgres { .. } => At::Postgres,
                    Statements::Mysql(_) => At::Mysql(MysqlFetch::new(*size, state.stride)),
                    Statements::Sqlite { .. } => At::Sqlite(SqliteTake::new(*size)),
                };
            }
            Op::GiveBack { connected, .. } => {
                self.servers[self.last].dialect = Some(dialect);
                *connected = true;
            }
            _ => {}
        }
    }

    /// The last step failed: the connection could not be opened, or the statement failed with
    /// the driver's error `code` (a SQLSTATE; the MySQL family's error number in decimal;
    /// `None` for none). A take the MySQL family rolled back whole is sent again (at most
    /// [`crate::sql::mysql::ROLLED_BACK_RETRIES`] times); an unknown tag ends the take (every
    /// server would say so); anything else passes to the next server, and after the last
    /// one the take fails with it ([`Failure::Driver`]). A give-back that failed gave nothing
    /// back.
    pub fn failed(&mut self, code: Option<&str>) {
        match &mut self.op {
            Op::Take { at, .. } => {
                if let (At::Mysql(fetch), Some(number)) =
                    (at, code.and_then(|c| c.parse::<u16>().ok()))
                    && fetch.rolled_back(number)
                {
                    return; // the same step again
                }
                let unknown = code == Some(UNKNOWN_TAG);
                self.next_server(Failure::Driver, unknown);
            }
            Op::GiveBack { .. } => self.op = Op::Done(None, false),
            _ => {}
        }
    }

    /// The current server failed with `failure`: the next one, or the end of the take.
    fn next_server(&mut self, failure: Failure, stop: bool) {
        let n = self.servers.len();
        let Op::Take {
            tried,
            server,
            at,
            made,
            ..
        } = &mut self.op
        else {
            return;
        };
        *tried += 1;
        if stop || *tried >= n {
            self.op = Op::Failed(failure);
            return;
        }
        *server = (self.turn + *tried) % n;
        *at = At::Connect;
        *made = false;
    }

    /// The first row of [`Step::Run`]'s command (`None`: no row; the MySQL family's statements
    /// without rows: `(affected rows, last insert ID)`).
    pub fn answer(&mut self, row: Option<&[Cell<'_>]>) {
        let result = match &mut self.op {
            Op::GiveBack { connected, .. } if *connected => {
                let returned = match (&self.statements, row) {
                    (Statements::Postgres { .. }, Some(row)) => {
                        matches!(row.first(), Some(Cell::Bool(true))) || int(row.first()) == Some(1)
                    }
                    (Statements::Mysql(_), Some(row)) => int(row.first()) == Some(1),
                    (Statements::Sqlite { .. }, row) => row.is_some(),
                    (_, None) => false,
                };
                self.op = Op::Done(None, returned);
                return;
            }
            Op::Take {
                of,
                size,
                server,
                at,
                made,
                ..
            } => {
                let stride = &mut self.servers[*server].stride;
                match answer_take(of, *size, at, made, stride, row) {
                    Some(result) => result,
                    None => return, // the next step
                }
            }
            _ => return,
        };
        match result {
            Ok(segment) => {
                if let Op::Take { server, .. } = self.op {
                    self.last = server;
                    self.turn = (server + 1) % self.servers.len();
                }
                self.op = Op::Done(Some(segment), false);
            }
            Err(failure) => {
                let unknown = failure.unknown_tag();
                self.next_server(failure, unknown);
            }
        }
    }
}

/// A take's step at `at` answered with `row`: the segment, the failure, or `None` for the next
/// step (`at` moved on).
fn answer_take(
    of: &Of,
    size: u64,
    at: &mut At,
    made: &mut bool,
    stride: &mut Option<u64>,
    row: Option<&[Cell<'_>]>,
) -> Option<Result<Segment, Failure>> {
    let period = matches!(of, Of::Period { .. }) && !*made;
    let refused =
        |e: &dyn core::fmt::Display, sqlstate| refusal(kind_of(sqlstate), sqlstate, &e.to_string());
    Some(match at {
        At::Connect => return None,
        At::Postgres => match row.and_then(row3) {
            Some((first, count, stride)) => Ok(Segment {
                first: first.unsigned_abs(),
                count: count.unsigned_abs(),
                stride: stride.unsigned_abs(),
            }),
            None => Err(refusal(
                ErrorKind::Database,
                "XX000",
                "the database's answer is not (first, count, stride)",
            )),
        },
        At::Mysql(fetch) => match answer_mysql(fetch, stride, row) {
            Ok(None) => return None,
            Ok(Some(segment)) => Ok(segment),
            Err(FetchError::UnknownTag) if period => {
                *at = At::MakePeriod;
                return None;
            }
            Err(e) => Err(refused(&e, e.sqlstate())),
        },
        At::Sqlite(steps) => {
            let answered = row
                .map(|row| row3(row).ok_or(TakeError::Unusable))
                .transpose()
                .and_then(|row| steps.answer(row));
            match answered {
                Ok(None) => return None,
                Ok(Some(segment)) => Ok(segment),
                Err(TakeError::UnknownTag) if period => {
                    *at = At::Registration;
                    return None;
                }
                Err(e) => Err(refused(&e, e.sqlstate())),
            }
        }
        // NULL (or nothing): the serial tag is not registered.
        At::MakePeriod if row.and_then(<[_]>::first).is_none_or(|c| *c == Cell::Null) => {
            Err(not_registered())
        }
        At::MakePeriod => {
            *made = true;
            *at = At::Mysql(MysqlFetch::new(size, *stride));
            return None;
        }
        At::Registration => {
            let Of::Period { period, .. } = of else {
                unreachable!("only a period's take reads its registration")
            };
            let reset = match row.map(|row| row.get(3)) {
                None => return Some(Err(not_registered())),
                Some(Some(Cell::Text(reset))) => *reset,
                Some(_) => "?",
            };
            if !period_fits(reset, period) {
                return Some(Err(Failure::Refused {
                    kind: ErrorKind::InvalidArgument,
                    sqlstate: "22023",
                    reason: alloc::format!(
                        "{period:?} is not a period of a tag that resets every {reset}"
                    ),
                }));
            }
            *at = At::CreatePeriod;
            return None;
        }
        At::CreatePeriod => {
            // Made now, or by another client since: taken all the same, once.
            *made = true;
            *at = At::Sqlite(SqliteTake::new(size));
            return None;
        }
    })
}

/// The MySQL family's answer to [`MysqlFetch`]'s step; the stride it learnt is kept in `stride`.
fn answer_mysql(
    fetch: &mut MysqlFetch,
    stride: &mut Option<u64>,
    row: Option<&[Cell<'_>]>,
) -> Result<Option<Segment>, FetchError> {
    match fetch.step() {
        FetchStep::Read => {
            let cell = |i| row.and_then(|row| int(row.get(i))).unwrap_or(-1);
            fetch.read(row.map(|_| (cell(0), cell(1), cell(2))))?;
            *stride = fetch.stride();
            Ok(None)
        }
        FetchStep::Take { .. } => {
            let rows = row.and_then(|row| uint(row.first())).unwrap_or(0);
            let first = row.and_then(|row| uint(row.get(1))).unwrap_or(0);
            fetch.took(rows, first)
        }
    }
}

/// The kind of a refusal by its SQLSTATE.
fn kind_of(sqlstate: &str) -> ErrorKind {
    match sqlstate {
        UNKNOWN_TAG => ErrorKind::UnknownTag,
        "22023" => ErrorKind::InvalidArgument,
        _ => ErrorKind::Database,
    }
}

fn refusal(kind: ErrorKind, sqlstate: &'static str, why: &str) -> Failure {
    Failure::Refused {
        kind,
        sqlstate,
        reason: why.into(),
    }
}

/// A serial period's take whose serial tag is not registered.
fn not_registered() -> Failure {
    Failure::Refused {
        kind: ErrorKind::UnknownTag,
        sqlstate: UNKNOWN_TAG,
        reason: "UNKNOWN_TAG: the serial tag is not registered: create_serial first".into(),
    }
}

/// The protocol scripted without a database, as the lease's tests do: each test plays the
/// executor, answering each step as a server would.
#[cfg(test)]
mod tests {

    use super::*;
    use crate::sql::mysql::ROLLED_BACK_RETRIES;

    const SEGMENT: [Cell<'static>; 3] = [Cell::Int(1), Cell::Int(100), Cell::Int(1)];

    fn protocol(dialect: Dialect, servers: usize) -> SegmentProtocol {
        let schema = if dialect == Dialect::Sqlite {
            "main"
        } else {
            "seg"
        };
        SegmentProtocol::new(dialect, schema, Placeholders::Question, servers).unwrap()
    }

    /// The statement and values of a [`Step::Run`] on `server`.
    fn run(p: &SegmentProtocol, server: usize) -> (String, Vec<Value<'_>>) {
        match p.next() {
            Step::Run {
                server: s,
                command: Command::Sql { statement, values },
            } if s == server => (statement.into(), values),
            other => panic!("expected a statement on server {server}, got {other:?}"),
        }
    }

    fn connect(p: &mut SegmentProtocol, server: usize, dialect: Dialect) {
        assert_eq!(p.next(), Step::Connect { server });
        p.connected(dialect);
    }

    #[test]
    fn servers_in_turn_one_down_or_failing_passed_over_and_the_rest_given_to_the_last() {
        let mut p = protocol(Dialect::Postgres, 3);
        p.take("t", 10);
        // Server 0 cannot be reached, server 1 fails the statement, server 2 answers.
        assert_eq!(p.next(), Step::Connect { server: 0 });
        p.failed(None);
        connect(&mut p, 1, Dialect::Postgres);
        let (sql, values) = run(&p, 1);
        assert!(sql.contains("seg.take_segment"), "{sql}");
        assert_eq!(values, [Value::Text("t"), Value::Int(10)]);
        p.failed(Some("57P01"));
        connect(&mut p, 2, Dialect::Postgres);
        run(&p, 2);
        p.answer(Some(&SEGMENT));
        assert_eq!(
            p.next(),
            Step::Segment(Segment {
                first: 1,
                count: 100,
                stride: 1
            })
        );
        // The next take starts after the server that answered; its rest goes back there.
        p.take("t", 10);
        connect(&mut p, 0, Dialect::Postgres);
        run(&p, 0);
        p.answer(Some(&[
            Cell::Text("101"),
            Cell::Text("10"),
            Cell::Text("3"),
        ]));
        assert_eq!(
            p.next(),
            Step::Segment(Segment {
                first: 101,
                count: 10,
                stride: 3
            })
        );
        p.give_back("t", 104, 131);
        connect(&mut p, 0, Dialect::Postgres);
        let (sql, values) = run(&p, 0);
        assert!(sql.contains("seg.give_back"), "{sql}");
        assert_eq!(values, [Value::Text("t"), Value::Int(104), Value::Int(131)]);
        p.answer(Some(&[Cell::Bool(true)]));
        assert_eq!(p.next(), Step::GivenBack(true));
        // Every server failing: the last failure.
        p.take("t", 10);
        for server in [1, 2, 0] {
            assert_eq!(p.next(), Step::Connect { server });
            p.failed(None);
        }
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        // A give-back that fails gave nothing back.
        p.give_back("t", 104, 131);
        assert_eq!(p.next(), Step::Connect { server: 0 });
        p.failed(None);
        assert_eq!(p.next(), Step::GivenBack(false));
    }

    #[test]
    fn an_unknown_tag_ends_the_round_every_server_would_say_so() {
        let mut p = protocol(Dialect::Postgres, 3);
        p.take("t", 10);
        connect(&mut p, 0, Dialect::Postgres);
        run(&p, 0);
        p.failed(Some(UNKNOWN_TAG));
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        // On the MySQL family and SQLite, the read says so.
        for dialect in [Dialect::Mysql, Dialect::Sqlite] {
            let mut p = protocol(dialect, 2);
            p.take("t", 10);
            connect(&mut p, 0, dialect);
            if dialect == Dialect::Sqlite {
                run(&p, 0);
                p.answer(None); // the take: no row
            }
            let (sql, _) = run(&p, 0);
            assert!(sql.starts_with("SELECT"), "the read: {sql}");
            p.answer(None);
            let Step::Failed(Failure::Refused { kind, sqlstate, .. }) = p.next() else {
                panic!("{dialect:?}: {:?}", p.next())
            };
            assert_eq!((kind, sqlstate), (ErrorKind::UnknownTag, UNKNOWN_TAG));
        }
    }

    #[test]
    fn mysql_a_take_rolled_back_whole_is_sent_again_and_nothing_else_is() {
        let mut p = protocol(Dialect::Mariadb, 2);
        p.take("t", 10);
        connect(&mut p, 0, Dialect::Mariadb);
        let (read, values) = run(&p, 0);
        assert_eq!(values, [Value::Text("t")]);
        p.answer(Some(&[Cell::Int(0), Cell::Int(2), Cell::Int(1000)]));
        let (take, values) = run(&p, 0);
        assert_ne!(take, read);
        let mariadb = MysqlSegments::new("seg").unwrap().dialect(Dialect::Mariadb);
        assert_eq!(
            take,
            rendered(mariadb.statements(Placeholders::Question).take())
        );
        let n = Value::Int(10);
        assert_eq!(values, [n, n, n, Value::Text("t"), n, n]);
        for code in ["1213", "1205"]
            .iter()
            .cycle()
            .take(usize::from(ROLLED_BACK_RETRIES))
        {
            p.failed(Some(code));
            assert_eq!(run(&p, 0).0, take, "sent again after {code}");
        }
        // Past the bound, or any other error: the next server.
        p.failed(Some("1213"));
        connect(&mut p, 1, Dialect::Mysql);
        let (read1, _) = run(&p, 1);
        assert_ne!(read1, read, "MySQL's statements on the MySQL server");
        p.answer(Some(&[Cell::Int(0), Cell::Int(2), Cell::Int(1000)]));
        run(&p, 1);
        p.failed(Some("1062"));
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        // The stride learnt is kept: the next fetch from a server is its one UPDATE.
        p.take("t", 10);
        connect(&mut p, 0, Dialect::Mariadb);
        assert_eq!(run(&p, 0).0, take, "one round trip a fetch");
        p.answer(Some(&[Cell::Int(1), Cell::Text("11")]));
        assert_eq!(
            p.next(),
            Step::Segment(Segment {
                first: 11,
                count: 10,
                stride: 2
            })
        );
        // Its rest goes back to it, in MariaDB's statement; one row changed: taken back.
        p.give_back("t", 15, 31);
        connect(&mut p, 0, Dialect::Mariadb);
        let (sql, values) = run(&p, 0);
        assert!(sql.starts_with("UPDATE"), "{sql}");
        let (first, end) = (Value::Int(15), Value::Int(31));
        assert_eq!(values, [first, Value::Text("t"), end, first, first]);
        p.answer(Some(&[Cell::Int(1), Cell::Int(0)]));
        assert_eq!(p.next(), Step::GivenBack(true));
        p.give_back("t", 15, 31);
        connect(&mut p, 0, Dialect::Mariadb);
        run(&p, 0);
        p.answer(Some(&[Cell::Int(0), Cell::Int(0)]));
        assert_eq!(p.next(), Step::GivenBack(false));
    }

    #[test]
    fn postgres_a_serial_periods_take_is_one_statement_its_function_makes_the_tag() {
        let mut p = protocol(Dialect::Postgres, 1);
        p.take_period("inv", "2026-11-25", 50);
        connect(&mut p, 0, Dialect::Postgres);
        let (sql, values) = run(&p, 0);
        assert!(sql.contains("take_serial_segment"), "{sql}");
        let period = Value::Text("2026-11-25");
        assert_eq!(values, [Value::Text("inv"), period, Value::Int(50)]);
        p.answer(Some(&SEGMENT));
        assert!(matches!(p.next(), Step::Segment(_)));
    }

    #[test]
    fn mysql_a_serial_periods_first_take_makes_its_tag_then_takes_again() {
        // The read finds no period tag; create_period; the read; the take.
        let mut p = protocol(Dialect::Mysql, 1);
        p.take_period("inv", "2026-11-25", 50);
        connect(&mut p, 0, Dialect::Mysql);
        let (_, values) = run(&p, 0);
        assert_eq!(values, [Value::Text("inv@2026-11-25")]);
        p.answer(None);
        let (sql, values) = run(&p, 0);
        assert!(sql.contains("create_tag"), "{sql}");
        assert_eq!(values, [Value::Text("inv"), Value::Text("inv@2026-11-25")]);
        p.answer(Some(&[Cell::Int(1)]));
        let (_, values) = run(&p, 0);
        assert_eq!(values, [Value::Text("inv@2026-11-25")], "read again");
        p.answer(Some(&[Cell::Int(0), Cell::Int(1), Cell::Int(1000)]));
        run(&p, 0);
        p.answer(Some(&[Cell::Int(1), Cell::Int(1)]));
        assert!(matches!(
            p.next(),
            Step::Segment(Segment {
                first: 1,
                count: 50,
                ..
            })
        ));
        // A serial tag never registered: create_period's NULL.
        let mut p = protocol(Dialect::Mysql, 1);
        p.take_period("nope", "2026", 50);
        connect(&mut p, 0, Dialect::Mysql);
        run(&p, 0);
        p.answer(None);
        run(&p, 0);
        p.answer(Some(&[Cell::Null]));
        let Step::Failed(Failure::Refused { kind, reason, .. }) = p.next() else {
            panic!("{:?}", p.next())
        };
        assert_eq!(kind, ErrorKind::UnknownTag);
        assert!(reason.contains("serial tag is not registered"), "{reason}");
        // Made, yet unknown again (dropped in between): no second making, no loop.
        let mut p = protocol(Dialect::Mysql, 1);
        p.take_period("inv", "2026-11-26", 50);
        connect(&mut p, 0, Dialect::Mysql);
        run(&p, 0);
        p.answer(None);
        run(&p, 0);
        p.answer(Some(&[Cell::Int(1)]));
        run(&p, 0);
        p.answer(None);
        let Step::Failed(Failure::Refused { kind, .. }) = p.next() else {
            panic!("{:?}", p.next())
        };
        assert_eq!(kind, ErrorKind::UnknownTag);
    }

    #[test]
    fn sqlite_a_serial_periods_first_take_reads_the_registration_makes_its_tag_takes_again() {
        // The take, the read (no tag), the registration, the tag made, the take.
        let mut p = protocol(Dialect::Sqlite, 1);
        p.take_period("inv", "2026-11-25", 50);
        connect(&mut p, 0, Dialect::Sqlite);
        let (take, values) = run(&p, 0);
        assert_eq!(values, [Value::Int(50), Value::Text("inv@2026-11-25")]);
        p.answer(None);
        run(&p, 0);
        p.answer(None);
        let (sql, values) = run(&p, 0);
        assert!(sql.contains("shardid_serials"), "{sql}");
        assert_eq!(values, [Value::Text("inv")]);
        let registration = [
            Cell::Text("INV-{yyyy}{MM}{dd}-{seq:4:day}"),
            Cell::Text("UTC"),
            Cell::Int(1),
            Cell::Text("day"),
        ];
        p.answer(Some(&registration));
        let (sql, values) = run(&p, 0);
        assert!(sql.starts_with("INSERT INTO main.shardid_tags"), "{sql}");
        assert_eq!(values, [Value::Text("inv@2026-11-25"), Value::Int(1)]);
        p.answer(None); // another client made it first: taken all the same
        assert_eq!(run(&p, 0).0, take);
        p.answer(Some(&SEGMENT));
        assert!(matches!(p.next(), Step::Segment(_)));
        // A period that is not one of the tag's.
        p.take_period("inv", "2026-11", 50);
        connect(&mut p, 0, Dialect::Sqlite);
        run(&p, 0);
        p.answer(None);
        run(&p, 0);
        p.answer(None);
        run(&p, 0);
        p.answer(Some(&registration));
        let Step::Failed(Failure::Refused { kind, reason, .. }) = p.next() else {
            panic!("{:?}", p.next())
        };
        assert_eq!(kind, ErrorKind::InvalidArgument);
        assert!(reason.contains("resets every day"), "{reason}");
        // A serial tag never registered.
        p.take_period("nope", "2026-11-25", 50);
        connect(&mut p, 0, Dialect::Sqlite);
        run(&p, 0);
        p.answer(None);
        run(&p, 0);
        p.answer(None);
        run(&p, 0);
        p.answer(None);
        let Step::Failed(Failure::Refused { kind, .. }) = p.next() else {
            panic!("{:?}", p.next())
        };
        assert_eq!(kind, ErrorKind::UnknownTag);
        // Its rest goes back by SQLite's statement: a row, taken back.
        p.give_back("inv@2026-11-25", 20, 51);
        connect(&mut p, 0, Dialect::Sqlite);
        let (_, values) = run(&p, 0);
        let tag = Value::Text("inv@2026-11-25");
        assert_eq!(values, [Value::Int(20), Value::Int(51), tag]);
        p.answer(Some(&[Cell::Int(20)]));
        assert_eq!(p.next(), Step::GivenBack(true));
    }

    #[test]
    fn sqlite_an_exhausted_tag_is_the_databases_refusal_with_its_sqlstate() {
        let mut p = protocol(Dialect::Sqlite, 1);
        p.take("big", 10);
        connect(&mut p, 0, Dialect::Sqlite);
        run(&p, 0);
        p.answer(None);
        run(&p, 0);
        p.answer(Some(&[Cell::Int(i64::MAX - 2), Cell::Int(0), Cell::Int(1)]));
        let Step::Failed(Failure::Refused {
            kind,
            sqlstate,
            reason,
        }) = p.next()
        else {
            panic!("{:?}", p.next())
        };
        assert_eq!(
            (kind, sqlstate),
            (ErrorKind::Database, crate::sql::TAG_EXHAUSTED)
        );
        assert!(reason.contains("TAG_EXHAUSTED"), "{reason}");
        assert_eq!(p.next(), p.next(), "asked again, the same answer");
    }

    #[test]
    fn bad_schemas_are_refused_and_an_idle_protocol_says_so() {
        for dialect in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
            assert!(SegmentProtocol::new(dialect, "no such", Placeholders::Question, 1).is_err());
        }
        let mut p = protocol(Dialect::Postgres, 1);
        assert_eq!(p.next(), Step::Idle);
        p.answer(None);
        p.failed(None);
        p.connected(Dialect::Postgres);
        assert_eq!(p.next(), Step::Idle);
        let p = SegmentProtocol::new(Dialect::Postgres, "seg", Placeholders::Numbered, 0).unwrap();
        assert_eq!(p.servers.len(), 1, "no server is one server");
    }
}
