//! The MySQL family's SQL from the core (`shardid::sql::mysql`), for `shardid/mysql`,
//! `segments.js` and `dictionary.js` to run with mysql2: the DDL, the clients' statements (`?`
//! placeholders), the steps of a segment fetch, the numbering of new strings, and the reading of
//! a `mysql://` URL.

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;
use shardid::args::Arg;
use shardid::sql::mysql::{
    FetchError, FetchStep, MysqlFetch, MysqlUrl, assign_new, script_statements,
};
use shardid::sql::{Mysql, MysqlDictionary, MysqlSegments, Placeholders, SqlError};

use crate::args::u64_arg;
use crate::errors::{Class, guard, invalid_argument};
use crate::layout::layout;

fn sql_error(env: &Env, e: SqlError) -> napi::Error {
    match e {
        SqlError::Core(core) => crate::errors::core_error(env, core),
        other => crate::segment::schema_error(env, &other),
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
) -> Result<String> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        let shard = u64_arg(env, &shard, "shard", Arg::Shard)?;
        let options = crate::args::options_arg(env, backwards_tolerance_ms, max_borrow_units)?;
        Mysql::new(layout, shard, &schema)
            .map(|ddl| ddl.options(options).to_string())
            .map_err(|e| sql_error(env, e))
    })
}

/// The DDL of segments on MySQL in database `schema`, for ticket server `index` of `servers`.
#[napi]
pub fn mysql_segments_ddl(env: &Env, schema: String, servers: u32, index: u32) -> Result<String> {
    guard(env, || {
        MysqlSegments::new(&schema)
            .and_then(|ddl| ddl.ticket_server(u64::from(servers), u64::from(index)))
            .map(|ddl| ddl.to_string())
            .map_err(|e| sql_error(env, e))
    })
}

