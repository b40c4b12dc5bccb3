//! The Rust client of business serial numbers on MySQL 8 and MariaDB, over the `mysql` crate
//! (features `serial` and `mysql`): the same driver as [`super::postgres`]; what is the MySQL
//! family's is here: the registrations in `shardid_serials` ([`MysqlSerials`]: render it after
//! the segments' DDL), and each period's segments taken from a tag of its own
//! (`orders@2026-11-25`, made by the segments' `create_tag` on first use) by the segments'
//! steps, as on PostgreSQL.
//!
//! ```no_run
//! use shardid::segment::SizePolicy;
//! use shardid::serial::mysql::{Serials, create_serial};
//!
//! let url = "mysql://app:secret@127.0.0.1:3306/seg";
//! let format = "ORD-{yyyy}{MM}{dd}-{seq:6}";
//! create_serial(url, "orders", format, "Asia/Shanghai", "seg", 1)?; // once
//! let orders = Serials::connect(url, "orders", format, "Asia/Shanghai", "seg", SizePolicy::new())?;
//! let serial = orders.next_serial()?; // ORD-20261125-000001, ...
//! orders.close();
//! # Ok::<(), shardid::serial::mysql::SerialsError>(())
//! ```
//!
//! [`MysqlSerials`]: crate::sql::mysql::MysqlSerials

use std::string::{String, ToString};
use std::vec::Vec;

use mysql::prelude::Queryable;

pub use super::driver::SerialsError;
use super::driver::{Registering, SerialClient};
use super::{Parsed, Serial, SerialFormat};
use crate::driver::Client;
use crate::segment::driver::SegmentClient;
use crate::segment::mysql as segments;
use crate::sql::mysql::MysqlSerials;
use crate::sql::{Dialect, Value};

/// The statements of one database: the registrations' and the segments'.
pub(crate) struct Statements {
    schema: String,
    segments: segments::Statements,
}

impl Statements {
    fn serials(&self) -> crate::sql::mysql::MysqlSerialStatements<'_> {
        MysqlSerials::new(&self.schema).map_or_else(
            |_| unreachable!("checked in statements()"),
            |s| s.statements(mysql::Conn::PLACEHOLDERS),
        )
    }
}

impl SerialClient for mysql::Conn {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        let _checked = MysqlSerials::new(schema).map_err(|e| e.to_string())?;
        Ok(Statements {
            schema: schema.into(),
            segments: <Self as SegmentClient>::statements(schema)?,
        })
    }

    fn segments(s: &Statements) -> &segments::Statements {
        &s.segments
    }

    /// `INSERT IGNORE`, then the rows of the tag or of its shape: a mismatch is what the
    /// client finds there (the unique shape makes two registrations at once safe).
    fn create(
        &mut self,
        s: &Statements,
        _: Dialect,
        reg: &Registering<'_>,
    ) -> Result<Option<String>, mysql::Error> {
        let r = &reg.columns;
        let serials = s.serials();
        let pieces = r.pieces.join("\n");
        self.run(
            &serials.register().to_string(),
            &[
                Value::Text(reg.tag),
                Value::Text(reg.format),
                Value::Text(reg.zone),
                Value::Text(&r.canonical),
                Value::Text(&r.shape),
                Value::Text(&pieces),
                Value::Int(u64::try_from(r.width).unwrap_or(0)),
                Value::Text(r.reset),
                Value::Int(reg.max_gap.into()),
            ],
        )?;
        let rows: Vec<(String, String, String)> = self.exec(
            serials.registered().to_string(),
            (reg.tag, r.shape.as_str()),
        )?;
        Ok(crate::sql::mysql::registration_problem(
            rows.iter()
                .map(|(t, c, z)| (t.as_str(), c.as_str(), z.as_str())),
            reg.tag,
            &r.canonical,
            reg.zone,
        ))
    }

    fn info(
        &mut self,
        s: &Statements,
        _: Dialect,
        tag: &str,
    ) -> Result<Option<(String, String, u64)>, mysql::Error> {
        let row = self.run(&s.serials().info().to_string(), &[Value::Text(tag)])?;
        Ok(super::driver::registration_of(row))
    }

    fn give_back(
        &mut self,
        s: &Statements,
        dialect: Dialect,
        period_tag: &str,
        first: u64,
        end: u64,
    ) -> Result<bool, mysql::Error> {
        segments::give_back(self, &s.segments, dialect, period_tag, first, end)
    }
}

super::driver::serials_client!(
    mysql::Conn,
    "MySQL or MariaDB",
    "`mysql://user:password@host:port/database`, or `mariadb://`"
);
