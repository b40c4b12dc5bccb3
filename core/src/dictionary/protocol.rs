//! The MySQL family's transaction that numbers a dictionary's new strings, as a value an
//! executor feeds and asks (sans I/O, as [`crate::segment::protocol::SegmentProtocol`] and
//! [`crate::sql::LeaseProtocol`]): begin; lock the topic's row; look the strings again with a
//! locking read; number those still missing from the topic's next ID ([`assign_new`]); insert
//! them; move the topic's next ID on; commit — and, when the server rolled the transaction
//! back whole (a deadlock, a lock wait timeout: [`assign_again`]), all of it again. Rust's
//! driver (`dictionary::mysql`) runs it, each step only sending what it names and feeding back
//! what came, so no binding holds a rule of the transaction. SQLite's writer is
//! [`SqliteAssign`], of the same shape (run by `dictionary::sqlite`, Python's `_sqlite.py` and
//! Node's `dialects/sqlite.js`).
//!
//! ```
//! use shardid::dictionary::protocol::{MysqlAssign, Step};
//! use shardid::sql::{Cell, Dialect, Placeholders, Value};
//!
//! let mut tx = MysqlAssign::new(Dialect::Mysql, "dict", Placeholders::Question, "urls", &["a"]).unwrap();
//! assert_eq!(tx.next(), Step::Begin);
//! tx.answer(&[]);
//! let Step::Run { statement, values } = tx.next() else { panic!() };
//! assert!(statement.contains("FOR UPDATE"));
//! assert_eq!(values, [Value::Text("urls")]);
//! tx.answer(&[&[Cell::Int(7), Cell::Int(40), Cell::Int(0), Cell::Int(0)]]); // topic 7, next 40
//! tx.next();
//! tx.answer(&[]); // the locking re-check: not there
//! let Step::Run { values, .. } = tx.next() else { panic!() };
//! assert_eq!(values, [Value::Int(7), Value::Text("a"), Value::Int(40)]); // the insert
//! tx.answer(&[]);
//! tx.next();
//! tx.answer(&[]); // the topic's next ID moved on
//! assert_eq!(tx.next(), Step::Commit);
//! tx.answer(&[]);
//! assert_eq!(tx.next(), Step::Assigned(&[Some(40)]));
//! ```
//!
//! # The conversation
//! Until it ends, [`MysqlAssign::next`]:
//! - [`Step::Begin`], [`Step::Commit`], [`Step::RollBack`]: run it on the connection and answer
//!   [`MysqlAssign::answer`] with no rows, or [`MysqlAssign::failed`];
//! - [`Step::Run`]: run the statement with its values and answer every row it returned
//!   ([`MysqlAssign::answer`]), or the driver's error code ([`MysqlAssign::failed`]: the
//!   MySQL error number in decimal; `None` for none, a lost connection);
//! - [`Step::Assigned`]: the transaction committed: the ID of each string given, in order;
//! - [`Step::Failed`]: it did not ([`Failure`]), and was rolled back.
//!
//! A failed step is followed by [`Step::RollBack`] (whose own failure is fed as well, and
//! changes nothing: a server that rolled back whole has nothing left to roll back), then by
//! the transaction again from [`Step::Begin`], or by [`Step::Failed`].

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::sql::mysql::{MysqlDictionaryStatements, assign_again, assign_new, topic_base};
use crate::sql::sqlite::{MAX_LIST, SqliteDictionary};
use crate::sql::{Cell, Dialect, MysqlDictionary, Placeholders, SqlError, Value};

/// What an executor does next ([`MysqlAssign::next`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step<'a> {
    /// Begin a transaction.
    Begin,
    /// Run `statement` with `values` (the executor's placeholders), and answer its rows.
    Run {
        /// The statement.
        statement: &'a str,
        /// Its values, in order.
        values: Vec<Value<'a>>,
    },
    /// Commit the transaction.
    Commit,
    /// Roll the transaction back (an error here is fed too, and ignored).
    RollBack,
    /// Committed: the ID of each string given to [`MysqlAssign::new`], in its order.
    Assigned(&'a [Option<u64>]),
    /// Not committed, and rolled back.
    Failed(Failure),
}

/// Why the transaction assigned nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The last error the executor fed ([`MysqlAssign::failed`]): raise it as the driver
    /// raised it.
    Driver,
    /// The topic does not exist.
    UnknownTopic,
    /// The topic was dropped, and strings new to it get no ID.
    TopicDropped,
    /// The server answered with a row no shardid DDL makes.
    Unusable,
}

/// Where the transaction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Begin,
    Lock,
    Recheck,
    Insert,
    Advance,
    Commit,
    /// Rolling back; then again from the start (`None`), or failed with it.
    RollBack(Option<Failure>),
    Assigned,
    Failed(Failure),
}

