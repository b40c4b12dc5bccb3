//! The Rust client of the string ↔ ID dictionary, over the `postgres` crate (feature
//! `postgres`): the core's [`Cache`] and batch logic, one connection, the core's statements —
//! as the Python (psycopg) and Node (pg) clients do.
//!
//! ```no_run
//! use shardid::dictionary::postgres::Dictionary;
//!
//! let urls = Dictionary::connect(&["host=127.0.0.1 user=app dbname=app"], "urls", "dict", 100_000)?;
//! urls.create()?;
//! let id = urls.id("https://example.com/")?; // the same forever
//! assert_eq!(urls.value(id)?.as_deref(), Some("https://example.com/"));
//! # Ok::<(), shardid::dictionary::postgres::DictionaryError>(())
//! ```

use postgres::types::Type;
use std::string::{String, ToString};
use std::sync::{Arc, Mutex, PoisonError};
use std::vec::Vec;
use std::{fmt, format};

use super::{Cache, Invalid, check_topic, server_for};
use crate::ErrorKind;
use crate::driver::postgres::Described;
use crate::sql::{Dictionary as Ddl, Placeholders, TOPIC_DROPPED, UNKNOWN_TOPIC};

/// Why a dictionary call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum DictionaryError {
    /// A topic, string, ID, batch or schema that is not allowed ([`ErrorKind::InvalidArgument`]).
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
    /// The database failed (connection, or another error of the server).
    Database(postgres::Error),
}

impl DictionaryError {
    /// The kind of the shared table this error is reported as, if it has one (a database
    /// error is the driver's own).
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Self::InvalidArgument { .. } | Self::Mismatch => Some(ErrorKind::InvalidArgument),
            Self::UnknownTopic { .. } => Some(ErrorKind::UnknownTopic),
            Self::TopicDropped { .. } => Some(ErrorKind::TopicDropped),
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
            Self::Database(e) => write!(f, "database: {}", Described(e)),
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

/// The dictionary of one topic on one PostgreSQL server (of a list). `Sync`: share one per
/// topic; cached calls never lock the connection.
pub struct Dictionary {
    topic: String,
    server: usize,
    config: String,
    client: Mutex<Option<postgres::Client>>,
    cache: Cache,
    ids_sql: String,
    lookup_sql: String,
    values_sql: String,
    create_sql: String,
    drop_sql: String,
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

impl Dictionary {
    /// The dictionary of `topic` in `schema`, on the server of `servers` (libpq connection
    /// strings) that [`server_for`] names; connects at once. `cache` entries are kept each way.
    ///
    /// # Errors
    /// [`DictionaryError::InvalidArgument`] for a bad topic, schema or empty list;
    /// [`DictionaryError::Database`] when the server cannot be reached.
    pub fn connect<S: AsRef<str>>(
        servers: &[S],
        topic: &str,
        schema: &str,
        cache: usize,
    ) -> Result<Self, DictionaryError> {
        check_topic(topic).map_err(|e| DictionaryError::invalid(e, "topic".into()))?;
        let ddl = Ddl::new(schema).map_err(|e| DictionaryError::InvalidArgument {
            argument: "schema".into(),
            reason: e.to_string(),
        })?;
        if servers.is_empty() {
            return Err(DictionaryError::InvalidArgument {
                argument: "servers".into(),
                reason: "must hold at least one connection string".into(),
            });
        }
        for config in servers {
            if let Some(reason) = crate::driver::postgres::url_problem(config.as_ref()) {
                return Err(DictionaryError::InvalidArgument {
                    argument: "servers".into(),
                    reason,
                });
            }
        }
        let server = server_for(topic, u32::try_from(servers.len()).unwrap_or(u32::MAX)) as usize;
        let s = ddl.statements(Placeholders::Numbered);
        let this = Self {
            topic: topic.into(),
            server,
            config: servers[server].as_ref().into(),
            client: Mutex::new(None),
            cache: Cache::new(cache),
            ids_sql: s.ids().to_string(),
            lookup_sql: s.lookup().to_string(),
            values_sql: s.values().to_string(),
            create_sql: s.create_topic().to_string(),
            drop_sql: s.drop_topic().to_string(),
        };
        *this.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(this.open()?);
        Ok(this)
    }

