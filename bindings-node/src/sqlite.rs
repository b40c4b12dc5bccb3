//! SQLite's SQL from the core (`shardid::sql::sqlite`), for `dialects/sqlite.js` to run with
//! better-sqlite3 (or `node:sqlite`): the file a `sqlite:///` URL names, what every connection
//! runs first, the DDL and the clients' statements (`?` placeholders), and the core's readings
//! of their answers (a take's row, why a take returned none, the dictionary's new numbers, a
//! serial's period tag). Nothing here is SQL of the binding's own.

use napi::{Env, Result};
use napi_derive::napi;
use shardid::sql::Placeholders;
use shardid::sql::sqlite::{
    ConnectionSetup, DEFAULT_BUSY_TIMEOUT_MS, MAX_LIST, SqliteDictionary, SqliteSegments,
};

use crate::errors::{Class, guard, invalid_argument};

/// The file a `sqlite:///relative.db` or `sqlite:////absolute.db` URL names (the core's
/// `usable_file`, the one reading of a URL every client opens its file by); `INVALID_ARGUMENT`
/// on `argument` for an in-memory database, a host, a query string, or a file on a network
/// filesystem, with the core's messages.
#[napi]
pub fn sqlite_path(env: &Env, url: String, argument: String) -> Result<String> {
    guard(env, || {
        shardid::sql::sqlite::usable_file(&url)
            .map(str::to_owned)
            .map_err(|why| invalid_argument(env, Class::Range, &argument, &why))
    })
}

/// What a driver runs on every new connection before anything else (the core's
/// `CONNECTION_SETUP`): the busy timeout (`null`: the core's default, 5 s), WAL mode,
/// `synchronous = FULL`.
#[napi]
pub fn sqlite_connection_setup(env: &Env, busy_timeout_ms: Option<u32>) -> Result<String> {
    guard(env, || {
        let ms = busy_timeout_ms.map_or(DEFAULT_BUSY_TIMEOUT_MS, u64::from);
        Ok(ConnectionSetup(ms).to_string())
    })
}

/// The segments' and serials' DDL and statements on SQLite, `?` placeholders.
#[napi(object)]
pub struct SqliteSegmentSql {
    /// The tables (tags and serial registrations), `CREATE ... IF NOT EXISTS`.
    pub ddl: String,
    /// `(size, tag)`: one row `(first, count, stride)`, or none (then `read`).
    pub take: String,
    /// `(tag)`: one row `(next, step, stride)`, or none: an unknown tag.
    pub read: String,
    /// `(first, end, tag)`: one row when given back.
    pub give_back: String,
    /// `(tag, first)`: one row when created, none when it was there.
    pub create_tag: String,
    /// `(tag)`: one row `(canonical, zone, max_gap, reset)` of a serial tag, or none.
    pub info: String,
}

/// The segment and serial statements of schema `schema` (`main`: the file itself).
#[napi]
pub fn sqlite_segment_sql(env: &Env, schema: String) -> Result<SqliteSegmentSql> {
    guard(env, || {
        let ddl =
            SqliteSegments::new(&schema).map_err(|e| crate::segment::schema_error(env, &e))?;
        let s = ddl.statements(Placeholders::Question);
        let serial = ddl.serial_statements(Placeholders::Question);
        Ok(SqliteSegmentSql {
            ddl: ddl.to_string(),
            take: s.take().to_string(),
            read: s.read().to_string(),
            give_back: s.give_back().to_string(),
            create_tag: s.create_tag().to_string(),
            info: serial.info().to_string(),
        })
    })
}

/// The registration of a serial tag whose format has `pieces` pieces; parameters `(tag,
/// format, zone, canonical, shape, pieces..., width, reset, max_gap)`.
#[napi]
pub fn sqlite_serial_create_sql(env: &Env, schema: String, pieces: u32) -> Result<String> {
    guard(env, || {
        let ddl =
            SqliteSegments::new(&schema).map_err(|e| crate::segment::schema_error(env, &e))?;
        Ok(ddl
            .serial_statements(Placeholders::Question)
            .create(pieces as usize)
            .to_string())
    })
}

