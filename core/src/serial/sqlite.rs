//! The Rust client of business serial numbers on a SQLite file, over the `rusqlite` crate
//! (features `serial` and `sqlite`): the same driver as [`super::postgres`] and
//! [`super::mysql`]; what is SQLite's is here: the registrations in `shardid_serials` (made
//! with the segments' tables, on first use), and each period's segments taken from a tag of
//! its own (`orders@2026-11-25`, created from 1 at the period's first take) by the segments'
//! one-statement take, as [`crate::sql::sqlite`]'s serials say. SQLite has no tz database: the
//! zone is checked, and the period computed, by the core's bundled one, as on every database.
//!
//! ```no_run
//! use shardid::segment::SizePolicy;
//! use shardid::serial::sqlite::{Serials, create_serial};
//!
//! let url = "sqlite:///ids.db";
//! let format = "ORD-{yyyy}{MM}{dd}-{seq:6}";
//! create_serial(url, "orders", format, "Asia/Shanghai", "main", 1)?; // once
//! let orders = Serials::connect(url, "orders", format, "Asia/Shanghai", "main", SizePolicy::new())?;
//! let serial = orders.next_serial()?; // ORD-20261125-000001, ...
//! orders.close();
//! # Ok::<(), shardid::serial::sqlite::SerialsError>(())
//! ```

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use rusqlite::Connection;

pub use super::driver::SerialsError;
use super::driver::{Registering, SerialClient};
use super::{Parsed, Serial, SerialFormat};
use crate::driver::Client;
use crate::driver::sqlite::{no_such_table, with_tables};
use crate::segment::sqlite as segments;
use crate::sql::sqlite::SqliteSegments;
use crate::sql::{Dialect, Value};

/// The statements of one schema: the registrations' and the segments'.
pub(crate) struct Statements {
    schema: String,
    segments: segments::Statements,
    info: String,
}

impl Statements {
    fn ddl(&self) -> SqliteSegments<'_> {
        SqliteSegments::new(&self.schema)
            .unwrap_or_else(|_| unreachable!("checked in statements()"))
    }
}

/// A registration's row `(canonical, zone, max_gap, reset)`.
fn info(
    conn: &mut Connection,
    s: &Statements,
    tag: &str,
) -> Result<Option<Vec<crate::driver::Owned>>, rusqlite::Error> {
    with_tables(conn, &s.segments.ddl, no_such_table, |conn| {
        conn.run(&s.info, &[Value::Text(tag)])
    })
}

impl SerialClient for Connection {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        let ddl = SqliteSegments::new(schema).map_err(|e| e.to_string())?;
        Ok(Statements {
            schema: schema.into(),
            segments: segments::Statements::new(schema)?,
            info: ddl.serial_statements(Self::PLACEHOLDERS).info().to_string(),
        })
    }

    fn segments(s: &Statements) -> &segments::Statements {
        &s.segments
    }

    /// Inserts the registration if the tag has none, then compares what the tag is
    /// registered with; a format another tag prints is the unique shape's refusal.
    fn create(
        &mut self,
        s: &Statements,
        _: Dialect,
        reg: &Registering<'_>,
    ) -> Result<Option<String>, rusqlite::Error> {
        let r = &reg.columns;
        let sql = s
            .ddl()
            .serial_statements(Self::PLACEHOLDERS)
            .create(r.pieces.len())
            .to_string();
        let mut params = std::vec![
            Value::Text(reg.tag),
            Value::Text(reg.format),
            Value::Text(reg.zone),
            Value::Text(&r.canonical),
            Value::Text(&r.shape),
        ];
        params.extend(r.pieces.iter().map(|p| Value::Text(p)));
        params.extend([
            Value::Int(u64::try_from(r.width).unwrap_or(0)),
            Value::Text(r.reset),
            Value::Int(reg.max_gap.into()),
        ]);
        let registered = with_tables(self, &s.segments.ddl, no_such_table, |conn| {
            conn.run(&sql, &params)
        });
        match registered {
            Ok(_) => {}
            Err(e)
                if e.sqlite_error().is_some_and(|e| {
                    e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                }) =>
            {
                return Ok(Some(format!(
                    "has the format of another tag, which prints the same serials ({})",
                    Self::describe(&e)
                )));
            }
            Err(e) => return Err(e),
        }
        let row = info(self, s, reg.tag)?;
        Ok(match row.as_deref() {
            Some([canonical, registered_zone, ..]) => {
                let text = |o: &crate::driver::Owned| match o {
                    crate::driver::Owned::Text(t) => t.clone(),
                    _ => String::new(),
                };
                let (canonical, registered_zone) = (text(canonical), text(registered_zone));
                (canonical != r.canonical || registered_zone != reg.zone)
                    .then(|| format!("is registered as {canonical} in {registered_zone}"))
            }
            _ => Some("its registration could not be read back".into()),
        })
    }

    fn info(
        &mut self,
        s: &Statements,
        _: Dialect,
        tag: &str,
    ) -> Result<Option<(String, String, u64)>, rusqlite::Error> {
        // `(canonical, zone, max_gap)`; the reset, fourth, is the takes'.
        let row = info(self, s, tag)?.map(|mut row| {
            row.truncate(3);
            row
        });
        Ok(super::driver::registration_of(row))
    }

    fn give_back(
        &mut self,
        s: &Statements,
        _: Dialect,
        period_tag: &str,
        first: u64,
        end: u64,
    ) -> Result<bool, rusqlite::Error> {
        segments::give_back(self, &s.segments, period_tag, first, end)
    }
}

