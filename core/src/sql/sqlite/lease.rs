//! Expiring shard leases kept in a SQLite table: the statements of the lease protocol
//! ([`crate::sql::LeaseProtocol`]) that apply to one file.
//!
//! The same table and the same guarantees as on the other databases: one row per `(layout,
//! shard)` with the shard's *ceiling*, its holder, a random *token* and when the lease expires
//! by the **database's** clock ([`super::NOW_MS`]; times are Unix milliseconds). A claim takes
//! the first free or expired shard of the range and writes its token; renewals, ceiling writes
//! and the release are guarded by the token, so a holder that was taken over writes nothing.
//!
//! What does not apply:
//! - Session leases (advisory locks): SQLite has none. Processes of one host that want a
//!   crashed holder's shard back at once use the lock-file leases ([`crate::lease`]).
//! - Failover: one file has no replica, so no ceiling jump and no timeline.
//! - Races between claimants: the claim is one `INSERT ... SELECT ... ON CONFLICT DO UPDATE ...
//!   RETURNING` (SQLite ≥ 3.35) in autocommit, which runs under the database's write lock and
//!   reads the latest state: the first shard of the range that has no row or a free one is
//!   inserted or taken over, and no other claim runs between the choice and the write. No row
//!   returned: every shard of the range is held by a live lease (no retry needed).
//!
//! The table is created on first use: a driver runs [`SqliteLease::create_table`] once per
//! connection before the first claim.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::Layout;
use crate::sql::lease::{DEFAULT_TTL_MS, LeaseKind, LeaseSignature, TtlError, Value, check_table};
use crate::sql::{Placeholders, SqlError};

use super::NOW_MS;

/// The schema of a lease table by default: `main`, the file the URL names.
pub(crate) const MAIN: &str = "main";

/// Creates the table if it is missing.
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS {t} (\
    layout TEXT NOT NULL, shard INTEGER NOT NULL, ceiling INTEGER NOT NULL DEFAULT 0, \
    holder TEXT, taken_at INTEGER, token TEXT, expires_at INTEGER, \
    PRIMARY KEY (layout, shard)) WITHOUT ROWID";

/// Claims the first shard of the range that has no row, or whose row is free (never taken,
/// released, or expired by the database's clock). Returns `(shard, ceiling, the database's
/// clock)`, or no row.
/// (`WHERE true` before `ON CONFLICT`: SQLite's parser needs it after an `INSERT ... SELECT`.)
const CLAIM: &str = "INSERT INTO {t} (layout, shard, ceiling, token, holder, taken_at, expires_at) \
    SELECT @sig, c.shard, @floor, @token, @holder, {now}, {now} + @ttl FROM (\
    SELECT shard FROM (\
    SELECT @first AS shard WHERE NOT EXISTS (SELECT 1 FROM {t} WHERE layout = @sig AND shard = @first) \
    UNION ALL SELECT x.shard + 1 FROM {t} AS x WHERE x.layout = @sig AND x.shard >= @first \
    AND x.shard < @end - 1 AND NOT EXISTS (SELECT 1 FROM {t} AS y WHERE y.layout = @sig AND y.shard = x.shard + 1) \
    UNION ALL SELECT shard FROM {t} WHERE layout = @sig AND shard >= @first AND shard < @end \
    AND (expires_at IS NULL OR expires_at <= {now})) ORDER BY shard LIMIT 1) AS c WHERE true \
    ON CONFLICT (layout, shard) DO UPDATE SET token = excluded.token, holder = excluded.holder, \
    taken_at = excluded.taken_at, expires_at = excluded.expires_at, \
    ceiling = CASE WHEN taken_at IS NULL OR taken_at < @mark THEN max(ceiling, @floor) ELSE ceiling END \
    WHERE expires_at IS NULL OR expires_at <= {now} \
    RETURNING shard, ceiling, {now}";

/// The table's fence row (issue 54), read before the lease's first claim: `(the mark's time
/// in Unix ms, 0, the database's clock)`, or no row. The row of layout `''` (no layout's
/// signature: no claim or status reads it) and shard -1, in the lease table itself, so it is in
/// every copy of the file that has the table: `shardid restored` sets its `taken_at`
/// ([`MARK`]); one file has no other step back to see.
const FENCE: &str = "SELECT taken_at, 0, {now} FROM {t} WHERE layout = '' AND shard = -1";