/// The DDL of the dictionary on MySQL in database `schema`.
#[napi]
pub fn mysql_dictionary_ddl(env: &Env, schema: String) -> Result<String> {
    guard(env, || {
        MysqlDictionary::new(&schema)
            .map(|ddl| ddl.to_string())
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
    /// `(tag)`: one row `(step, stride)`.
    pub read: String,
    /// `(size, size, tag)`: `insertId` the first ID, `affectedRows` 1.
    pub take: String,
    /// `(first, tag, end, first, first)`: `affectedRows` 1 when given back.
    pub give_back: String,
}

/// The segment statements of database `schema`.
#[napi]
pub fn mysql_segment_sql(env: &Env, schema: String) -> Result<MysqlSegmentSql> {
    guard(env, || {
        let s = MysqlSegments::new(&schema)
            .map_err(|e| sql_error(env, e))?
            .statements(Placeholders::Question);
        Ok(MysqlSegmentSql {
            read: s.read().to_string(),
            take: s.take().to_string(),
            give_back: s.give_back().to_string(),
        })
    })
}

/// One step of a segment fetch (the core's `MysqlFetch`), as decimal strings: `size` the
/// size to take next (`null`: read the row first), `stride` the one learnt, or `sqlstate` of
/// why there is no segment (`SI001`: unknown tag); `first`, `count`, `stride` once taken.
#[napi(object)]
pub struct MysqlFetchState {
    pub size: Option<String>,
    pub stride: Option<String>,
    pub first: Option<String>,
    pub count: Option<String>,
    pub sqlstate: Option<String>,
}

fn parse(env: &Env, text: &str, argument: &str) -> Result<u64> {
    shardid::parse_decimal(text.as_bytes())
        .ok_or_else(|| invalid_argument(env, Class::Range, argument, "must be a decimal integer"))
}

fn state(fetch: &MysqlFetch, error: Option<FetchError>) -> MysqlFetchState {
    MysqlFetchState {
        size: match fetch.step() {
            FetchStep::Take { size } => Some(size.to_string()),
            FetchStep::Read => None,
        },
        stride: fetch.stride().map(|s| s.to_string()),
        first: None,
        count: None,
        sqlstate: error.map(|e| e.sqlstate().into()),
    }
}

fn fetch_of(env: &Env, size: &str, stride: Option<&str>) -> Result<MysqlFetch> {
    let size = parse(env, size, "size")?;
    let stride = stride.map(|s| parse(env, s, "stride")).transpose()?;
    Ok(MysqlFetch::new(size, stride))
}

/// A fetch of `size` (`"0"`: the remembered size) from a server whose stride is known or not.
#[napi]
pub fn mysql_fetch_start(
    env: &Env,
    size: String,
    stride: Option<String>,
) -> Result<MysqlFetchState> {
    guard(env, || {
        Ok(state(&fetch_of(env, &size, stride.as_deref())?, None))
    })
}

/// The row the read returned (`[step, stride]` as strings, or `null`).
#[napi]
pub fn mysql_fetch_read(
    env: &Env,
    size: String,
    row: Option<Vec<String>>,
) -> Result<MysqlFetchState> {
    guard(env, || {
        let mut fetch = fetch_of(env, &size, None)?;
        let row = match row.as_deref() {
            None => None,
            Some([step, stride]) => Some((
                step.parse::<i64>().unwrap_or(-1),
                stride.parse::<i64>().unwrap_or(-1),
            )),
            Some(_) => Some((-1, -1)),
        };
        let error = fetch.read(row).err();
        Ok(state(&fetch, error))
    })
}

/// The take's reply: its `affectedRows` and `insertId`.
#[napi]
pub fn mysql_fetch_took(
    env: &Env,
    size: String,
    stride: String,
    rows: u32,
    first: String,
) -> Result<MysqlFetchState> {
    guard(env, || {
        let fetch = fetch_of(env, &size, Some(&stride))?;
        let first = parse(env, &first, "first")?;
        Ok(match fetch.took(u64::from(rows), first) {
            Ok(segment) => MysqlFetchState {
                size: None,
                stride: Some(segment.stride.to_string()),
                first: Some(segment.first.to_string()),
                count: Some(segment.count.to_string()),
                sqlstate: None,
            },
            Err(e) => state(&fetch, Some(e)),
        })
    })
}

/// One statement of the dictionary in database `schema` (`find`, `findValues`, `lock`,
/// `recheck`, `insert`, `advance`, `createTopic`, `dropTopic`, `state`), for `n` items where it
/// takes a list.
#[napi]
pub fn mysql_dictionary_sql(env: &Env, schema: String, which: String, n: u32) -> Result<String> {
    guard(env, || {
        let s = MysqlDictionary::new(&schema)
            .map_err(|e| sql_error(env, e))?
            .statements(Placeholders::Question);
        let n = n as usize;
        let statement = match which.as_str() {
            "find" => s.find(n),
            "findValues" => s.find_values(n),
            "lock" => s.lock(),
            "recheck" => s.recheck(n),
            "insert" => s.insert(n),
            "advance" => s.advance(),
            "createTopic" => s.create_topic(),
            "dropTopic" => s.drop_topic(),
            "state" => s.state(),
            _ => {
                return Err(invalid_argument(
                    env,
                    Class::Range,
                    "which",
                    "is not a statement",
                ));
            }
        };
        Ok(statement.to_string())
    })
}

/// A new string's ID: its index among those looked for, and the ID (a decimal string).
#[napi(object)]
pub struct MysqlAssigned {
    pub index: u32,
    pub id: String,
}

/// The IDs of the strings still missing after the locked re-check (`missing[i]`), numbered
/// from `base` in order (the core's `assign_new`).
#[napi]
pub fn mysql_assign_new(env: &Env, missing: Vec<bool>, base: String) -> Result<Vec<MysqlAssigned>> {
    guard(env, || {
        let base = parse(env, &base, "base")?;
        let answers: Vec<Option<u64>> = missing
            .iter()
            .map(|&m| if m { None } else { Some(0) })
            .collect();
        Ok(assign_new(&answers, base)
            .map(|(i, id)| MysqlAssigned {
                index: u32::try_from(i).unwrap_or(u32::MAX),
                id: id.to_string(),
            })
            .collect())
    })
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
