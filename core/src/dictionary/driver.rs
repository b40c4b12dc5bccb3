//! The Rust driver of the string ↔ ID dictionary that `postgres`, `mysql` and `sqlite`
//! share: the core's [`Cache`] and batch planning, the server a topic lives on, one connection
//! reopened once when lost, and the errors. What differs between the databases (PostgreSQL's
//! functions over arrays; the MySQL family's statements over lists and its locked transaction)
//! is a [`DictionaryClient`] over the one connection trait ([`Client`]).

use std::borrow::Borrow;
use std::boxed::Box;
use std::collections::HashMap;
use std::hash::Hash;
use std::string::{String, ToString};
use std::sync::{Arc, Mutex, PoisonError};
use std::vec::Vec;
use std::{fmt, format};

use super::{Cache, Invalid, check_topic, server_for};
use crate::ErrorKind;
use crate::driver::{Client, ConnectError};
use crate::sql::{Dialect, TOPIC_DROPPED, UNKNOWN_TOPIC};

/// Why a dictionary call failed (the same for every database).
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
    /// The server a `mysql://` URL names did not greet as MySQL ([`ErrorKind::NotMysql`]).
    NotMysql {
        /// `host:port`.
        server: String,
        /// What it did instead.
        reason: String,
    },
    /// The database failed (connection, or another error of the server): the driver's error,
    /// shown with the server's or the system's own message.
    Database(Box<dyn std::error::Error + Send + Sync>),
    /// The database could not be reached: no connection was opened
    /// ([`ErrorKind::DatabaseUnreachable`], as every client's; the source is the driver's own
    /// error).
    Unreachable(Box<dyn std::error::Error + Send + Sync>),
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
            Self::Unreachable(_) => Some(ErrorKind::DatabaseUnreachable),
            Self::Database(_) => None,
        }
    }

    fn invalid(e: Invalid, argument: String) -> Self {
        Self::InvalidArgument {
            argument,
            reason: e.reason().to_string(),
        }
    }

    fn of_connect<C: Client>(e: ConnectError<C::Error>) -> Self {
        match e {
            ConnectError::Url(reason) => Self::InvalidArgument {
                argument: C::URL_ARGUMENT.into(),
                reason,
            },
            ConnectError::NotMysql { server, reason } => Self::NotMysql { server, reason },
            ConnectError::Driver(e) => Self::Unreachable(C::boxed(e)),
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
                ErrorKind::UnknownTopic.render(f, |name, f| match name {
                    // The call that creates it, in Rust.
                    "create" => f.write_str("Dictionary::create"),
                    _ => f.write_str(topic),
                })
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
            Self::Unreachable(e) => {
                ErrorKind::DatabaseUnreachable.render(f, |_, f| write!(f, "{e}"))
            }
        }
    }
}

impl std::error::Error for DictionaryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Database(e) | Self::Unreachable(e) => Some(&**e),
            _ => None,
        }
    }
}

/// Why one step on the connection failed.
pub(crate) enum Failed<E> {
    /// The driver's error (the driver tells a lost connection, an unknown or dropped topic
    /// from it).
    Driver(E),
    /// The topic does not exist.
    #[cfg_attr(not(any(feature = "mysql", feature = "sqlite")), allow(dead_code))]
    UnknownTopic,
    /// The topic was dropped.
    #[cfg_attr(not(any(feature = "mysql", feature = "sqlite")), allow(dead_code))]
    TopicDropped,
    /// The server's answer did not match the batch.
    Mismatch,
}

impl<E> Failed<E> {
    /// A writer protocol's [`Failure`](super::protocol::Failure) as the executor reports it:
    /// `met`, the last driver error it fed, for [`Failure::Driver`](super::protocol::Failure::Driver).
    #[cfg(any(feature = "mysql", feature = "sqlite"))]
    pub(crate) fn of(failure: super::protocol::Failure, met: Option<E>) -> Self {
        use super::protocol::Failure;
        match failure {
            Failure::UnknownTopic => Self::UnknownTopic,
            Failure::TopicDropped => Self::TopicDropped,
            Failure::Driver => met.map_or(Self::Mismatch, Self::Driver),
            _ => Self::Mismatch,
        }
    }
}