/// `shardid restored`'s mark (issue 54): the fence row's `taken_at` set to the database's
/// clock, the row made if missing (after [`CREATE_TABLE`]: a copy without the table gets it,
/// so the next lease finds the mark).
#[cfg(feature = "std")]
const MARK: &str = "INSERT INTO {t} (layout, shard, ceiling, taken_at) VALUES ('', -1, 0, {now}) \
    ON CONFLICT (layout, shard) DO UPDATE SET taken_at = excluded.taken_at";

/// Extends the lease by its time to live from the database's clock, only while the row holds
/// its token: one row, or none when it was taken over.
const RENEW: &str = "UPDATE {t} SET expires_at = {now} + @ttl \
    WHERE layout = @sig AND shard = @shard AND token = @token RETURNING shard, {now}";

/// Raises the ceiling (and renews), only while the row holds the token.
const RECORD: &str = "UPDATE {t} SET ceiling = max(ceiling, @units), expires_at = {now} + @ttl \
    WHERE layout = @sig AND shard = @shard AND token = @token RETURNING shard";

/// Frees the shard at once, if the row still holds the token.
const RELEASE: &str = "UPDATE {t} SET token = NULL, holder = NULL, expires_at = NULL \
    WHERE layout = @sig AND shard = @shard AND token = @token RETURNING shard";

/// The statements of an expiring lease on the first free shard of `first..end` of a layout, in
/// a SQLite table, with a driver's placeholders. Each method returns the statement and its
/// parameters: with [`Placeholders::Numbered`] (`?1`, ...) a value used twice is passed once,
/// otherwise (`?`) once for each use.
#[derive(Clone, Debug)]
pub struct SqliteLease {
    table: String,
    /// `"schema"."table"`, as the statements name it.
    name: String,
    placeholders: Placeholders,
    signature: String,
    holder: String,
    token: String,
    first: u64,
    end: u64,
    ttl_ms: u64,
}

impl SqliteLease {
    /// A lease of the first free shard of `first..end` of `layout` in `table`, for `holder`
    /// (host and process, shown in the table) with `token` (random, unique to this lease), of
    /// [`DEFAULT_TTL_MS`] ([`SqliteLease::ttl`] sets another).
    ///
    /// # Errors
    /// [`SqlError::TableName`], as [`check_table`]; [`SqlError::EmptyShards`] when
    /// `first >= end`.
    pub fn new(
        layout: Layout,
        table: &str,
        placeholders: Placeholders,
        first: u64,
        end: u64,
        holder: &str,
        token: &str,
    ) -> Result<Self, SqlError> {
        check_table(table)?;
        if first >= end {
            return Err(SqlError::EmptyShards { first, end });
        }
        let mut signature = String::new();
        let _ = write!(signature, "{}", LeaseSignature(layout));
        Ok(Self {
            name: format!("\"{MAIN}\".\"{table}\""),
            table: table.into(),
            placeholders,
            signature,
            holder: holder.into(),
            token: token.into(),
            first,
            end,
            ttl_ms: DEFAULT_TTL_MS,
        })
    }

    /// The lease on the table in `schema` (`main` by default; an attached database's name):
    /// every statement names it, so no table of another schema (`temp`'s, which SQLite
    /// searches first) can stand in for it.
    ///
    /// # Errors
    /// [`SqlError::SchemaName`] for a name that is not a plain lower-case identifier.
    pub fn schema(mut self, schema: &str) -> Result<Self, SqlError> {
        crate::sql::check_schema(schema)?;
        self.name = format!("\"{schema}\".\"{}\"", self.table);
        Ok(self)
    }

    /// The time to live, in milliseconds.
    ///
    /// # Errors
    /// [`TtlError`] out of [`crate::sql::MIN_TTL_MS`]..=[`crate::sql::MAX_TTL_MS`].
    pub fn ttl(mut self, ttl_ms: u64) -> Result<Self, TtlError> {
        match LeaseKind::parse("expiring", ttl_ms)? {
            LeaseKind::Expiring { ttl_ms } => self.ttl_ms = ttl_ms,
            LeaseKind::Session => {}
        }
        Ok(self)
    }

