//! The Rust client of business serial numbers, over the `postgres` crate (features `serial`
//! and `postgres`): [`Serials`] runs the core's [`super::SerialAllocator`] with fetches on a
//! thread of their own, as the Python (psycopg) and Node (pg) clients do. The driver is the
//! one every database shares; what is PostgreSQL's is here: each step is one function of the
//! schema, sent with `query_typed` (one round trip on the unnamed statement), so it works
//! through a transaction pooler.
//!
//! ```no_run
//! use shardid::segment::SizePolicy;
//! use shardid::serial::postgres::{Serials, create_serial};
//!
//! let config = "host=127.0.0.1 user=app dbname=app";
//! let format = "ORD-{yyyy}{MM}{dd}-{seq:6}";
//! create_serial(config, "orders", format, "Asia/Shanghai", "seg", 1)?; // once
//! let orders = Serials::connect(config, "orders", format, "Asia/Shanghai", "seg", SizePolicy::new())?;
//! let serial = orders.next_serial()?; // ORD-20261125-000001, ...
//! assert_eq!(orders.parse(&serial)?.number, 1);
//! orders.close();
//! # Ok::<(), shardid::serial::postgres::SerialsError>(())
//! ```

use std::string::{String, ToString};

use postgres::types::Type;

pub use super::driver::SerialsError;
use super::driver::{Registering, SerialClient};
use super::{Parsed, Serial, SerialFormat};
use crate::driver::postgres::off_runtime;
use crate::driver::{Client, Owned};
use crate::segment::driver::SegmentClient;
use crate::segment::postgres as segments;
use crate::sql::{Dialect, Segments, Value};

/// The statements of one schema.
pub(crate) struct Statements {
    info: String,
    give_back: String,
    create: String,
    /// The segments' (a period's take is their protocol's).
    segments: segments::Statements,
}

impl SerialClient for postgres::Client {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        let s = Segments::new(schema)
            .map_err(|e| e.to_string())?
            .serial_statements(Self::PLACEHOLDERS);
        Ok(Statements {
            info: s.info().to_string(),
            give_back: s.give_back().to_string(),
            create: s.create().to_string(),
            segments: <Self as SegmentClient>::statements(schema)?,
        })
    }

    fn segments(s: &Statements) -> &segments::Statements {
        &s.segments
    }

    /// The one statement with an array (the format's pieces), so sent by the crate itself.
    fn create(
        &mut self,
        s: &Statements,
        _: Dialect,
        reg: &Registering<'_>,
    ) -> Result<Option<String>, postgres::Error> {
        let r = &reg.columns;
        let max_gap = i32::try_from(reg.max_gap).unwrap_or(i32::MAX);
        off_runtime(|| {
            self.query_typed(
                s.create.as_str(),
                &[
                    (&reg.tag, Type::TEXT),
                    (&reg.format, Type::TEXT),
                    (&reg.zone, Type::TEXT),
                    (&r.canonical, Type::TEXT),
                    (&r.shape, Type::TEXT),
                    (&r.pieces, Type::TEXT_ARRAY),
                    (&r.width, Type::INT4),
                    (&r.reset, Type::TEXT),
                    (&max_gap, Type::INT4),
                ],
            )
        })?;
        // A mismatch is the server's error (SERIAL_MISMATCH's SQLSTATE).
        Ok(None)
    }

    fn info(
        &mut self,
        s: &Statements,
        _: Dialect,
        tag: &str,
    ) -> Result<Option<(String, String, u64)>, postgres::Error> {
        let row = self.run(&s.info, &[Value::Text(tag)])?;
        Ok(super::driver::registration_of(row))
    }

    fn give_back(
        &mut self,
        s: &Statements,
        _: Dialect,
        period_tag: &str,
        first: u64,
        end: u64,
    ) -> Result<bool, postgres::Error> {
        let row = self.run(
            &s.give_back,
            &[Value::Text(period_tag), Value::Int(first), Value::Int(end)],
        )?;
        Ok(row
            .as_deref()
            .and_then(<[_]>::first)
            .and_then(Owned::bool)
            .unwrap_or(false))
    }
}

super::driver::serials_client!(
    postgres::Client,
    "PostgreSQL",
    "a libpq-style connection string or a `postgresql://` URL"
);
