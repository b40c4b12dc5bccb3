//! The Rust client of the string ↔ ID dictionary on MySQL 8 and MariaDB, over the `mysql`
//! crate (feature `mysql`): the core's [`Cache`] and batch logic, one connection, the core's
//! statements and steps (`shardid::sql::mysql`'s dictionary) — as the Python (PyMySQL) and Node
//! (mysql2) clients do. Lists longer than [`MAX_PREPARED_LIST`] go in several statements (a
//! prepared statement takes at most 65,535 placeholders).
//!
//! ```no_run
//! use shardid::dictionary::mysql::Dictionary;
//!
//! let urls = Dictionary::connect(&["mysql://app:secret@127.0.0.1:3306/dict"], "urls", "dict", 100_000)?;
//! urls.create()?;
//! let id = urls.id("https://example.com/")?; // the same forever
//! assert_eq!(urls.value(id)?.as_deref(), Some("https://example.com/"));
//! # Ok::<(), shardid::dictionary::mysql::DictionaryError>(())
//! ```

use std::collections::HashMap;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::vec::Vec;
use std::{fmt, format};

use mysql::prelude::Queryable;
use mysql::{Params, TxOpts, Value};

use super::{Cache, Invalid, check_topic, server_for};
use crate::ErrorKind;
use crate::sql::mysql::connect::{ConnectError, connect, detect};
use crate::sql::mysql::{
    MAX_PREPARED_LIST, MysqlDictionaryStatements, MysqlUrl, assign_new, topic_base,
};
use crate::sql::{Dialect, MysqlDictionary, Placeholders};

/// MySQL's errors after which the server rolled the transaction back whole: run it again.
const DEADLOCK: u16 = 1213;
const LOCK_WAIT_TIMEOUT: u16 = 1205;
const RETRIES: usize = 5;

/// Why a dictionary call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum DictionaryError {
    /// A topic, string, ID, batch, schema or URL that is not allowed
    /// ([`ErrorKind::InvalidArgument`]).
    InvalidArgument {
        /// The argument (`values[3]` in a batch).
        argument: String,
        /// Why.
        reason: String,
    },
    /// The topic was never created ([`ErrorKind::UnknownTopic`]).
    UnknownTopic {
        /// The topic.
        topic: String,
    },
    /// The topic was dropped: it assigns no new IDs ([`ErrorKind::TopicDropped`]).
    TopicDropped {
        /// The topic.
        topic: String,
    },
    /// The server's answer did not match the batch (not a shardid dictionary?).
    Mismatch,
    /// The server did not greet as MySQL ([`ErrorKind::NotMysql`]).
    NotMysql {
        /// `host:port`.
        server: String,
        /// What it did instead.
        reason: String,
    },
    /// The database failed (connection, or another error of the server).
    Database(mysql::Error),
}

impl DictionaryError {
    /// The kind of the shared table this error is reported as, if it has one (a database
    /// error is the driver's own).
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Self::InvalidArgument { .. } | Self::Mismatch => Some(ErrorKind::InvalidArgument),
            Self::UnknownTopic { .. } => Some(ErrorKind::UnknownTopic),
            Self::TopicDropped { .. } => Some(ErrorKind::TopicDropped),
            Self::NotMysql { .. } => Some(ErrorKind::NotMysql),
            Self::Database(_) => None,
        }
    }

    fn invalid(e: Invalid, argument: String) -> Self {
        Self::InvalidArgument {
            argument,
            reason: e.reason().to_string(),
        }
    }
}

impl fmt::Display for DictionaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument { argument, reason } => {
                ErrorKind::InvalidArgument.render(f, |name, f| match name {
                    "argument" => f.write_str(argument),
                    _ => f.write_str(reason),
                })
            }
            Self::UnknownTopic { topic } => {
                ErrorKind::UnknownTopic.render(f, |_, f| f.write_str(topic))
            }
            Self::TopicDropped { topic } => {
                ErrorKind::TopicDropped.render(f, |_, f| f.write_str(topic))
            }
            Self::Mismatch => f.write_str("the server's answers do not match the batch"),
            Self::NotMysql { server, reason } => {
                ErrorKind::NotMysql.render(f, |name, f| match name {
                    "server" => f.write_str(server),
                    _ => f.write_str(reason),
                })
            }
            Self::Database(e) => write!(f, "database: {e}"),
        }
    }
}