    /// The DDL that creates the table if it is missing (no parameters).
    pub fn create_table(&self) -> String {
        CREATE_TABLE.replace("{t}", &self.name)
    }

    /// Reads the fence row (issue 54): one row `(mark, 0, the database's clock)` or none.
    pub fn fence(&self) -> (String, Vec<Value<'_>>) {
        self.render(FENCE, None, None)
    }

    /// Takes the first free shard: one row `(shard, ceiling)` (start the generator above the
    /// ceiling), or none: every shard of the range is held by a live lease. A missing row, or
    /// one last taken before `mark` (Unix ms; 0: none), starts at `floor` time units at
    /// least (0: none): after a restore, past what a lost holder could have dated (issue 54).
    pub fn claim(&self, floor: u64, mark: u64) -> (String, Vec<Value<'_>>) {
        self.render(CLAIM, None, Some((floor, mark)))
    }

    /// Renews the lease on `shard`: one row, or none when it was taken over (stop).
    pub fn renew(&self, shard: u64) -> (String, Vec<Value<'_>>) {
        self.render(RENEW, Some(shard), None)
    }

    /// Records a ceiling of `units` for `shard` and renews: one row, or none when the lease is
    /// lost (the generator must stop at its ceiling).
    pub fn record(&self, shard: u64, units: u64) -> (String, Vec<Value<'_>>) {
        self.render(RECORD, Some(shard), Some((units, 0)))
    }

    /// Frees `shard` at once, if the lease still holds it (one row then).
    pub fn release(&self, shard: u64) -> (String, Vec<Value<'_>>) {
        self.render(RELEASE, Some(shard), None)
    }

    /// `sql` with `{t}` the table, `{now}` the clock, and each `@name` the driver's
    /// placeholder for that parameter.
    fn render(
        &self,
        sql: &str,
        shard: Option<u64>,
        numbers: Option<(u64, u64)>,
    ) -> (String, Vec<Value<'_>>) {
        let (units, mark) = numbers.unzip();
        let sql = sql.replace("{t}", &self.name).replace("{now}", NOW_MS);
        let mut out = String::with_capacity(sql.len());
        let mut names: Vec<&str> = Vec::new();
        let mut params = Vec::new();
        let mut rest = sql.as_str();
        while let Some(at) = rest.find('@') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..len];
            let value = match name {
                "sig" => Value::Text(&self.signature),
                "token" => Value::Text(&self.token),
                "holder" => Value::Text(&self.holder),
                "first" => Value::Int(self.first),
                "end" => Value::Int(self.end),
                "ttl" => Value::Int(self.ttl_ms),
                "shard" => Value::Int(shard.unwrap_or(0)),
                "units" | "floor" => Value::Int(units.unwrap_or(0)),
                "mark" => Value::Int(mark.unwrap_or(0)),
                _ => unreachable!("unknown parameter @{name}"),
            };
            match self.placeholders {
                Placeholders::Numbered => {
                    let n = if let Some(i) = names.iter().position(|known| *known == name) {
                        i + 1
                    } else {
                        names.push(name);
                        params.push(value);
                        names.len()
                    };
                    let _ = write!(out, "?{n}");
                }
                Placeholders::Question | Placeholders::Format => {
                    out.push('?');
                    params.push(value);
                }
            }
            rest = &after[len..];
        }
        out.push_str(rest);
        (out, params)
    }
}

/// `shardid restored`'s statements for the lease table `table` of `schema` (no parameters): the
/// table made if missing, then its fence row marked with the database's clock (issue 54).
#[cfg(feature = "std")]
pub(crate) fn mark(schema: &str, table: &str) -> [String; 2] {
    let name = format!("\"{schema}\".\"{table}\"");
    [
        CREATE_TABLE.replace("{t}", &name),
        MARK.replace("{t}", &name).replace("{now}", NOW_MS),
    ]
}