impl<E> From<E> for Failed<E> {
    fn from(e: E) -> Self {
        Self::Driver(e)
    }
}

/// The answer to a batch of `values`: each value's from `answers` (what was found at first,
/// in order), else the ID it was given in the write (`missing[i]` got `written[i]`): the last
/// step of the MySQL family's and SQLite's writers, which insert the missing strings
/// themselves.
#[cfg_attr(not(any(feature = "mysql", feature = "sqlite")), allow(dead_code))]
pub(crate) fn answered(
    values: &[&str],
    answers: &[Option<u64>],
    missing: &[&str],
    written: Vec<Option<u64>>,
) -> Vec<Option<u64>> {
    let by_value: HashMap<&str, Option<u64>> = missing.iter().copied().zip(written).collect();
    values
        .iter()
        .zip(answers)
        .map(|(v, a)| a.or_else(|| by_value.get(v).copied().flatten()))
        .collect()
}

/// The answers to a batch of `keys`, in order, from a lookup whose rows are the topic's own
/// row (there while the topic is, whatever matched) and one per key found, each read as
/// `Some((key, answer))` (`None`: the topic's row); [`Failed::UnknownTopic`] for no row at
/// all. The MySQL family's and SQLite's lookups of strings and of IDs answer so (a join from
/// the topic's row), where PostgreSQL's functions answer in order themselves.
#[cfg_attr(not(any(feature = "mysql", feature = "sqlite")), allow(dead_code))]
pub(crate) fn in_order<'k, Q, K, A, E>(
    keys: impl IntoIterator<Item = &'k Q>,
    rows: impl IntoIterator<Item = Result<Option<(K, A)>, Failed<E>>>,
) -> Result<Vec<Option<A>>, Failed<E>>
where
    Q: Eq + Hash + ?Sized + 'k,
    K: Eq + Hash + Borrow<Q>,
    A: Clone,
{
    let mut topic = false;
    let mut found = HashMap::new();
    for row in rows {
        topic = true;
        if let Some((key, answer)) = row? {
            found.insert(key, answer);
        }
    }
    if !topic {
        return Err(Failed::UnknownTopic);
    }
    Ok(keys.into_iter().map(|k| found.get(k).cloned()).collect())
}

/// What a database's dictionary needs besides its [`Client`]: the steps of each call, each
/// safe to send again on a new connection.
pub(crate) trait DictionaryClient: Client {
    /// The statements of one schema (or what renders them).
    type Statements: Send + Sync + 'static;
    /// The most strings or IDs one step takes.
    const CHUNK: usize;

    /// The statements of `schema`; the reason it is not a valid name.
    fn statements(schema: &str) -> Result<Self::Statements, String>;

    /// Creates `topic` (IDs from 0) if it does not exist; [`Failed::TopicDropped`] for a
    /// dropped name.
    fn create(
        &mut self,
        s: &Self::Statements,
        dialect: Dialect,
        topic: &str,
    ) -> Result<(), Failed<Self::Error>>;

    /// Drops `topic`.
    fn drop_topic(
        &mut self,
        s: &Self::Statements,
        dialect: Dialect,
        topic: &str,
    ) -> Result<(), Failed<Self::Error>>;

    /// The IDs of `values` (`None`: not assigned), assigning the new ones when `assign` and
    /// the database does so in the same step.
    fn find(
        &mut self,
        s: &Self::Statements,
        dialect: Dialect,
        topic: &str,
        values: &[&str],
        assign: bool,
    ) -> Result<Vec<Option<u64>>, Failed<Self::Error>>;

    /// Assigns IDs to the strings of `values` whose `answers` are `None`: all the answers.
    fn assign(
        &mut self,
        s: &Self::Statements,
        dialect: Dialect,
        topic: &str,
        values: &[&str],
        answers: &[Option<u64>],
    ) -> Result<Vec<Option<u64>>, Failed<Self::Error>>;

    /// The strings of `ids` (`None`: never assigned).
    fn values(
        &mut self,
        s: &Self::Statements,
        dialect: Dialect,
        topic: &str,
        ids: &[u64],
    ) -> Result<Vec<Option<String>>, Failed<Self::Error>>;
}