impl std::error::Error for DictionaryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Database(e) => Some(e),
            _ => None,
        }
    }
}

impl From<mysql::Error> for DictionaryError {
    fn from(e: mysql::Error) -> Self {
        Self::Database(e)
    }
}

impl From<ConnectError> for DictionaryError {
    fn from(e: ConnectError) -> Self {
        match e {
            ConnectError::Url(reason) => Self::InvalidArgument {
                argument: "url".into(),
                reason: reason.into(),
            },
            ConnectError::NotMysql { server, reason } => Self::NotMysql { server, reason },
            ConnectError::Driver(e) => Self::Database(e),
        }
    }
}

/// The dictionary of one topic on one MySQL or MariaDB server (of a list). `Sync`: share one
/// per topic; cached calls never lock the connection.
pub struct Dictionary {
    topic: String,
    server: usize,
    url: String,
    schema: String,
    client: Mutex<Option<mysql::Conn>>,
    /// Whether the connection's server is MariaDB (it names itself so in the rows it writes).
    mariadb: AtomicBool,
    cache: Cache,
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("topic", &self.topic)
            .field("server", &self.server)
            .field("cached", &self.cache.len())
            .finish_non_exhaustive()
    }
}

fn bytes(value: &Value) -> Option<&[u8]> {
    match value {
        Value::Bytes(b) => Some(b),
        _ => None,
    }
}

fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(i) => Some(*i),
        Value::UInt(u) => i64::try_from(*u).ok(),
        Value::Bytes(b) => core::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

impl Dictionary {
    /// The dictionary of `topic` in database `schema`, on the server of `servers` (`mysql://`
    /// URLs) that [`server_for`] names; connects at once. `cache` entries are kept each way.
    ///
    /// # Errors
    /// [`DictionaryError::InvalidArgument`] for a bad topic, schema, URL or empty list;
    /// [`DictionaryError::NotMysql`]; [`DictionaryError::Database`] when the server cannot be
    /// reached.
    pub fn connect<S: AsRef<str>>(
        servers: &[S],
        topic: &str,
        schema: &str,
        cache: usize,
    ) -> Result<Self, DictionaryError> {
        check_topic(topic).map_err(|e| DictionaryError::invalid(e, "topic".into()))?;
        let _checked =
            MysqlDictionary::new(schema).map_err(|e| DictionaryError::InvalidArgument {
                argument: "schema".into(),
                reason: e.to_string(),
            })?;
        if servers.is_empty() {
            return Err(DictionaryError::InvalidArgument {
                argument: "servers".into(),
                reason: "must hold at least one URL".into(),
            });
        }
        let server = server_for(topic, u32::try_from(servers.len()).unwrap_or(u32::MAX)) as usize;
        let url = servers[server].as_ref();
        MysqlUrl::parse(url).map_err(|reason| DictionaryError::InvalidArgument {
            argument: "url".into(),
            reason: reason.into(),
        })?;
        let this = Self {
            topic: topic.into(),
            server,
            url: url.into(),
            schema: schema.into(),
            client: Mutex::new(None),
            mariadb: AtomicBool::new(false),
            cache: Cache::new(cache),
        };
        *this.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(this.open()?);
        Ok(this)
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The index in the list of the server that holds the topic.
    pub const fn server(&self) -> usize {
        self.server
    }

    /// The cache (both ways).
    pub const fn cache(&self) -> &Cache {
        &self.cache
    }

    /// What this dictionary did: hits and misses of its cache both ways, steps sent and sent
    /// again ([`crate::stats::DictionaryStats`], the names of Python's and Node's `stats()`).
    pub fn stats(&self) -> crate::stats::DictionaryStats {
        self.cache.stats()
    }

    /// A connection to the topic's server, whose dialect the statements then follow.
    fn open(&self) -> Result<mysql::Conn, DictionaryError> {
        let mut conn = connect(&self.url)?;
        let dialect = detect(&mut conn)?;
        self.mariadb
            .store(dialect == Dialect::Mariadb, Ordering::Release);
        Ok(conn)
    }

    fn statements(&self) -> MysqlDictionaryStatements<'_> {
        let dialect = if self.mariadb.load(Ordering::Acquire) {
            Dialect::Mariadb
        } else {
            Dialect::Mysql
        };
        MysqlDictionary::new(&self.schema).map_or_else(
            |_| unreachable!("checked in connect"),
            |d| d.dialect(dialect).statements(Placeholders::Question),
        )
    }