/// One run of the MySQL family's transaction numbering a topic's new strings (see the
/// module's doc): made for each batch of strings a lookup did not find.
#[derive(Clone, Debug)]
pub struct MysqlAssign {
    schema: String,
    dialect: Dialect,
    placeholders: Placeholders,
    topic: String,
    /// The strings to number, distinct.
    missing: Vec<String>,
    /// Whether a transaction the server rolled back whole is run again here (not inside a
    /// caller's own transaction, which is the caller's to run again).
    resend: bool,
    /// Which run of the transaction this is, from 1.
    attempt: u32,
    at: At,
    /// The statement of the current [`Step::Run`], rendered when the step was reached.
    statement: String,
    /// The locked row: `(topic_id, first new ID, dropped)`.
    topic_id: u64,
    base: u64,
    dropped: bool,
    /// Each string's ID, once found by the re-check or numbered.
    ids: Vec<Option<u64>>,
    /// The strings numbered now: `(index in missing, ID)`.
    new: Vec<(usize, u64)>,
}

/// The integer of a cell (drivers that return `bigint` as text pass it so).
fn int(cell: Option<&Cell<'_>>) -> Option<u64> {
    match cell? {
        Cell::Int(n) => u64::try_from(*n).ok(),
        Cell::Text(text) => text.parse().ok(),
        Cell::Bool(b) => Some(u64::from(*b)),
        Cell::Null => None,
    }
}

impl MysqlAssign {
    /// The transaction that numbers `missing` (distinct strings a lookup did not find) in
    /// `topic`, on a server of `dialect` (MySQL or MariaDB: the row names the server that
    /// wrote it) whose `schema` holds the dictionary's DDL, for an executor whose driver
    /// writes `placeholders`.
    ///
    /// # Errors
    /// [`SqlError::SchemaName`] for a schema that is not a plain identifier.
    pub fn new(
        dialect: Dialect,
        schema: &str,
        placeholders: Placeholders,
        topic: &str,
        missing: &[&str],
    ) -> Result<Self, SqlError> {
        let _checked = MysqlDictionary::new(schema)?;
        Ok(Self {
            schema: schema.into(),
            dialect,
            placeholders,
            topic: topic.into(),
            missing: missing.iter().map(|m| (*m).to_string()).collect(),
            resend: true,
            attempt: 1,
            at: At::Begin,
            statement: String::new(),
            topic_id: 0,
            base: 0,
            dropped: false,
            ids: alloc::vec![None; missing.len()],
            new: Vec::new(),
        })
    }

    /// Runs the transaction once, never again when the server rolled it back whole: inside a
    /// caller's own transaction (Django's `atomic()`), whose rollback is the caller's to run
    /// again.
    #[must_use]
    pub const fn once(mut self) -> Self {
        self.resend = false;
        self
    }

    /// Which run of the transaction this is (from 1: a second after the server rolled the
    /// first back whole).
    pub const fn attempt(&self) -> u32 {
        self.attempt
    }

