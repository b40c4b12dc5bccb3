//! The MySQL family's SQL from the core (`shardid::sql::mysql`), for `shardid/mysql`,
//! `segments.js` and `dictionary.js` to run with mysql2: the DDL, the clients' statements (`?`
//! placeholders), the steps of a segment fetch, the numbering of new strings, and the reading of
//! a `mysql://` URL.

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;
use shardid::sql::mysql::{MysqlSerials, MysqlUrl, script_statements};
use shardid::sql::{Dialect, MysqlDictionary, MysqlSegments, Placeholders};

use crate::errors::{Class, guard, invalid_argument};
use crate::segment::sql_error;

/// The MySQL family's dialect named `name` (`null`: MySQL's, which MariaDB runs too).
fn dialect(env: &Env, name: Option<&str>) -> Result<Dialect> {
    match name.map_or(Some(Dialect::Mysql), Dialect::from_name) {
        Some(d) if d.is_mysql() => Ok(d),
        _ => Err(invalid_argument(
            env,
            Class::Range,
            "dialect",
            "must be 'mysql' or 'mariadb'",
        )),
    }
}

/// The DDL of `<database>.next_id()` and the decoding functions for a layout and shard on
/// MySQL 8 or MariaDB (the core's `shardid::sql::Mysql`), for `ddl()` of `shardid/mysql`.
#[napi]
pub fn mysql_ddl(
    env: &Env,
    layout_index: u32,
    shard: Unknown<'_>,
    schema: String,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
    dialect_name: Option<String>,
) -> Result<String> {
    guard(env, || {
        crate::postgres::next_id_ddl(
            env,
            layout_index,
            &shard,
            &schema,
            backwards_tolerance_ms,
            max_borrow_units,
            || dialect(env, dialect_name.as_deref()),
        )
    })
}

/// The DDL of segments on MySQL in database `schema`, for ticket server `index` of `servers`.
#[napi]
pub fn mysql_segments_ddl(
    env: &Env,
    schema: String,
    servers: u32,
    index: u32,
    dialect_name: Option<String>,
) -> Result<String> {
    guard(env, || {
        let dialect = dialect(env, dialect_name.as_deref())?;
        MysqlSegments::new(&schema)
            .and_then(|ddl| ddl.ticket_server(u64::from(servers), u64::from(index)))
            .map(|ddl| ddl.dialect(dialect).to_string())
            .map_err(|e| sql_error(env, e))
    })
}

/// The DDL of the dictionary on MySQL in database `schema`.
#[napi]
pub fn mysql_dictionary_ddl(
    env: &Env,
    schema: String,
    dialect_name: Option<String>,
) -> Result<String> {
    guard(env, || {
        let dialect = dialect(env, dialect_name.as_deref())?;
        MysqlDictionary::new(&schema)
            .map(|ddl| ddl.dialect(dialect).to_string())
            .map_err(|e| sql_error(env, e))
    })
}

/// The statements of a MySQL script, for a driver to send one at a time.
#[napi]
pub fn mysql_statements(env: &Env, script: String) -> Result<Vec<String>> {
    guard(env, || {
        Ok(script_statements(&script).map(String::from).collect())
    })
}

/// The statements a MySQL segment client sends, `?` placeholders.
#[napi(object)]
pub struct MysqlSegmentSql {
    /// `(tag)`: one row `(step, stride, largest)`.
    pub read: String,
    /// `(size, size, size, tag, size, size)`: `insertId` the first ID, `affectedRows` 1 (0:
    /// refused, read the row).
    pub take: String,
    /// `(first, tag, end, first, first)`: `affectedRows` 1 when given back.
    pub give_back: String,
    /// `(tag)`: one boolean, whether the tag was created (false: it was there).
    pub create_tag: String,
}

/// The segment statements of database `schema`, for a server of `dialect` (`'mysql'` or
/// `'mariadb'`).
#[napi]
pub fn mysql_segment_sql(
    env: &Env,
    schema: String,
    dialect_name: Option<String>,
) -> Result<MysqlSegmentSql> {
    guard(env, || {
        let dialect = dialect(env, dialect_name.as_deref())?;
        let s = MysqlSegments::new(&schema)
            .map_err(|e| sql_error(env, e))?
            .dialect(dialect)
            .statements(Placeholders::Question);
        Ok(MysqlSegmentSql {
            read: s.read().to_string(),
            take: s.take().to_string(),
            give_back: s.give_back().to_string(),
            create_tag: s.create_tag().to_string(),
        })
    })
}

