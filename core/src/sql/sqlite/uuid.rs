//! The UUIDv7 bridge ([`crate::uuid`]) in SQLite's SQL, for `rusqlite` connections (feature
//! `sqlite`). SQLite has no stored functions: a connection's own (application-defined)
//! functions are its way, so [`uuid_functions`] registers them on the application's connection,
//! with the MySQL family's names and results, as Python's `shardid.sqlite.uuid_functions` and
//! Node's `uuidFunctions` of `shardid/sqlite` do.

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use std::boxed::Box;
use std::string::ToString;

use crate::args::{Arg, Problem};
use crate::{Error, Layout};

/// The SQL functions [`uuid_functions`] registers: the ID's UUID as its 16 bytes (a `BLOB`,
/// which SQLite compares byte by byte, so a column of them sorts as the IDs do), as its text,
/// and the ID back from either. The MySQL family's names (`core/src/sql/mysql/next_id.rs`).
pub const UUID_FUNCTIONS: [&str; 3] = [
    "shardid_to_uuid",
    "shardid_to_uuid_text",
    "shardid_from_uuid",
];

/// The refusal of a `BLOB` that is not 16 bytes (Node's and Python's words).
const NOT_16_BYTES: &str = "must be 16 bytes";

/// Registers the UUIDv7 bridge of `layout` on `conn`: `shardid_to_uuid(id)` (16 bytes),
/// `shardid_to_uuid_text(id)` (the text) and `shardid_from_uuid(u)` (the ID, from the bytes or
/// the text), each the core's [`crate::uuid`]; `NULL` gives `NULL`; deterministic, so an index
/// may use them. A refusal (a UUID the bridge did not make, of another version or layout; an
/// ID outside the layout) fails the statement with the core's words
/// (`rusqlite::Error::SqliteFailure`, its message the [`Error`]'s), never a wrong ID.
///
/// # Errors
/// `rusqlite`'s, when SQLite refuses a registration.
pub fn uuid_functions(conn: &Connection, layout: Layout) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function(UUID_FUNCTIONS[0], 1, flags, move |ctx| {
        to_uuid(ctx, &layout).map(|u| u.map(|bytes| Value::Blob(bytes.to_vec())))
    })?;
    conn.create_scalar_function(UUID_FUNCTIONS[1], 1, flags, move |ctx| {
        to_uuid(ctx, &layout).map(|u| u.map(|bytes| crate::uuid::format(&bytes).to_string()))
    })?;
    conn.create_scalar_function(UUID_FUNCTIONS[2], 1, flags, move |ctx| {
        from_uuid(ctx, &layout)
    })
}

fn refused(e: Error) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(Box::new(e))
}

fn to_uuid(ctx: &Context<'_>, layout: &Layout) -> rusqlite::Result<Option<[u8; 16]>> {
    let id = match ctx.get_raw(0) {
        ValueRef::Null => return Ok(None),
        ValueRef::Integer(id) => u64::try_from(id).map_err(|_| {
            let reason = Problem::Negative.reason(Arg::Id);
            rusqlite::Error::UserFunctionError(std::format!("id {id} {reason}").into())
        })?,
        _ => {
            let reason = "must be an INTEGER";
            return Err(refused(Error::InvalidArgument {
                argument: "id",
                reason,
            }));
        }
    };
    crate::uuid::to_uuid(layout, id).map(Some).map_err(refused)
}

fn from_uuid(ctx: &Context<'_>, layout: &Layout) -> rusqlite::Result<Option<i64>> {
    let uuid = match ctx.get_raw(0) {
        ValueRef::Null => return Ok(None),
        ValueRef::Blob(bytes) => <[u8; 16]>::try_from(bytes).map_err(|_| {
            refused(Error::InvalidArgument {
                argument: crate::uuid::ARGUMENT,
                reason: NOT_16_BYTES,
            })
        })?,
        ValueRef::Text(text) => crate::uuid::parse_bytes(text).map_err(refused)?,
        _ => {
            let reason = "must be a BLOB of 16 bytes or TEXT";
            return Err(refused(Error::InvalidArgument {
                argument: crate::uuid::ARGUMENT,
                reason,
            }));
        }
    };
    let id = crate::uuid::from_uuid(Some(layout), &uuid).map_err(refused)?;
    // An ID past 2^63 - 1 (an unsigned layout's) is no SQLite INTEGER.
    let id = i64::try_from(id).map_err(|_| {
        let reason = "holds an ID past 2^63 - 1, which no SQLite INTEGER holds";
        refused(Error::InvalidArgument {
            argument: crate::uuid::ARGUMENT,
            reason,
        })
    })?;
    Ok(Some(id))
}