    /// What to do now.
    pub fn next(&self) -> Step<'_> {
        let statement = self.statement.as_str();
        let topic_id = Value::Int(self.topic_id);
        let values = match self.at {
            At::Begin => return Step::Begin,
            At::Commit => return Step::Commit,
            At::RollBack(_) => return Step::RollBack,
            At::Assigned => return Step::Assigned(&self.ids),
            At::Failed(failure) => return Step::Failed(failure),
            At::Lock => alloc::vec![Value::Text(&self.topic)],
            At::Recheck => core::iter::once(topic_id)
                .chain(self.missing.iter().map(|m| Value::Text(m)))
                .collect(),
            At::Insert => self
                .new
                .iter()
                .flat_map(|&(i, id)| [topic_id, Value::Text(&self.missing[i]), Value::Int(id)])
                .collect(),
            At::Advance => alloc::vec![
                Value::Int(self.base + self.new.len() as u64),
                Value::Text(&self.topic)
            ],
        };
        Step::Run { statement, values }
    }

    /// The statements of the server's dialect.
    fn statements(&self) -> MysqlDictionaryStatements<'_> {
        MysqlDictionary::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new()"),
            |d| d.dialect(self.dialect).statements(self.placeholders),
        )
    }

    /// Moves to `at`, rendering its statement.
    fn to(&mut self, at: At) {
        let mut text = String::new();
        let s = self.statements();
        let _ = match at {
            At::Lock => write!(text, "{}", s.lock()),
            At::Recheck => write!(text, "{}", s.recheck(self.missing.len())),
            At::Insert => write!(text, "{}", s.insert(self.new.len())),
            At::Advance => write!(text, "{}", s.advance()),
            _ => Ok(()),
        };
        self.statement = text;
        self.at = at;
    }

    /// Every row the current step returned (none for [`Step::Begin`], [`Step::Commit`],
    /// [`Step::RollBack`], the insert and the move of the next ID).
    pub fn answer(&mut self, rows: &[&[Cell<'_>]]) {
        match self.at {
            At::Begin => self.to(At::Lock),
            At::Lock => match rows.first() {
                None => self.to(At::RollBack(Some(Failure::UnknownTopic))),
                Some(row) => match (int(row.first()), int(row.get(1)), int(row.get(2))) {
                    (Some(topic_id), Some(next), Some(dropped)) => {
                        let moved = int(row.get(3)).is_some_and(|m| m != 0);
                        self.topic_id = topic_id;
                        self.base = topic_base(next, moved);
                        self.dropped = dropped != 0;
                        self.to(At::Recheck);
                    }
                    _ => self.to(At::RollBack(Some(Failure::Unusable))),
                },
            },
            At::Recheck => {
                // Strings another writer numbered while this one waited for the lock.
                self.ids.fill(None);
                for row in rows {
                    let (Some(Cell::Text(value)), Some(id)) = (row.first(), int(row.get(1))) else {
                        return self.to(At::RollBack(Some(Failure::Unusable)));
                    };
                    if let Some(i) = self.missing.iter().position(|m| m.as_str() == *value) {
                        self.ids[i] = Some(id);
                    }
                }
                self.new = assign_new(&self.ids, self.base).collect();
                if self.new.is_empty() {
                    self.to(At::Commit);
                } else if self.dropped {
                    self.to(At::RollBack(Some(Failure::TopicDropped)));
                } else {
                    for &(i, id) in &self.new {
                        self.ids[i] = Some(id);
                    }
                    self.to(At::Insert);
                }
            }
            At::Insert => self.to(At::Advance),
            At::Advance => self.to(At::Commit),
            At::Commit => self.to(At::Assigned),
            At::RollBack(then) => self.rolled_back(then),
            At::Assigned | At::Failed(_) => {}
        }
    }

    /// The current step failed with the driver's error `code` (the MySQL error number in
    /// decimal; `None` for none, a lost connection). A transaction the server rolled back whole
    /// runs again, at most [`crate::sql::mysql::ASSIGN_ATTEMPTS`] times in all
    /// ([`assign_again`]); after any other error it fails with it ([`Failure::Driver`]). Either
    /// way it is rolled back first.
    pub fn failed(&mut self, code: Option<&str>) {
        match self.at {
            At::RollBack(then) => self.rolled_back(then),
            At::Assigned | At::Failed(_) => {}
            _ => {
                let again = self.resend
                    && code
                        .and_then(|c| c.parse::<u16>().ok())
                        .is_some_and(|number| assign_again(number, self.attempt));
                self.to(At::RollBack((!again).then_some(Failure::Driver)));
            }
        }
    }

    /// Rolled back: the transaction again, or the failure.
    fn rolled_back(&mut self, then: Option<Failure>) {
        match then {
            None => {
                self.attempt += 1;
                self.ids.fill(None);
                self.new.clear();
                self.to(At::Begin);
            }
            Some(failure) => self.to(At::Failed(failure)),
        }
    }
}

/// Where SQLite's writer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SqliteAt {
    Begin,
    Lock,
    /// Looking again at the missing strings from this index on ([`MAX_LIST`] a statement).
    Recheck(usize),
    /// Inserting the new strings from this index of `new` on.
    Insert(usize),
    Advance,
    Commit,
    /// Rolling back (inside a caller's transaction: to the savepoint, then `release`), then
    /// failed with it.
    RollBack(Failure, bool),
    Assigned,
    Failed(Failure),
}

/// SQLite's writer numbering a dictionary's new strings (the steps of [`crate::sql::sqlite`]'s
/// dictionary, as a value an executor feeds and asks, as [`MysqlAssign`]): `BEGIN IMMEDIATE`
/// (the write lock first, so the re-check sees every string committed before it); the topic's
/// row; the missing strings looked at again; the rest numbered from the topic's next ID
/// ([`assign_new`]) and inserted; `next` moved on, guarded by the value read; `COMMIT`. Lists
/// go in pieces of [`MAX_LIST`], within the one transaction. Every step is a
/// [`Step::Run`] (the transaction's own statements too, without values), then
/// [`Step::Assigned`] or [`Step::Failed`]. A failed step is followed by the rollback (its own
/// failure fed and ignored: SQLite may have rolled back itself) and [`Step::Failed`]; never run
/// again (SQLite waits for its lock up to the busy timeout, then the error is the caller's), and
/// a failed `BEGIN IMMEDIATE` has nothing to roll back.
///
/// ```
/// use shardid::dictionary::protocol::{SqliteAssign, Step};
/// use shardid::sql::{Cell, Placeholders, Value};
///
/// let mut tx = SqliteAssign::new("main", Placeholders::Question, "urls", &["a"]).unwrap();
/// assert!(matches!(tx.next(), Step::Run { statement: "BEGIN IMMEDIATE", .. }));
/// tx.answer(&[]);
/// tx.next();
/// tx.answer(&[&[Cell::Int(7), Cell::Int(40), Cell::Int(0)]]); // topic 7, next 40
/// tx.next();
/// tx.answer(&[]); // the re-check under the write lock: not there
/// let Step::Run { values, .. } = tx.next() else { panic!() };
/// assert_eq!(values, [Value::Int(7), Value::Text("a"), Value::Int(40)]); // the insert
/// tx.answer(&[]);
/// tx.next();
/// tx.answer(&[&[Cell::Int(41)]]); // next moved on, from 40 as read
/// assert!(matches!(tx.next(), Step::Run { statement: "COMMIT", .. }));
/// tx.answer(&[]);
/// assert_eq!(tx.next(), Step::Assigned(&[Some(40)]));
/// ```
#[derive(Clone, Debug)]
pub struct SqliteAssign {
    schema: String,
    placeholders: Placeholders,
    topic: String,
    /// The strings to number, distinct.
    missing: Vec<String>,
    /// Inside a transaction the caller holds (Django's `atomic()`, where `BEGIN IMMEDIATE` is
    /// refused): a savepoint, which the caller's commit or rollback decides.
    savepoint: bool,
    at: SqliteAt,
    statement: String,
    /// The locked row: `(topic_id, next, dropped)`.
    topic_id: u64,
    next: u64,
    dropped: bool,
    ids: Vec<Option<u64>>,
    new: Vec<(usize, u64)>,
}