/// The DDL of serial numbers' registrations on MySQL in database `schema` (the core's
/// `MysqlSerials`), to run after the segments' DDL.
#[napi]
pub fn mysql_serials_ddl(env: &Env, schema: String) -> Result<String> {
    guard(env, || {
        MysqlSerials::new(&schema)
            .map(|ddl| ddl.to_string())
            .map_err(|e| sql_error(env, e))
    })
}

/// The statements a MySQL serial client sends besides the segments' (`?` placeholders): a
/// period's numbers are taken and given back by the segments' steps on its own tag.
#[napi(object)]
pub struct MysqlSerialSql {
    /// `(tag)`: one row `(canonical, zone, max_gap)`, or none.
    pub info: String,
    /// `(tag, format, zone, canonical, shape, pieces, width, reset, max_gap)`, `pieces` one per
    /// line: `affectedRows` 0 when the tag or its shape was registered already.
    pub register: String,
    /// `(tag, shape)`: rows `(tag, canonical, zone)`, what stands in a registration's way.
    pub registered: String,
    /// `(tag, period tag)`: one value, whether the period's tag was created (`NULL`: the
    /// serial tag is not registered).
    pub create_period: String,
}

/// The serial statements of database `schema` (any server of the family renders them alike).
#[napi]
pub fn mysql_serial_sql(env: &Env, schema: String) -> Result<MysqlSerialSql> {
    guard(env, || {
        let s = MysqlSerials::new(&schema)
            .map_err(|e| sql_error(env, e))?
            .statements(Placeholders::Question);
        Ok(MysqlSerialSql {
            info: s.info().to_string(),
            register: s.register().to_string(),
            registered: s.registered().to_string(),
            create_period: s.create_period().to_string(),
        })
    })
}

/// One of the dictionary's statements (the MySQL family's or SQLite's, which have the same
/// steps), by the name `dictionary.js` asks for it with, as text; `INVALID_ARGUMENT` on
/// `which` for another name. Written once for both dialects' `*DictionarySql`.
macro_rules! dictionary_statement {
    ($env:expr, $statements:expr, $which:expr, $n:expr) => {{
        let (s, n) = (&$statements, $n);
        match $which.as_str() {
            "find" => Some(s.find(n).to_string()),
            "findValues" => Some(s.find_values(n).to_string()),
            "lock" => Some(s.lock().to_string()),
            "recheck" => Some(s.recheck(n).to_string()),
            "insert" => Some(s.insert(n).to_string()),
            "advance" => Some(s.advance().to_string()),
            "createTopic" => Some(s.create_topic().to_string()),
            "dropTopic" => Some(s.drop_topic().to_string()),
            "state" => Some(s.state().to_string()),
            _ => None,
        }
        .ok_or_else(|| {
            $crate::errors::invalid_argument(
                $env,
                $crate::errors::Class::Range,
                "which",
                "is not a statement",
            )
        })
    }};
}
pub(crate) use dictionary_statement;

/// One statement of the dictionary in database `schema` (`find`, `findValues`, `lock`,
/// `recheck`, `insert`, `advance`, `createTopic`, `dropTopic`, `state`), for `n` items where it
/// takes a list.
#[napi]
pub fn mysql_dictionary_sql(
    env: &Env,
    schema: String,
    which: String,
    n: u32,
    dialect_name: Option<String>,
) -> Result<String> {
    guard(env, || {
        let dialect = dialect(env, dialect_name.as_deref())?;
        let s = MysqlDictionary::new(&schema)
            .map_err(|e| sql_error(env, e))?
            .dialect(dialect)
            .statements(Placeholders::Question);
        dictionary_statement!(env, s, which, n as usize)
    })
}

/// The statement a new connection sends to learn its server's dialect (the core's
/// `DETECT_DIALECT`).
#[napi]
pub fn mysql_detect_sql(env: &Env) -> Result<&'static str> {
    guard(env, || Ok(shardid::sql::mysql::DETECT_DIALECT))
}

/// The dialect of a server by its answer to [`mysql_detect_sql`] (the core's
/// `Dialect::detected`): `code` is the MySQL error number it refused the statement with, or
/// `null` when it answered; `null` back for an error that says nothing of the dialect (the
/// driver throws it).
#[napi]
pub fn mysql_detected(env: &Env, code: Option<i64>) -> Result<Option<&'static str>> {
    guard(env, || {
        let code = code.map(|code| code.to_string());
        Ok(Dialect::detected(code.as_deref()).map(Dialect::name))
    })
}