// SQLite itself runs here, C behind rusqlite's FFI, which Miri cannot call.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn connection(layout: Layout) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        uuid_functions(&conn, layout).unwrap();
        conn
    }

    /// The refusal of a statement: SQLite's failure, its message the core's words.
    fn refusal(conn: &Connection, sql: &str, value: impl rusqlite::ToSql) -> std::string::String {
        match conn.query_row(sql, [value], |row| row.get::<_, Value>(0)) {
            Err(rusqlite::Error::SqliteFailure(_, Some(message))) => message,
            other => panic!("{sql}: not refused: {other:?}"),
        }
    }

    /// Every case of uuid.json of a preset whose IDs SQLite's INTEGER holds (custom layouts:
    /// the Python and Node tests of the same functions), as text and as a BLOB.
    #[test]
    fn every_preset_vector_gives_the_librarys_bytes_text_id_or_refusal() {
        let file: serde_json::Value =
            serde_json::from_str(include_str!("../../../../tests/vectors/uuid.json")).unwrap();
        let mut checked = 0;
        for case in file["cases"].as_array().unwrap() {
            let Some(layout) = case["layout"].as_str().and_then(|n| Layout::preset(n).ok()) else {
                continue;
            };
            let conn = connection(layout);
            let expect = &case["expect"];
            let name = case["name"].as_str().unwrap();
            if case["op"] == "to_uuid" {
                let Ok(id) = case["args"]["id"].as_str().unwrap().parse::<i64>() else {
                    continue;
                };
                let text = conn.query_row("SELECT shardid_to_uuid_text(?1)", [id], |r| {
                    r.get::<_, std::string::String>(0)
                });
                let blob = conn.query_row("SELECT shardid_to_uuid(?1)", [id], |r| {
                    r.get::<_, Vec<u8>>(0)
                });
                match expect["ok"].as_str() {
                    Some(ok) => {
                        assert_eq!(text.unwrap(), ok, "{name}");
                        assert_eq!(
                            blob.unwrap(),
                            crate::uuid::parse(ok).unwrap().to_vec(),
                            "{name}"
                        );
                    }
                    None => assert!(text.is_err() && blob.is_err(), "{name}"),
                }
            } else {
                let uuid = case["args"]["uuid"].as_str().unwrap();
                if expect["ok"]
                    .as_str()
                    .is_some_and(|ok| ok.parse::<i64>().is_err())
                {
                    continue;
                }
                let mut forms = std::vec![rusqlite::types::Value::Text(uuid.into())];
                if let Ok(bytes) = crate::uuid::parse(uuid) {
                    forms.push(rusqlite::types::Value::Blob(bytes.to_vec()));
                }
                for form in forms {
                    match expect["ok"].as_str() {
                        Some(ok) => {
                            let id: i64 = conn
                                .query_row("SELECT shardid_from_uuid(?1)", [&form], |r| r.get(0))
                                .unwrap();
                            assert_eq!(id.to_string(), ok, "{name}");
                        }
                        None => assert_eq!(
                            refusal(&conn, "SELECT shardid_from_uuid(?1)", &form),
                            expect["message"].as_str().unwrap(),
                            "{name}"
                        ),
                    }
                }
            }
            checked += 1;
        }
        assert!(checked >= 40, "{checked}");
    }

    #[test]
    fn null_gives_null_and_what_the_bridge_did_not_make_is_refused() {
        let twitter = connection(Layout::TWITTER);
        let nulls: (Option<Vec<u8>>, Option<std::string::String>, Option<i64>) = twitter
            .query_row(
                "SELECT shardid_to_uuid(NULL), shardid_to_uuid_text(NULL), shardid_from_uuid(NULL)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(nulls, (None, None, None));
        let made: Vec<u8> = connection(Layout::INSTAGRAM)
            .query_row("SELECT shardid_to_uuid(?1)", [1_i64 << 40], |r| r.get(0))
            .unwrap();
        let sql = "SELECT shardid_from_uuid(?1)";
        assert_eq!(
            refusal(&twitter, sql, &made),
            "uuid was made for another layout"
        );
        assert_eq!(
            refusal(&twitter, sql, "0b7c6e2a-59d1-4c3e-9f1a-2d8e4b6a7c90"),
            "uuid is not a UUIDv7"
        );
        assert_eq!(refusal(&twitter, sql, &made[..15]), "uuid must be 16 bytes");
        assert_eq!(
            refusal(&twitter, "SELECT shardid_to_uuid(?1)", -1_i64),
            "id -1 is negative"
        );
    }

    #[test]
    fn blob_and_text_columns_sort_as_the_ids() {
        for layout in [
            Layout::INSTAGRAM,
            Layout::TWITTER,
            Layout::DISCORD,
            Layout::SONYFLAKE,
        ] {
            let conn = connection(layout);
            conn.execute_batch("CREATE TABLE t (id INTEGER, b BLOB, s TEXT)")
                .unwrap();
            // IDs of every millisecond step of a day, shards and sequences across their range.
            let ids: Vec<i64> = (0..2000_u64)
                .map(|i| {
                    let ms = layout.epoch_ms() + 86_400_000 * 365 * 5 + i * 43_201;
                    let id = layout.compose(
                        ms,
                        i % (layout.max_shard() + 1),
                        i % (layout.max_sequence() + 1),
                    );
                    i64::try_from(id.unwrap()).unwrap()
                })
                .collect();
            for id in ids.iter().rev() {
                conn.execute("INSERT INTO t (id) VALUES (?1)", [id])
                    .unwrap();
            }
            conn.execute_batch(
                "UPDATE t SET b = shardid_to_uuid(id), s = shardid_to_uuid_text(id)",
            )
            .unwrap();
            conn.execute_batch("CREATE INDEX t_b ON t (shardid_to_uuid(id))")
                .unwrap();
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            for order in ["b", "s"] {
                let mut statement = conn
                    .prepare(&std::format!("SELECT id FROM t ORDER BY {order}"))
                    .unwrap();
                let got: Vec<i64> = statement
                    .query_map([], |r| r.get(0))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                assert_eq!(got, sorted, "{order}");
            }
            let wrong: i64 = conn
                .query_row(
                    "SELECT count(*) FROM t WHERE shardid_from_uuid(b) <> id OR shardid_from_uuid(s) <> id",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(wrong, 0);
        }
    }
}