impl SqliteAssign {
    /// The writer numbering `missing` (distinct strings a lookup did not find) in `topic`, in
    /// `schema` (`main`, or an attached database), for an executor whose driver writes
    /// `placeholders`.
    ///
    /// # Errors
    /// [`SqlError::SchemaName`] for a schema that is not a plain identifier.
    pub fn new(
        schema: &str,
        placeholders: Placeholders,
        topic: &str,
        missing: &[&str],
    ) -> Result<Self, SqlError> {
        let _checked = SqliteDictionary::new(schema)?;
        let mut this = Self {
            schema: schema.into(),
            placeholders,
            topic: topic.into(),
            missing: missing.iter().map(|m| (*m).to_string()).collect(),
            savepoint: false,
            at: SqliteAt::Begin,
            statement: String::new(),
            topic_id: 0,
            next: 0,
            dropped: false,
            ids: alloc::vec![None; missing.len()],
            new: Vec::new(),
        };
        this.to(SqliteAt::Begin);
        Ok(this)
    }

    /// Runs inside a transaction the caller holds: a savepoint instead of `BEGIN IMMEDIATE`,
    /// released on success, rolled back to and released on failure.
    #[must_use]
    pub fn in_savepoint(mut self) -> Self {
        self.savepoint = true;
        self.to(self.at);
        self
    }