    /// Runs `step` on the connection; a lost connection is reopened and the step run once
    /// more (a transaction the server lost rolled back whole).
    fn run<T>(
        &self,
        mut step: impl FnMut(&mut mysql::Conn) -> Result<T, DictionaryError>,
    ) -> Result<T, DictionaryError> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        for attempt in 1..=2 {
            if client.is_none() {
                *client = Some(self.open()?);
            }
            let Some(conn) = client.as_mut() else {
                unreachable!("connected above")
            };
            self.cache.sent(attempt == 2);
            match step(conn) {
                Err(DictionaryError::Database(e)) if attempt == 1 && lost(&e) => *client = None,
                other => return other,
            }
        }
        unreachable!("the second attempt returns")
    }

    fn unknown(&self) -> DictionaryError {
        DictionaryError::UnknownTopic {
            topic: self.topic.clone(),
        }
    }

    fn dropped(&self) -> DictionaryError {
        DictionaryError::TopicDropped {
            topic: self.topic.clone(),
        }
    }

    fn state(&self, conn: &mut mysql::Conn) -> Result<bool, DictionaryError> {
        let dropped: Option<i64> =
            conn.exec_first(self.statements().state().to_string(), (&self.topic,))?;
        dropped.map(|d| d != 0).ok_or_else(|| self.unknown())
    }

    /// Creates the topic (IDs from 0) if it does not exist.
    ///
    /// # Errors
    /// [`DictionaryError::TopicDropped`] for a dropped name, [`DictionaryError::Database`].
    pub fn create(&self) -> Result<(), DictionaryError> {
        self.run(|conn| {
            conn.exec_drop(self.statements().create_topic().to_string(), (&self.topic,))?;
            if self.state(conn)? {
                return Err(self.dropped());
            }
            Ok(())
        })
    }

    /// Drops the topic: its strings stay readable, nothing new is assigned, its name is never
    /// used again.
    ///
    /// # Errors
    /// [`DictionaryError::UnknownTopic`], [`DictionaryError::Database`].
    pub fn drop_topic(&self) -> Result<(), DictionaryError> {
        self.run(|conn| {
            conn.exec_drop(self.statements().drop_topic().to_string(), (&self.topic,))?;
            self.state(conn).map(|_| ())
        })
    }

    /// The ID of `value`, assigned (the topic's next) if it is new.
    ///
    /// # Errors
    /// As [`Dictionary::ids`].
    pub fn id(&self, value: &str) -> Result<u64, DictionaryError> {
        if let Some(id) = self.cache.id(value) {
            return Ok(id);
        }
        Ok(self.ids(&[value])?[0])
    }

    /// The IDs of `values`, in order; new strings get the topic's next IDs in the order they
    /// first appear.
    ///
    /// # Errors
    /// [`DictionaryError::InvalidArgument`] (`values[i]`), [`DictionaryError::UnknownTopic`],
    /// [`DictionaryError::TopicDropped`] (a new string), [`DictionaryError::Database`].
    pub fn ids<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<u64>, DictionaryError> {
        self.strings(values, true)?
            .into_iter()
            .map(|id| id.ok_or(DictionaryError::Mismatch))
            .collect()
    }

    /// The IDs of `values`, `None` for a string never assigned: never assigns.
    ///
    /// # Errors
    /// As [`Dictionary::ids`] (but never `TopicDropped`).
    pub fn lookup<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<Option<u64>>, DictionaryError> {
        self.strings(values, false)
    }

    fn strings<S: AsRef<str>>(
        &self,
        values: &[S],
        assign: bool,
    ) -> Result<Vec<Option<u64>>, DictionaryError> {
        let (mut ids, misses) = self.cache.plan_ids(values).map_err(|(e, i)| {
            let argument = match e {
                Invalid::Batch => "values".into(),
                _ => format!("values[{i}]"),
            };
            DictionaryError::invalid(e, argument)
        })?;
        if misses.is_empty() {
            return Ok(ids);
        }
        let mut answers = Vec::with_capacity(misses.len());
        for chunk in misses.chunks(MAX_PREPARED_LIST) {
            let found = self.run(|conn| self.find(conn, chunk))?;
            let mut chunk_answers: Vec<Option<u64>> = chunk
                .iter()
                .map(|v| found.get(v.as_bytes()).copied())
                .collect();
            if assign && chunk_answers.contains(&None) {
                chunk_answers = self.run(|conn| {
                    let mut attempt = 0;
                    loop {
                        attempt += 1;
                        match self.assign(conn, chunk, &chunk_answers) {
                            Err(DictionaryError::Database(mysql::Error::MySqlError(e)))
                                if attempt < RETRIES
                                    && (e.code == DEADLOCK || e.code == LOCK_WAIT_TIMEOUT) => {}
                            other => return other,
                        }
                    }
                })?;
            }
            answers.extend(chunk_answers);
        }
        self.cache
            .complete_ids(values, &mut ids, &misses, &answers)
            .map_err(|_| DictionaryError::Mismatch)?;
        Ok(ids)
    }

    /// The IDs the topic has of `values` (no lock); `UnknownTopic` for no topic.
    fn find(
        &self,
        conn: &mut mysql::Conn,
        values: &[&str],
    ) -> Result<HashMap<Vec<u8>, u64>, DictionaryError> {
        let mut params: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
        params.push(Value::from(self.topic.as_str()));
        let rows: Vec<mysql::Row> = conn.exec(
            self.statements().find(values.len()).to_string(),
            Params::Positional(params),
        )?;
        if rows.is_empty() {
            return Err(self.unknown());
        }
        let mut found = HashMap::new();
        for row in rows {
            let row = row.unwrap();
            if let (Some(value), Some(id)) = (bytes(&row[1]), int(&row[2])) {
                found.insert(value.to_vec(), id.cast_unsigned());
            }
        }
        Ok(found)
    }

    /// The locked transaction: numbers the strings still missing after a locking re-check.
    fn assign(
        &self,
        conn: &mut mysql::Conn,
        values: &[&str],
        answers: &[Option<u64>],
    ) -> Result<Vec<Option<u64>>, DictionaryError> {
        let s = self.statements();
        let missing: Vec<&str> = values
            .iter()
            .zip(answers)
            .filter(|(_, a)| a.is_none())
            .map(|(v, _)| *v)
            .collect();
        let mut tx = conn.start_transaction(TxOpts::default())?;
        let locked: Option<(i64, i64, i64, i64)> =
            tx.exec_first(s.lock().to_string(), (&self.topic,))?;
        let (topic_id, next, dropped, moved) = locked.ok_or_else(|| self.unknown())?;
        let base = topic_base(next.cast_unsigned(), moved != 0).cast_signed();
        let mut params: Vec<Value> = std::vec![Value::from(topic_id)];
        params.extend(missing.iter().map(|v| Value::from(*v)));
        let rows: Vec<(Vec<u8>, i64)> = tx.exec(
            s.recheck(missing.len()).to_string(),
            Params::Positional(params),
        )?;
        let found: HashMap<Vec<u8>, u64> = rows
            .into_iter()
            .map(|(v, id)| (v, id.cast_unsigned()))
            .collect();
        let mut still: Vec<Option<u64>> = missing
            .iter()
            .map(|v| found.get(v.as_bytes()).copied())
            .collect();
        let new: Vec<(usize, u64)> = assign_new(&still, base.cast_unsigned()).collect();
        if !new.is_empty() {
            if dropped != 0 {
                return Err(self.dropped());
            }
            let mut params = Vec::with_capacity(new.len() * 3);
            for &(i, id) in &new {
                params.extend([
                    Value::from(topic_id),
                    Value::from(missing[i]),
                    Value::from(id),
                ]);
                still[i] = Some(id);
            }
            tx.exec_drop(s.insert(new.len()).to_string(), Params::Positional(params))?;
            let next = base.cast_unsigned() + new.len() as u64;
            tx.exec_drop(s.advance().to_string(), (next, &self.topic))?;
        }
        tx.commit()?;
        let by_value: HashMap<&str, Option<u64>> = missing.iter().copied().zip(still).collect();
        Ok(values
            .iter()
            .zip(answers)
            .map(|(v, a)| a.or_else(|| by_value.get(v).copied().flatten()))
            .collect())
    }

    /// The string of `id`, `None` if the topic never assigned it.
    ///
    /// # Errors
    /// As [`Dictionary::values`].
    pub fn value(&self, id: u64) -> Result<Option<Arc<str>>, DictionaryError> {
        if let Some(value) = self.cache.value(id) {
            return Ok(Some(value));
        }
        Ok(self.values(&[id])?.pop().flatten())
    }

    /// The strings of `ids`, in order, `None` for an ID never assigned.
    ///
    /// # Errors
    /// [`DictionaryError::InvalidArgument`] (`ids[i]` above 2^63 - 1),
    /// [`DictionaryError::UnknownTopic`], [`DictionaryError::Database`].
    pub fn values(&self, ids: &[u64]) -> Result<Vec<Option<Arc<str>>>, DictionaryError> {
        let (mut values, misses) = self.cache.plan_values(ids).map_err(|(e, i)| {
            let argument = match e {
                Invalid::Batch => "ids".into(),
                _ => format!("ids[{i}]"),
            };
            DictionaryError::invalid(e, argument)
        })?;
        if misses.is_empty() {
            return Ok(values);
        }
        let mut answers: Vec<Option<String>> = Vec::with_capacity(misses.len());
        for chunk in misses.chunks(MAX_PREPARED_LIST) {
            let found = self.run(|conn| {
                let mut params: Vec<Value> = chunk.iter().map(|&id| Value::from(id)).collect();
                params.push(Value::from(self.topic.as_str()));
                let rows: Vec<mysql::Row> = conn.exec(
                    self.statements().find_values(chunk.len()).to_string(),
                    Params::Positional(params),
                )?;
                if rows.is_empty() {
                    return Err(self.unknown());
                }
                let mut found = HashMap::new();
                for row in rows {
                    let row = row.unwrap();
                    if let (Some(id), Some(value)) = (int(&row[1]), bytes(&row[2])) {
                        let text = String::from_utf8(value.to_vec())
                            .map_err(|_| DictionaryError::Mismatch)?;
                        found.insert(id.cast_unsigned(), text);
                    }
                }
                Ok(found)
            })?;
            answers.extend(chunk.iter().map(|id| found.get(id).cloned()));
        }
        self.cache
            .complete_values(ids, &mut values, &misses, &answers)
            .map_err(|_| DictionaryError::Mismatch)?;
        Ok(values)
    }
}

/// Whether the connection is gone (open another).
fn lost(e: &mysql::Error) -> bool {
    !matches!(e, mysql::Error::MySqlError(_))
}