    fn open(&self) -> Result<postgres::Client, DictionaryError> {
        postgres::Client::connect(&self.config, postgres::NoTls).map_err(DictionaryError::Database)
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

    /// What this dictionary did: hits and misses of its cache both ways, statements sent and
    /// sent again ([`crate::stats::DictionaryStats`], the names of Python's and Node's
    /// `stats()`).
    pub fn stats(&self) -> crate::stats::DictionaryStats {
        self.cache.stats()
    }

    /// Runs one statement and returns its one value; a lost connection is reopened and the
    /// statement sent once more (every statement here is safe to repeat). Sent with
    /// `query_typed`: one round trip on the unnamed statement, so no prepared statement has to
    /// outlive it (a pooler in transaction mode runs each on any server session).
    fn row(
        &self,
        sql: &str,
        params: &[(&(dyn postgres::types::ToSql + Sync), Type)],
    ) -> Result<postgres::Row, DictionaryError> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        for attempt in 1..=2 {
            if client.as_ref().is_none_or(postgres::Client::is_closed) {
                *client = Some(self.open()?);
            }
            let Some(conn) = client.as_mut() else {
                unreachable!("connected above")
            };
            self.cache.sent(attempt == 2);
            match conn.query_typed(sql, params).map(one_row) {
                Ok(row) => return Ok(row),
                Err(e) => {
                    match e.code().map(postgres::error::SqlState::code) {
                        Some(UNKNOWN_TOPIC) => {
                            return Err(DictionaryError::UnknownTopic {
                                topic: self.topic.clone(),
                            });
                        }
                        Some(TOPIC_DROPPED) => {
                            return Err(DictionaryError::TopicDropped {
                                topic: self.topic.clone(),
                            });
                        }
                        _ => {}
                    }
                    if attempt == 2 || !(e.is_closed() || conn.is_closed()) {
                        return Err(DictionaryError::Database(e));
                    }
                    *client = None;
                }
            }
        }
        unreachable!("the second attempt returns")
    }

    /// Creates the topic (IDs from 0) if it does not exist.
    ///
    /// # Errors
    /// [`DictionaryError::TopicDropped`] for a dropped name, [`DictionaryError::Database`].
    pub fn create(&self) -> Result<(), DictionaryError> {
        self.row(&self.create_sql, &[(&self.topic, Type::TEXT)])
            .map(|_| ())
    }

    /// Drops the topic: its strings stay readable, nothing new is assigned, its name is never
    /// used again.
    ///
    /// # Errors
    /// [`DictionaryError::UnknownTopic`], [`DictionaryError::Database`].
    pub fn drop_topic(&self) -> Result<(), DictionaryError> {
        self.row(&self.drop_sql, &[(&self.topic, Type::TEXT)])
            .map(|_| ())
    }

    /// The ID of `value`, assigned (the topic's next) if it is new.
    ///
    /// # Errors
    /// As [`Dictionary::ids`].
    pub fn id(&self, value: &str) -> Result<u64, DictionaryError> {
        if let Some(id) = self.cache.id(value) {
            return Ok(id);
        }
        let ids = self.ids(&[value])?;
        Ok(ids[0])
    }

    /// The IDs of `values`, in order; new strings get the topic's next IDs in the order they
    /// first appear. One round trip for every string not cached.
    ///
    /// # Errors
    /// [`DictionaryError::InvalidArgument`] (`values[i]`), [`DictionaryError::UnknownTopic`],
    /// [`DictionaryError::TopicDropped`] (a new string), [`DictionaryError::Database`].
    pub fn ids<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<u64>, DictionaryError> {
        self.strings(values, &self.ids_sql)?
            .into_iter()
            .map(|id| id.ok_or(DictionaryError::Mismatch))
            .collect()
    }

    /// The IDs of `values`, `None` for a string never assigned: never assigns.
    ///
    /// # Errors
    /// As [`Dictionary::ids`] (but never `TopicDropped`).
    pub fn lookup<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<Option<u64>>, DictionaryError> {
        self.strings(values, &self.lookup_sql)
    }

    fn strings<S: AsRef<str>>(
        &self,
        values: &[S],
        sql: &str,
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
        let answers: Vec<Option<i64>> = self
            .row(
                sql,
                &[(&self.topic, Type::TEXT), (&misses, Type::TEXT_ARRAY)],
            )?
            .try_get(0)
            .map_err(DictionaryError::Database)?;
        let answers: Vec<Option<u64>> = answers
            .into_iter()
            .map(|a| a.map(i64::cast_unsigned))
            .collect();
        self.cache
            .complete_ids(values, &mut ids, &misses, &answers)
            .map_err(|_| DictionaryError::Mismatch)?;
        Ok(ids)
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
        let signed: Vec<i64> = misses.iter().map(|&m| m.cast_signed()).collect();
        let answers: Vec<Option<String>> = self
            .row(
                &self.values_sql,
                &[(&self.topic, Type::TEXT), (&signed, Type::INT8_ARRAY)],
            )?
            .try_get(0)
            .map_err(DictionaryError::Database)?;
        self.cache
            .complete_values(ids, &mut values, &misses, &answers)
            .map_err(|_| DictionaryError::Mismatch)?;
        Ok(values)
    }
}

/// The one row a statement of the dictionary returns.
fn one_row(rows: Vec<postgres::Row>) -> postgres::Row {
    match rows.into_iter().next() {
        Some(row) => row,
        // Every statement here selects one value: a function's result.
        None => unreachable!("a statement of the dictionary returned no row"),
    }
}