    /// What to do now.
    pub fn next(&self) -> Step<'_> {
        let statement = self.statement.as_str();
        let topic_id = Value::Int(self.topic_id);
        let values = match self.at {
            SqliteAt::Assigned => return Step::Assigned(&self.ids),
            SqliteAt::Failed(failure) => return Step::Failed(failure),
            SqliteAt::Begin | SqliteAt::Commit | SqliteAt::RollBack(..) => Vec::new(),
            SqliteAt::Lock => alloc::vec![Value::Text(&self.topic)],
            SqliteAt::Recheck(from) => core::iter::once(topic_id)
                .chain(
                    self.missing[from..]
                        .iter()
                        .take(MAX_LIST)
                        .map(|m| Value::Text(m)),
                )
                .collect(),
            SqliteAt::Insert(from) => self.new[from..]
                .iter()
                .take(MAX_LIST)
                .flat_map(|&(i, id)| [topic_id, Value::Text(&self.missing[i]), Value::Int(id)])
                .collect(),
            SqliteAt::Advance => alloc::vec![
                Value::Int(self.next + self.new.len() as u64),
                topic_id,
                Value::Int(self.next)
            ],
        };
        Step::Run { statement, values }
    }

    /// Moves to `at`, rendering its statement.
    fn to(&mut self, at: SqliteAt) {
        use crate::sql::sqlite::{
            BEGIN_IMMEDIATE, COMMIT, RELEASE, ROLLBACK, ROLLBACK_TO, SAVEPOINT,
        };
        let s = SqliteDictionary::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new()"),
            |d| d.statements(self.placeholders),
        );
        let mut text = String::new();
        let piece = |from: usize, len: usize| len.saturating_sub(from).min(MAX_LIST);
        let _ = match at {
            SqliteAt::Begin => text.write_str(if self.savepoint {
                SAVEPOINT
            } else {
                BEGIN_IMMEDIATE
            }),
            SqliteAt::Lock => write!(text, "{}", s.lock()),
            SqliteAt::Recheck(from) => {
                write!(text, "{}", s.recheck(piece(from, self.missing.len())))
            }
            SqliteAt::Insert(from) => write!(text, "{}", s.insert(piece(from, self.new.len()))),
            SqliteAt::Advance => write!(text, "{}", s.advance()),
            SqliteAt::Commit => text.write_str(if self.savepoint { RELEASE } else { COMMIT }),
            SqliteAt::RollBack(_, true) => text.write_str(RELEASE),
            SqliteAt::RollBack(..) => text.write_str(if self.savepoint {
                ROLLBACK_TO
            } else {
                ROLLBACK
            }),
            SqliteAt::Assigned | SqliteAt::Failed(_) => Ok(()),
        };
        self.statement = text;
        self.at = at;
    }

    /// Every row the current step returned.
    pub fn answer(&mut self, rows: &[&[Cell<'_>]]) {
        match self.at {
            SqliteAt::Begin => self.to(SqliteAt::Lock),
            SqliteAt::Lock => match rows.first() {
                None => self.to(SqliteAt::RollBack(Failure::UnknownTopic, false)),
                Some(row) => match (int(row.first()), int(row.get(1)), int(row.get(2))) {
                    (Some(topic_id), Some(next), Some(dropped)) => {
                        (self.topic_id, self.next, self.dropped) = (topic_id, next, dropped != 0);
                        self.to(SqliteAt::Recheck(0));
                    }
                    _ => self.to(SqliteAt::RollBack(Failure::Unusable, false)),
                },
            },
            SqliteAt::Recheck(from) => {
                // Strings another writer numbered before this one took the write lock.
                for row in rows {
                    let (Some(Cell::Text(value)), Some(id)) = (row.first(), int(row.get(1))) else {
                        return self.to(SqliteAt::RollBack(Failure::Unusable, false));
                    };
                    if let Some(i) = self.missing.iter().position(|m| m.as_str() == *value) {
                        self.ids[i] = Some(id);
                    }
                }
                let from = from + MAX_LIST;
                if from < self.missing.len() {
                    return self.to(SqliteAt::Recheck(from));
                }
                self.new = assign_new(&self.ids, self.next).collect();
                if self.new.is_empty() {
                    self.to(SqliteAt::Commit);
                } else if self.dropped {
                    self.to(SqliteAt::RollBack(Failure::TopicDropped, false));
                } else {
                    for &(i, id) in &self.new {
                        self.ids[i] = Some(id);
                    }
                    self.to(SqliteAt::Insert(0));
                }
            }
            SqliteAt::Insert(from) if from + MAX_LIST < self.new.len() => {
                self.to(SqliteAt::Insert(from + MAX_LIST));
            }
            SqliteAt::Insert(_) => self.to(SqliteAt::Advance),
            // No row: `next` moved under the write lock, which cannot happen: rolled back
            // rather than trusted.
            SqliteAt::Advance if rows.is_empty() => {
                self.to(SqliteAt::RollBack(Failure::Unusable, false));
            }
            SqliteAt::Advance => self.to(SqliteAt::Commit),
            SqliteAt::Commit => self.to(SqliteAt::Assigned),
            SqliteAt::RollBack(failure, released) => self.rolled_back(failure, released),
            SqliteAt::Assigned | SqliteAt::Failed(_) => {}
        }
    }

    /// The current step failed (the driver's error is the caller's to raise on
    /// [`Failure::Driver`]): rolled back, then failed; `BEGIN IMMEDIATE` failed began nothing.
    pub fn failed(&mut self) {
        match self.at {
            SqliteAt::Begin => self.to(SqliteAt::Failed(Failure::Driver)),
            SqliteAt::RollBack(failure, released) => self.rolled_back(failure, released),
            SqliteAt::Assigned | SqliteAt::Failed(_) => {}
            _ => self.to(SqliteAt::RollBack(Failure::Driver, false)),
        }
    }

    /// The executor was interrupted somewhere in the current step (Python's `KeyboardInterrupt`
    /// between two statements): whatever began is rolled back, then the transaction fails.
    /// Unlike [`Self::failed`], at `BEGIN IMMEDIATE` too, which may have run; a rollback under
    /// way is run again; after the commit, nothing.
    pub fn interrupted(&mut self) {
        match self.at {
            SqliteAt::Assigned | SqliteAt::Failed(_) | SqliteAt::RollBack(..) => {}
            _ => self.to(SqliteAt::RollBack(Failure::Driver, false)),
        }
    }

    /// Rolled back (to the savepoint, which is then released): the failure.
    fn rolled_back(&mut self, failure: Failure, released: bool) {
        if self.savepoint && !released {
            self.to(SqliteAt::RollBack(failure, true));
        } else {
            self.to(SqliteAt::Failed(failure));
        }
    }
}

/// The transaction scripted without a server: each test plays the executor, answering each
/// step as MySQL or MariaDB would.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::mysql::ASSIGN_ATTEMPTS;

    const LOCKED: [Cell<'static>; 4] = [Cell::Int(7), Cell::Int(40), Cell::Int(0), Cell::Int(0)];

    fn assign(missing: &[&str]) -> MysqlAssign {
        MysqlAssign::new(
            Dialect::Mariadb,
            "dict",
            Placeholders::Question,
            "urls",
            missing,
        )
        .unwrap()
    }

    /// The statement and values of a [`Step::Run`].
    fn run(p: &MysqlAssign) -> (String, Vec<Value<'_>>) {
        match p.next() {
            Step::Run { statement, values } => (statement.into(), values),
            other => panic!("expected a statement, got {other:?}"),
        }
    }

    fn rendered(statement: impl core::fmt::Display) -> String {
        let mut text = String::new();
        let _ = write!(text, "{statement}");
        text
    }

    #[test]
    fn lock_recheck_number_what_is_still_missing_insert_advance_commit() {
        let s = MysqlDictionary::new("dict").unwrap();
        let s = s
            .dialect(Dialect::Mariadb)
            .statements(Placeholders::Question);
        let mut p = assign(&["a", "b", "c"]);
        assert_eq!(p.next(), Step::Begin);
        p.answer(&[]);
        let (sql, values) = run(&p);
        assert_eq!(sql, rendered(s.lock()), "MariaDB's lock");
        assert_eq!(values, [Value::Text("urls")]);
        // next 40, moved: the statement already moved it past a step back.
        p.answer(&[&[
            Cell::Text("7"),
            Cell::Text("40"),
            Cell::Int(0),
            Cell::Int(1),
        ]]);
        let (sql, values) = run(&p);
        assert_eq!(sql, rendered(s.recheck(3)));
        let text = Value::Text;
        assert_eq!(values, [Value::Int(7), text("a"), text("b"), text("c")]);
        // "b" was numbered by another writer while this one waited for the lock.
        p.answer(&[&[Cell::Text("b"), Cell::Int(12)]]);
        let (sql, values) = run(&p);
        assert_eq!(sql, rendered(s.insert(2)));
        let (t, n) = (Value::Int(7), Value::Int);
        assert_eq!(values, [t, text("a"), n(40), t, text("c"), n(41)]);
        p.answer(&[&[Cell::Int(2), Cell::Int(0)]]);
        let (sql, values) = run(&p);
        assert_eq!(sql, rendered(s.advance()));
        assert_eq!(values, [n(42), text("urls")]);
        p.answer(&[&[Cell::Int(1), Cell::Int(0)]]);
        assert_eq!(p.next(), Step::Commit);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Assigned(&[Some(40), Some(12), Some(41)]));
        assert_eq!(p.next(), p.next(), "asked again, the same answer");
    }

    #[test]
    fn everything_found_by_the_recheck_inserts_nothing_and_commits() {
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[&LOCKED]);
        run(&p);
        p.answer(&[&[Cell::Text("a"), Cell::Int(3)]]);
        assert_eq!(p.next(), Step::Commit);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Assigned(&[Some(3)]));
    }

    #[test]
    fn an_unknown_or_dropped_topic_or_an_unusable_row_is_rolled_back_and_refused() {
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[]); // no topic row
        assert_eq!(p.next(), Step::RollBack);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::UnknownTopic));
        // Dropped: strings it has are answered, a new one is refused.
        let dropped = [Cell::Int(7), Cell::Int(40), Cell::Int(1), Cell::Int(0)];
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[&dropped]);
        p.answer(&[&[Cell::Text("a"), Cell::Int(3)]]);
        assert_eq!(p.next(), Step::Commit, "found: nothing new to refuse");
        let mut p = assign(&["new"]);
        p.answer(&[]);
        p.answer(&[&dropped]);
        p.answer(&[]);
        assert_eq!(p.next(), Step::RollBack);
        p.failed(None); // its own failure changes nothing
        assert_eq!(p.next(), Step::Failed(Failure::TopicDropped));
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[&[Cell::Null, Cell::Int(1)]]);
        assert_eq!(p.next(), Step::RollBack);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::Unusable));
    }

    #[test]
    fn rolled_back_whole_runs_again_from_the_start_up_to_the_bound_other_errors_fail() {
        let mut p = assign(&["a"]);
        for attempt in 1..ASSIGN_ATTEMPTS {
            assert_eq!(p.attempt(), attempt);
            assert_eq!(p.next(), Step::Begin);
            p.answer(&[]);
            p.answer(&[&LOCKED]);
            p.answer(&[]);
            run(&p); // the insert
            p.failed(Some(if attempt % 2 == 0 { "1205" } else { "1213" }));
            assert_eq!(p.next(), Step::RollBack);
            p.answer(&[]);
        }
        // The last run: rolled back whole again, and no more.
        assert_eq!(p.next(), Step::Begin);
        p.answer(&[]);
        p.failed(Some("1213"));
        assert_eq!(p.next(), Step::RollBack);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        // A commit rolled back whole (a Galera certification failure): again; a numbered
        // string then found by the re-check keeps the ID that run gives it.
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[&LOCKED]);
        p.answer(&[]);
        p.answer(&[]);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Commit);
        p.failed(Some("1213"));
        p.answer(&[]);
        assert_eq!((p.next(), p.attempt()), (Step::Begin, 2));
        p.answer(&[]);
        p.answer(&[&LOCKED]);
        p.answer(&[&[Cell::Text("a"), Cell::Int(39)]]);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Assigned(&[Some(39)]));
        // Any other error, or a lost connection: rolled back, failed.
        for code in [Some("1062"), None, Some("not a number")] {
            let mut p = assign(&["a"]);
            p.answer(&[]);
            p.failed(code);
            assert_eq!(p.next(), Step::RollBack);
            p.failed(None);
            assert_eq!(p.next(), Step::Failed(Failure::Driver), "{code:?}");
        }
        // Once: inside a caller's transaction, not again.
        let mut p = assign(&["a"]).once();
        p.answer(&[]);
        p.failed(Some("1213"));
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
    }

    #[test]
    fn a_bad_schema_is_refused() {
        let e = MysqlAssign::new(Dialect::Mysql, "no such", Placeholders::Question, "t", &[]);
        assert!(e.is_err());
    }
}