/// The dictionary of one topic over the connections of `C`: what each database's `Dictionary`
/// wraps.
pub(crate) struct Driver<C: DictionaryClient> {
    topic: String,
    server: usize,
    url: String,
    statements: C::Statements,
    client: Mutex<Option<(C, Dialect)>>,
    cache: Cache,
}

impl<C: DictionaryClient> fmt::Debug for Driver<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("topic", &self.topic)
            .field("server", &self.server)
            .field("cached", &self.cache.len())
            .finish_non_exhaustive()
    }
}

/// The connection closed through [`Client::close`], not dropped: the `postgres` crate's client
/// blocks on its own runtime when dropped, which panics on a tokio runtime's thread (a
/// dictionary dropped at the end of an async `main` or handler); its `close` runs off it.
impl<C: DictionaryClient> Drop for Driver<C> {
    fn drop(&mut self) {
        let client = self
            .client
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((conn, _)) = client.take() {
            conn.close();
        }
    }
}

impl<C: DictionaryClient> Driver<C> {
    /// The dictionary of `topic` in `schema`, on the server of `servers` that [`server_for`]
    /// names; connects at once.
    pub(crate) fn connect<S: AsRef<str>>(
        servers: &[S],
        topic: &str,
        schema: &str,
        cache: usize,
    ) -> Result<Self, DictionaryError> {
        check_topic(topic).map_err(|e| DictionaryError::invalid(e, "topic".into()))?;
        let statements =
            C::statements(schema).map_err(|reason| DictionaryError::InvalidArgument {
                argument: "schema".into(),
                reason,
            })?;
        if servers.is_empty() {
            return Err(DictionaryError::InvalidArgument {
                argument: "servers".into(),
                reason: "must hold at least one URL".into(),
            });
        }
        // Every URL of the list by the one rule, not only the topic's: a list that is wrong is
        // wrong for every topic.
        for url in servers {
            if let Some(reason) = C::url_problem(url.as_ref()) {
                return Err(DictionaryError::InvalidArgument {
                    argument: "servers".into(),
                    reason,
                });
            }
        }
        let server = server_for(topic, u32::try_from(servers.len()).unwrap_or(u32::MAX)) as usize;
        let this = Self {
            topic: topic.into(),
            server,
            url: servers[server].as_ref().into(),
            statements,
            client: Mutex::new(None),
            cache: Cache::new(cache),
        };
        *this.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(this.open()?);
        Ok(this)
    }

    fn open(&self) -> Result<(C, Dialect), DictionaryError> {
        let mut conn = C::connect(&self.url).map_err(DictionaryError::of_connect::<C>)?;
        let dialect = conn
            .detect()
            .map_err(|e| DictionaryError::Database(C::boxed(e)))?;
        Ok((conn, dialect))
    }

    pub(crate) fn topic(&self) -> &str {
        &self.topic
    }

    pub(crate) const fn server(&self) -> usize {
        self.server
    }

    pub(crate) const fn cache(&self) -> &Cache {
        &self.cache
    }

    pub(crate) fn stats(&self) -> crate::stats::DictionaryStats {
        self.cache.stats()
    }