/// The dictionary's DDL in schema `schema`.
#[napi]
pub fn sqlite_dictionary_ddl(env: &Env, schema: String) -> Result<String> {
    guard(env, || {
        SqliteDictionary::new(&schema)
            .map(|d| d.to_string())
            .map_err(|e| crate::segment::schema_error(env, &e))
    })
}

/// The longest list one dictionary statement takes: longer lists go in pieces.
#[napi]
pub fn sqlite_max_list(env: &Env) -> Result<u32> {
    guard(env, || Ok(u32::try_from(MAX_LIST).unwrap_or(u32::MAX)))
}

/// One statement of the dictionary in schema `schema` (`find`, `findValues`, `lock`,
/// `recheck`, `insert`, `advance`, `createTopic`, `dropTopic`, `state`), for `n` items where it
/// takes a list (at most `sqliteMaxList()`).
#[napi]
pub fn sqlite_dictionary_sql(env: &Env, schema: String, which: String, n: u32) -> Result<String> {
    guard(env, || {
        let s = SqliteDictionary::new(&schema)
            .map_err(|e| crate::segment::schema_error(env, &e))?
            .statements(Placeholders::Question);
        let n = n as usize;
        if n > MAX_LIST {
            return Err(invalid_argument(
                env,
                Class::Range,
                "n",
                "is more than one statement takes",
            ));
        }
        crate::mysql::dictionary_statement!(env, s, which, n)
    })
}

/// SQLite's writer numbering a dictionary's new strings (the core's
/// `shardid::dictionary::protocol::SqliteAssign`), for `dialects/sqlite.js` to run over
/// better-sqlite3 or `node:sqlite`: `BEGIN IMMEDIATE`, the topic's row, the re-check under the
/// write lock, the numbering, the inserts, the guarded advance, the commit and the rollback after
/// a failed step are the core's; the executor only runs them. `next()` is `'run'` (`sql` with
/// `values`, then `answer(rows)` or `failed()`, which answer the next step), `'assigned'` or
/// `'failed'` (`why`: `'driver'`, throw the error met; `'unknownTopic'`, `'topicDropped'`,
/// `'unusable'`).
#[napi]
pub struct SqliteAssign {
    inner: shardid::dictionary::protocol::SqliteAssign,
}

#[napi]
impl SqliteAssign {
    /// The writer numbering `missing` (distinct strings) of `topic` in `schema`.
    #[napi(constructor)]
    pub fn new(env: &Env, schema: String, topic: String, missing: Vec<String>) -> Result<Self> {
        guard(env, || {
            let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
            let inner = shardid::dictionary::protocol::SqliteAssign::new(
                &schema,
                Placeholders::Question,
                &topic,
                &missing,
            )
            .map_err(|e| crate::segment::schema_error(env, &e))?;
            Ok(Self { inner })
        })
    }

    /// What to do next.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<crate::step::AssignStep> {
        guard(env, || Ok(self.inner.next().into()))
    }

    /// Every row the step returned, each column as text (`null`: SQL NULL); the next step (one
    /// call where two would cross into the addon: each crossing costs about as much as a short
    /// statement's work here).
    #[napi]
    #[allow(clippy::needless_pass_by_value)] // napi hands arrays over as a Vec
    pub fn answer(
        &mut self,
        env: &Env,
        rows: Vec<Vec<Option<String>>>,
    ) -> Result<crate::step::AssignStep> {
        guard(env, || {
            crate::step::answer_rows(&rows, |cells| self.inner.answer(cells));
            Ok(self.inner.next().into())
        })
    }

    /// The step failed (its error is the executor's to throw); the next step.
    #[napi]
    pub fn failed(&mut self, env: &Env) -> Result<crate::step::AssignStep> {
        guard(env, || {
            self.inner.failed();
            Ok(self.inner.next().into())
        })
    }
}