/// SQLite's writer scripted without a file: each test plays the executor.
#[cfg(test)]
mod sqlite_tests {
    use super::*;
    use crate::sql::sqlite::{BEGIN_IMMEDIATE, COMMIT, RELEASE, ROLLBACK, ROLLBACK_TO, SAVEPOINT};

    const LOCKED: [Cell<'static>; 3] = [Cell::Int(7), Cell::Int(40), Cell::Int(0)];

    fn assign(missing: &[&str]) -> SqliteAssign {
        SqliteAssign::new("main", Placeholders::Question, "urls", missing).unwrap()
    }

    /// The statement and values of a [`Step::Run`].
    fn run(p: &SqliteAssign) -> (String, Vec<Value<'_>>) {
        match p.next() {
            Step::Run { statement, values } => (statement.into(), values),
            other => panic!("expected a statement, got {other:?}"),
        }
    }

    fn statement(p: &SqliteAssign) -> String {
        run(p).0
    }

    fn rendered(statement: impl core::fmt::Display) -> String {
        let mut text = String::new();
        let _ = write!(text, "{statement}");
        text
    }

    #[test]
    fn begin_immediate_lock_recheck_number_what_is_still_missing_insert_advance_commit() {
        let dictionary = SqliteDictionary::new("main").unwrap();
        let s = dictionary.statements(Placeholders::Question);
        let mut p = assign(&["a", "b", "c"]);
        assert_eq!(run(&p), (BEGIN_IMMEDIATE.into(), Vec::new()));
        p.answer(&[]);
        assert_eq!(
            run(&p),
            (rendered(s.lock()), alloc::vec![Value::Text("urls")])
        );
        p.answer(&[&[Cell::Int(7), Cell::Text("40"), Cell::Int(0)]]);
        let text = Value::Text;
        let (t, n) = (Value::Int(7), Value::Int);
        assert_eq!(
            run(&p),
            (
                rendered(s.recheck(3)),
                alloc::vec![t, text("a"), text("b"), text("c")]
            )
        );
        // "b" was numbered by another writer before this one took the write lock.
        p.answer(&[&[Cell::Text("b"), Cell::Int(12)]]);
        let (sql, values) = run(&p);
        assert_eq!(sql, rendered(s.insert(2)));
        assert_eq!(values, [t, text("a"), n(40), t, text("c"), n(41)]);
        p.answer(&[]);
        // Guarded by the next it read.
        assert_eq!(
            run(&p),
            (rendered(s.advance()), alloc::vec![n(42), t, n(40)])
        );
        p.answer(&[&[Cell::Int(42)]]);
        assert_eq!(statement(&p), COMMIT);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Assigned(&[Some(40), Some(12), Some(41)]));
        assert_eq!(p.next(), p.next(), "asked again, the same answer");
    }