    /// Runs `step` on the connection; a lost connection is reopened and the step sent once
    /// more (every step is safe to repeat: a transaction the server lost rolled back whole).
    fn run<T>(
        &self,
        mut step: impl FnMut(&mut C, &C::Statements, Dialect) -> Result<T, Failed<C::Error>>,
    ) -> Result<T, DictionaryError> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        for attempt in 1..=2 {
            if client.as_ref().is_none_or(|(conn, _)| conn.is_closed()) {
                // Closed, not dropped: a driver's drop may block (see `Drop` below).
                if let Some((lost, _)) = client.take() {
                    lost.close();
                }
                *client = Some(self.open()?);
            }
            let Some((conn, dialect)) = client.as_mut() else {
                unreachable!("connected above")
            };
            self.cache.sent(attempt == 2);
            let e = match step(conn, &self.statements, *dialect) {
                Ok(answer) => return Ok(answer),
                Err(Failed::UnknownTopic) => return Err(self.unknown()),
                Err(Failed::TopicDropped) => return Err(self.dropped()),
                Err(Failed::Mismatch) => return Err(DictionaryError::Mismatch),
                Err(Failed::Driver(e)) => e,
            };
            match C::code(&e).as_deref() {
                Some(UNKNOWN_TOPIC) => return Err(self.unknown()),
                Some(TOPIC_DROPPED) => return Err(self.dropped()),
                _ => {}
            }
            if attempt == 2 || !(C::broken(&e) || conn.is_closed()) {
                return Err(DictionaryError::Database(C::boxed(e)));
            }
            if let Some((lost, _)) = client.take() {
                lost.close();
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

    pub(crate) fn create(&self) -> Result<(), DictionaryError> {
        self.run(|conn, s, dialect| conn.create(s, dialect, &self.topic))
    }

    pub(crate) fn drop_topic(&self) -> Result<(), DictionaryError> {
        self.run(|conn, s, dialect| conn.drop_topic(s, dialect, &self.topic))
    }

    pub(crate) fn id(&self, value: &str) -> Result<u64, DictionaryError> {
        if let Some(id) = self.cache.id(value) {
            return Ok(id);
        }
        Ok(self.ids(&[value])?[0])
    }

    pub(crate) fn ids<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<u64>, DictionaryError> {
        self.strings(values, true)?
            .into_iter()
            .map(|id| id.ok_or(DictionaryError::Mismatch))
            .collect()
    }

    pub(crate) fn lookup<S: AsRef<str>>(
        &self,
        values: &[S],
    ) -> Result<Vec<Option<u64>>, DictionaryError> {
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
        for chunk in misses.chunks(C::CHUNK) {
            let mut found =
                self.run(|conn, s, dialect| conn.find(s, dialect, &self.topic, chunk, assign))?;
            if assign && found.contains(&None) {
                found = self
                    .run(|conn, s, dialect| conn.assign(s, dialect, &self.topic, chunk, &found))?;
            }
            answers.extend(found);
        }
        self.cache
            .complete_ids(values, &mut ids, &misses, &answers)
            .map_err(|_| DictionaryError::Mismatch)?;
        Ok(ids)
    }

    pub(crate) fn value(&self, id: u64) -> Result<Option<Arc<str>>, DictionaryError> {
        if let Some(value) = self.cache.value(id) {
            return Ok(Some(value));
        }
        Ok(self.values(&[id])?.pop().flatten())
    }

    pub(crate) fn values(&self, ids: &[u64]) -> Result<Vec<Option<Arc<str>>>, DictionaryError> {
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
        for chunk in misses.chunks(C::CHUNK) {
            answers
                .extend(self.run(|conn, s, dialect| conn.values(s, dialect, &self.topic, chunk))?);
        }
        self.cache
            .complete_values(ids, &mut values, &misses, &answers)
            .map_err(|_| DictionaryError::Mismatch)?;
        Ok(values)
    }
}

/// The public type `Dictionary` of a database's module, wrapping a [`Driver`] (`self.0`): its
/// `connect` and these methods.
macro_rules! dictionary_methods {
    ($name:ident, $client:ty, $what:literal, $servers:literal, $errors:literal) => {
        #[doc = concat!(
            "The dictionary of one topic ", $what,
            ". `Sync`: share one per topic; cached calls never lock the connection."
        )]
        pub struct $name(Driver<$client>);

        impl $name {
            #[doc = concat!(
                "The dictionary of `topic` in `schema`, on the server of `servers` (", $servers,
                ") that [`super::server_for`] names; connects at once. `cache` entries are kept ",
                "each way.\n\n# Errors\n[`DictionaryError::InvalidArgument`] for a bad topic, ",
                "schema, URL or empty list; ", $errors
            )]
            pub fn connect<S: AsRef<str>>(
                servers: &[S],
                topic: &str,
                schema: &str,
                cache: usize,
            ) -> Result<Self, DictionaryError> {
                Driver::connect(servers, topic, schema, cache).map(Self)
            }
        }

        dictionary_methods!($name);
    };
    ($name:ident) => {
        impl $name {
            /// The topic.
            pub fn topic(&self) -> &str {
                self.0.topic()
            }

            /// The index in the list of the server that holds the topic.
            pub const fn server(&self) -> usize {
                self.0.server()
            }

            /// The cache (both ways).
            pub const fn cache(&self) -> &super::Cache {
                self.0.cache()
            }

            /// What this dictionary did: hits and misses of its cache both ways, statements
            /// sent and sent again ([`crate::stats::DictionaryStats`], the names of Python's
            /// and Node's `stats()`).
            pub fn stats(&self) -> crate::stats::DictionaryStats {
                self.0.stats()
            }

            /// Creates the topic (IDs from 0) if it does not exist.
            ///
            /// # Errors
            /// [`DictionaryError::TopicDropped`] for a dropped name,
            /// [`DictionaryError::Database`].
            pub fn create(&self) -> Result<(), DictionaryError> {
                self.0.create()
            }

            /// Drops the topic: its strings stay readable, nothing new is assigned, its name
            /// is never used again.
            ///
            /// # Errors
            /// [`DictionaryError::UnknownTopic`], [`DictionaryError::Database`].
            pub fn drop_topic(&self) -> Result<(), DictionaryError> {
                self.0.drop_topic()
            }

            /// The ID of `value`, assigned (the topic's next) if it is new.
            ///
            /// # Errors
            /// As the `ids` method.
            pub fn id(&self, value: &str) -> Result<u64, DictionaryError> {
                self.0.id(value)
            }

            /// The IDs of `values`, in order; new strings get the topic's next IDs in the
            /// order they first appear. One round trip for every string not cached (per
            /// chunk of the database's most parameters).
            ///
            /// # Errors
            /// [`DictionaryError::InvalidArgument`] (`values[i]`),
            /// [`DictionaryError::UnknownTopic`], [`DictionaryError::TopicDropped`] (a new
            /// string), [`DictionaryError::Database`].
            pub fn ids<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<u64>, DictionaryError> {
                self.0.ids(values)
            }

            /// The IDs of `values`, `None` for a string never assigned: never assigns.
            ///
            /// # Errors
            /// As the `ids` method (but never `TopicDropped`).
            pub fn lookup<S: AsRef<str>>(
                &self,
                values: &[S],
            ) -> Result<Vec<Option<u64>>, DictionaryError> {
                self.0.lookup(values)
            }

            /// The string of `id`, `None` if the topic never assigned it.
            ///
            /// # Errors
            /// As the `values` method.
            pub fn value(&self, id: u64) -> Result<Option<Arc<str>>, DictionaryError> {
                self.0.value(id)
            }

            /// The strings of `ids`, in order, `None` for an ID never assigned.
            ///
            /// # Errors
            /// [`DictionaryError::InvalidArgument`] (`ids[i]` above 2^63 - 1),
            /// [`DictionaryError::UnknownTopic`], [`DictionaryError::Database`].
            pub fn values(&self, ids: &[u64]) -> Result<Vec<Option<Arc<str>>>, DictionaryError> {
                self.0.values(ids)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

pub(crate) use dictionary_methods;

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::{Failed, in_order};

    type Rows = Vec<Result<Option<(u64, &'static str)>, Failed<()>>>;

    #[test]
    fn answers_come_in_the_keys_order_and_no_row_at_all_is_an_unknown_topic() {
        // The topic's row, then the keys found, in the server's order.
        let rows: Rows = vec![Ok(None), Ok(Some((7, "b"))), Ok(Some((3, "a")))];
        let answers = in_order(&[3, 5, 7, 3], rows).ok().unwrap();
        assert_eq!(answers, [Some("a"), None, Some("b"), Some("a")]);
        // The topic's row alone: no key found.
        let rows: Rows = vec![Ok(None)];
        assert_eq!(in_order(&[1, 2], rows).ok().unwrap(), [None, None]);
        // No row: no topic, even for an empty batch.
        assert!(matches!(
            in_order::<u64, u64, &str, ()>(&[1], vec![]),
            Err(Failed::UnknownTopic)
        ));
        assert!(matches!(
            in_order::<u64, u64, &str, ()>(&[], vec![]),
            Err(Failed::UnknownTopic)
        ));
        // A row the client could not read is its error.
        let rows: Rows = vec![Ok(None), Err(Failed::Mismatch)];
        assert!(matches!(in_order(&[1], rows), Err(Failed::Mismatch)));
    }
}