/// The core's transaction that numbers a dictionary's new strings on the MySQL family
/// (`shardid::dictionary::protocol::MysqlAssign`), for `dialects/mysql.js` to run over mysql2:
/// the lock, the locking re-check, the numbering, the insert, the move of the topic's next ID
/// and the run again of a transaction the server rolled back whole are the core's; the executor
/// only runs them.
#[napi]
pub struct MysqlAssign {
    inner: shardid::dictionary::protocol::MysqlAssign,
}

#[napi]
impl MysqlAssign {
    /// The transaction numbering `missing` (distinct strings) of `topic` on a server of
    /// `dialect` (`'mysql'`, `'mariadb'`) whose `schema` holds the DDL, `?` placeholders.
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        dialect: String,
        schema: String,
        topic: String,
        missing: Vec<String>,
    ) -> Result<Self> {
        guard(env, || {
            let dialect = self::dialect(env, Some(&dialect))?;
            let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
            let inner = shardid::dictionary::protocol::MysqlAssign::new(
                dialect,
                &schema,
                Placeholders::Question,
                &topic,
                &missing,
            )
            .map_err(|e| sql_error(env, e))?;
            Ok(Self { inner })
        })
    }

    /// What to do next.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<crate::step::AssignStep> {
        guard(env, || Ok(self.inner.next().into()))
    }

    /// Every row the step returned, each column as text (`null`: SQL NULL; none for the steps
    /// without rows).
    #[napi]
    #[allow(clippy::needless_pass_by_value)] // napi hands arrays over as a Vec
    pub fn answer(&mut self, env: &Env, rows: Vec<Vec<Option<String>>>) -> Result<()> {
        guard(env, || {
            crate::step::answer_rows(&rows, |cells| self.inner.answer(cells));
            Ok(())
        })
    }

    /// The step failed with mysql2's `errno` (`null`: none, a lost connection).
    #[napi]
    pub fn failed(&mut self, env: &Env, errno: Option<i64>) -> Result<()> {
        guard(env, || {
            let code = errno.map(|code| code.to_string());
            self.inner.failed(code.as_deref());
            Ok(())
        })
    }
}

/// A `mysql://` or `mariadb://` URL's parts, percent-decoded.
#[napi(object)]
pub struct MysqlUrlParts {
    pub user: String,
    pub password: Option<String>,
    pub host: String,
    pub port: u32,
    pub database: Option<String>,
}

/// Reads a URL as every shardid client does; `INVALID_ARGUMENT` on `url`.
#[napi]
pub fn mysql_url(env: &Env, url: String) -> Result<MysqlUrlParts> {
    guard(env, || {
        let u = MysqlUrl::parse(&url)
            .map_err(|reason| invalid_argument(env, Class::Range, "url", reason))?;
        Ok(MysqlUrlParts {
            user: u.user,
            password: u.password,
            host: u.host,
            port: u32::from(u.port),
            database: u.database,
        })
    })
}

/// The database a connection string names, by the core's one rule (`Dialect::of_url`):
/// `'postgres'`, `'mysql'`, `'mariadb'` or `'sqlite'`; any other scheme is `INVALID_ARGUMENT` on
/// `argument`, naming the schemes taken. Every client decides its driver by it.
#[napi]
pub fn database_of_url(env: &Env, url: String, argument: String) -> Result<&'static str> {
    guard(env, || {
        Dialect::of_url(&url)
            .map(Dialect::name)
            .map_err(|why| invalid_argument(env, Class::Range, &argument, &why.to_string()))
    })
}

/// A connection string as messages show it, by the core's one rule (`sql::url_shown`):
/// `host:port/database` only, never a user or a password.
#[napi]
pub fn url_shown(env: &Env, url: String) -> Result<String> {
    guard(env, || Ok(shardid::sql::url_shown(&url)))
}

/// `text` (a driver's words about a connection to `url`) without the password `url` holds, by
/// the core's rule (`sql::redacted`): every driver error about a connection passes through it
/// before a message shows it.
#[napi]
pub fn redacted(env: &Env, text: String, url: String) -> Result<String> {
    guard(env, || Ok(shardid::sql::redacted(&text, &url)))
}