    #[test]
    fn everything_found_by_the_recheck_inserts_nothing_and_a_dropped_topic_refuses_new_strings() {
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[&LOCKED]);
        p.answer(&[&[Cell::Text("a"), Cell::Int(3)]]);
        assert_eq!(statement(&p), COMMIT, "nothing inserted, next not moved");
        p.answer(&[]);
        assert_eq!(p.next(), Step::Assigned(&[Some(3)]));
        let dropped = [Cell::Int(7), Cell::Int(40), Cell::Int(1)];
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[&dropped]);
        p.answer(&[&[Cell::Text("a"), Cell::Int(3)]]);
        assert_eq!(statement(&p), COMMIT, "found: nothing new to refuse");
        let mut p = assign(&["new"]);
        p.answer(&[]);
        p.answer(&[&dropped]);
        p.answer(&[]);
        assert_eq!(statement(&p), ROLLBACK);
        p.failed(); // its own failure changes nothing
        assert_eq!(p.next(), Step::Failed(Failure::TopicDropped));
    }

    #[test]
    fn long_lists_go_in_pieces_within_the_one_transaction() {
        let many: Vec<String> = (0..MAX_LIST + 2).map(|i| alloc::format!("s{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let mut p = assign(&many);
        p.answer(&[]);
        p.answer(&[&LOCKED]);
        assert_eq!(run(&p).1.len(), 1 + MAX_LIST, "the first piece");
        p.answer(&[]);
        let (_, values) = run(&p);
        assert_eq!(
            values,
            [
                Value::Int(7),
                Value::Text(many[MAX_LIST]),
                Value::Text(many[MAX_LIST + 1])
            ]
        );
        // The last string was numbered meanwhile: the others take 40...
        p.answer(&[&[Cell::Text(many[MAX_LIST + 1]), Cell::Int(5)]]);
        assert_eq!(run(&p).1.len(), 3 * MAX_LIST);
        p.answer(&[]);
        let (_, values) = run(&p);
        let last = 40 + MAX_LIST as u64;
        assert_eq!(
            values,
            [Value::Int(7), Value::Text(many[MAX_LIST]), Value::Int(last)]
        );
        p.answer(&[]);
        assert_eq!(
            run(&p).1,
            [Value::Int(last + 1), Value::Int(7), Value::Int(40)]
        );
        p.answer(&[&[Cell::Int(1)]]);
        p.answer(&[]);
        let Step::Assigned(ids) = p.next() else {
            panic!("{:?}", p.next())
        };
        assert_eq!(ids[0], Some(40));
        assert_eq!(ids[MAX_LIST], Some(last));
        assert_eq!(ids[MAX_LIST + 1], Some(5));
    }

    #[test]
    fn any_failure_is_rolled_back_never_run_again_and_a_failed_begin_rolls_nothing_back() {
        // BEGIN IMMEDIATE refused (busy past the timeout): nothing began.
        let mut p = assign(&["a"]);
        p.failed();
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        // Any later step: rolled back, then failed with the driver's error.
        for fail_at in 1..=5 {
            let mut p = assign(&["a"]);
            let answers: [&[&[Cell<'_>]]; 5] = [&[], &[&LOCKED], &[], &[], &[&[Cell::Int(41)]]];
            for answer in &answers[..fail_at] {
                p.answer(answer);
            }
            p.failed();
            assert_eq!(statement(&p), ROLLBACK, "failed at step {fail_at}");
            p.answer(&[]);
            assert_eq!(p.next(), Step::Failed(Failure::Driver));
        }
        // No topic; an unreadable row; next moved under the write lock.
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[]);
        assert_eq!(statement(&p), ROLLBACK);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::UnknownTopic));
        let mut p = assign(&["a"]);
        p.answer(&[]);
        p.answer(&[&[Cell::Null, Cell::Int(1), Cell::Int(0)]]);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::Unusable));
        let mut p = assign(&["a"]);
        for answer in [&[][..], &[&LOCKED[..]], &[], &[], &[]] {
            p.answer(answer);
        }
        assert_eq!(statement(&p), ROLLBACK, "advance answered no row");
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::Unusable));
    }

    #[test]
    fn inside_a_callers_transaction_a_savepoint_released_or_rolled_back_to() {
        let mut p = assign(&["a"]).in_savepoint();
        assert_eq!(statement(&p), SAVEPOINT);
        p.answer(&[]);
        p.answer(&[&LOCKED]);
        p.answer(&[]);
        p.answer(&[]);
        p.answer(&[&[Cell::Int(41)]]);
        assert_eq!(statement(&p), RELEASE);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Assigned(&[Some(40)]));
        let mut p = assign(&["a"]).in_savepoint();
        p.answer(&[]);
        p.failed();
        assert_eq!(statement(&p), ROLLBACK_TO);
        p.failed(); // its failure changes nothing: released all the same
        assert_eq!(statement(&p), RELEASE);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
    }

    #[test]
    fn an_interrupted_executor_rolls_back_what_may_have_begun() {
        // BEGIN IMMEDIATE may have run before the interruption: rolled back all the same.
        let mut p = assign(&["a"]);
        p.interrupted();
        assert_eq!(statement(&p), ROLLBACK);
        p.failed(); // no transaction was active after all
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        let mut p = assign(&["a"]).in_savepoint();
        p.answer(&[]);
        p.answer(&[&LOCKED]);
        p.interrupted();
        assert_eq!(statement(&p), ROLLBACK_TO);
        p.interrupted(); // again, inside the rollback: the rollback again
        assert_eq!(statement(&p), ROLLBACK_TO);
        p.answer(&[]);
        assert_eq!(statement(&p), RELEASE);
        p.answer(&[]);
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        // Committed: nothing to undo.
        let mut p = assign(&["a"]);
        for answer in [
            &[][..],
            &[&LOCKED[..]],
            &[],
            &[],
            &[&[Cell::Int(41)][..]],
            &[],
        ] {
            p.answer(answer);
        }
        p.interrupted();
        assert_eq!(p.next(), Step::Assigned(&[Some(40)]));
    }

    #[test]
    fn a_bad_schema_is_refused() {
        assert!(SqliteAssign::new("no such", Placeholders::Question, "t", &[]).is_err());
    }
}