super::driver::serials_client!(
    Connection,
    "SQLite",
    "`sqlite:///relative.db` or `sqlite:////absolute.db`"
);

#[cfg(all(test, not(miri)))]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;
    use std::thread;

    use super::*;
    use crate::ErrorKind;
    use crate::driver::sqlite::TempDb;
    use crate::segment::SizePolicy;

    const FORMAT: &str = "ORD-{yyyy}{MM}{dd}-{seq:6}";
    const ZONE: &str = "Asia/Shanghai";
    /// 2026-11-25 23:59:59.900 in Shanghai (UTC+8), and a second later the next day.
    const BEFORE_MIDNIGHT: u64 = 1_795_622_399_900;

    #[test]
    fn sqlite_serials_register_once_and_never_repeat_across_connections_and_midnight() {
        let db = TempDb::new("serials");
        let url = db.url();
        let e = Serials::connect(&url, "orders", FORMAT, ZONE, "main", SizePolicy::new());
        assert_eq!(e.unwrap_err().kind(), ErrorKind::UnknownTag, "a new file");
        create_serial(&url, "orders", FORMAT, ZONE, "main", 1).unwrap();
        create_serial(&url, "orders", FORMAT, ZONE, "main", 1).unwrap(); // again: nothing
        let e = create_serial(&url, "orders", FORMAT, "UTC", "main", 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SerialMismatch, "{e}");
        let e = create_serial(&url, "refunds", FORMAT, ZONE, "main", 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SerialMismatch, "the same serials: {e}");
        let e = Serials::connect(&url, "orders", FORMAT, "UTC", "main", SizePolicy::new());
        assert_eq!(e.unwrap_err().kind(), ErrorKind::SerialMismatch);
        let tiny = SizePolicy::new().bounds(1, 3);
        let handles: Vec<_> = (0..3)
            .map(|_| {
                Arc::new(Serials::connect(&url, "orders", FORMAT, ZONE, "main", tiny).unwrap())
            })
            .collect();
        // 6 threads on 3 connections, a scripted clock crossing midnight in Shanghai.
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let serials = Arc::clone(&handles[t % 3]);
                thread::spawn(move || {
                    (0..60)
                        .map(|i| {
                            let at = BEFORE_MIDNIGHT + i * 4;
                            serials.next_serial_at(at).unwrap().to_string()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let all: Vec<String> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let distinct: BTreeSet<&String> = all.iter().collect();
        assert_eq!(distinct.len(), all.len(), "serials never twice");
        assert!(all.iter().any(|s| s.starts_with("ORD-20261125-")));
        assert!(
            all.iter().any(|s| s.starts_with("ORD-20261126-")),
            "past midnight"
        );
        let parsed = handles[0].parse("ORD-20261126-000001").unwrap();
        assert_eq!(parsed.number, 1);
        for h in &handles {
            h.close();
        }
    }

    #[test]
    fn sqlite_serials_bad_arguments_and_files_are_refused() {
        let db = TempDb::new("serials-bad");
        let url = db.url();
        let e = create_serial(&url, "a@b", FORMAT, ZONE, "main", 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = create_serial("postgresql://h/d", "t", FORMAT, ZONE, "main", 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = create_serial(&url, "t", FORMAT, "Mars/Base", "main", 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownTimeZone);
        let missing = format!("sqlite:///{}", db.dir.join("no/dir/x.db").display());
        let e = create_serial(&missing, "t", FORMAT, ZONE, "main", 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable);
        assert!(
            e.to_string().contains("unable to open database file"),
            "{e}"
        );
    }
}
