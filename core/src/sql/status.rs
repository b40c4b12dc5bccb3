//! `shardid status`: what an operator reads off a database — the leases, the segments' tags,
//! the dictionary's topics, and when the layouts in use run out — as statements, rows and a
//! report, written once. The Python and Node packages only run the statements [`StatusReader`]
//! hands out and feed the rows back; the figures (burn rate, years left, run-out dates,
//! warnings) and both renderings ([`Report::text`], [`Report::json`]) are made here, so the two
//! print the same bytes.
//!
//! The steps: [`StatusReader::next`] gives a statement, the driver runs it and
//! [`StatusReader::feed`]s every row back as text cells (`None` for SQL `NULL`): every
//! statement casts its columns to text, so no driver's conversion of numbers or times matters.
//! The first statement reads the server's clock and which of the tables exist; a table that
//! does not exist (the feature is not installed) is read no further and reported as absent.
//! Then [`StatusReader::report`].
//!
//! # The figures
//!
//! - **Burn rate** of a tag: numbers a second. An exact rate needs two readings of a tag's
//!   `next` some time apart; a tag's row records one (its `next`, the size of its last segment
//!   `step`, the stride, the time of the last take `updated_at`), so status *estimates* it from
//!   one reading: the clients size segments to last about [`TARGET_MS`] (the allocator's
//!   default `SizePolicy`: doubled below half of it, halved above twice), so a tag burns about
//!   `step × stride` numbers per [`TARGET_MS`] — and no faster than one segment per the time
//!   since its last take, when that is longer. So `step × stride × 1000 / max(TARGET_MS, now −
//!   last take)` a second; 0 when no segment was taken yet (`step` 0). Clients with another
//!   target lifetime, or segments at their maximum size, make it an under-estimate.
//! - **Years left** of a tag: `(2^63 − 1 − next) / burn rate`, in years of 365.2425 days
//!   ([`YEAR_MS`]); none (never) at a burn rate of 0.
//! - **Run-out date** of a layout: [`Layout::expires_at_ms`]. The layouts shown are the one of
//!   `--layout` (default Instagram's, as every command) and every layout the lease rows record
//!   (their `layout` column holds the layout's numbers, [`super::LeaseSignature`]; read back as a
//!   signed layout, as every ID in a `bigint` column is).
//! - **Warnings**: a layout that runs out within [`WARN_MS`] (5 years of [`YEAR_MS`]) of the
//!   server's clock (or ran out), and a tag with less than 5 years left. `shardid status
//!   --check` exits 1 when there is one.
//!
//! Times are the database server's clock (the first statement reads it), in Unix milliseconds.
//!
//! # The dialects
//!
//! Each [`Dialect`] has its own statements, chosen by an explicit `match` (a new dialect is a
//! compile error here until it has them):
//!
//! - **PostgreSQL**: the tables by `to_regclass`, each tag's recorded rate read by name from
//!   the row (`to_jsonb`), so a table of an older version reads NULL there.
//! - **MySQL and MariaDB**: the tables and the rate columns by `information_schema` (a table of
//!   an older version has no rate columns: NULL, as on PostgreSQL), the same figures and the
//!   same serial warning as PostgreSQL, from the same columns (`rate`, `window_n`, and the
//!   window's start `window_ms`; the skip times the row's stride, as the server's skip).
//! - **SQLite**: a schema is an attached database (`main` for the file itself, the clients'
//!   default: [`default_schemas`]), so a first statement lists the attached ones
//!   (`pragma_database_list`) and the probe asks only those (naming a database that is not
//!   attached is an error in SQLite, where a missing table should read as absent). The tables
//!   are read as elsewhere, times already in Unix ms (`julianday('now')` for the clock,
//!   [`super::sqlite::NOW_MS`]). One file has no failover: no serial warning; a file copied
//!   back from a backup is marked by `shardid restored` ([`StatusReader::marking_restored`]),
//!   on a connection the binding opens for writing.
//!   Every column has a name of its own (`c0`, `c1`, ...), for drivers that return rows as
//!   objects keyed by column name (Node's `node:sqlite`).

use std::fmt::Write as _;
use std::format;
use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use super::failover::MYSQL_NOW_MS;
use super::sqlite::NOW_MS as SQLITE_NOW_MS;
use super::{Dialect, SqlError, check_schema, check_table};
use crate::cli::rfc3339;
use crate::{FieldOrder, Layout};

/// A year, for years left and the warnings: 365.2425 days (the Gregorian calendar's mean).
pub const YEAR_MS: u64 = 31_556_952_000;

/// How close a run-out date (a layout's, a tag's) may come before it is a warning: 5 years,
/// the layouts' own rule ([`crate::RUN_OUT_WARNING_MS`], [`Layout::runs_out_soon`]).
pub const WARN_MS: u64 = crate::RUN_OUT_WARNING_MS;

/// How long the clients size a segment to last (the allocator's default target lifetime).
pub const TARGET_MS: u64 = 60_000;

/// The last number of a tag: 2^63 − 1, the largest `bigint`.
pub const LAST_NUMBER: u64 = i64::MAX as u64;

/// The default table of leases, as the lease drivers' (`shardid_leases`).
pub const DEFAULT_TABLE: &str = "shardid_leases";
/// The default schema of segments' tags, as the segments clients' (`seg`).
pub const DEFAULT_SEGMENTS_SCHEMA: &str = "seg";
/// The default schema of the dictionary, as its clients' (`dict`).
pub const DEFAULT_DICTIONARY_SCHEMA: &str = "dict";
/// The schema of the tags and the topics on SQLite: `main`, the file itself (a schema there is
/// an attached database, and a connection made from a URL has only its own file).
pub const SQLITE_SCHEMA: &str = "main";

/// The default schemas of the tags and of the topics on `family`, as its clients': `seg` and
/// `dict` ([`DEFAULT_SEGMENTS_SCHEMA`], [`DEFAULT_DICTIONARY_SCHEMA`]), on SQLite `main` for
/// both ([`SQLITE_SCHEMA`]).
pub const fn default_schemas(family: Dialect) -> (&'static str, &'static str) {
    match family {
        Dialect::Postgres | Dialect::Mysql | Dialect::Mariadb => {
            (DEFAULT_SEGMENTS_SCHEMA, DEFAULT_DICTIONARY_SCHEMA)
        }
        Dialect::Sqlite => (SQLITE_SCHEMA, SQLITE_SCHEMA),
    }
}

/// Which statement a [`StatusReader`] is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// SQLite: which databases are attached (the schemas a statement may name).
    Schemas,
    Probe,
    Leases,
    /// `restored --after` with serial text: the registrations, to read the text's period and
    /// number by its format.
    Registrations,
    Tags,
    Topics,
    Done,
}

/// The statements of `shardid status` and the rows they returned; see the module docs.
#[derive(Clone, Debug)]
#[allow(clippy::struct_excessive_bools)] // facts the probe read and the steps' marks, not a state
pub struct StatusReader {
    family: Dialect,
    table: String,
    /// The lease table's schema as named ([`Self::lease_schema`]); `None`: the lease's default.
    lease_schema: Option<String>,
    /// The lease table's schema as the probe found it (`None`: no such table).
    lease_at: Option<String>,
    /// Why the lease rows are not read: another role's table found through `search_path`.
    leases_not_read: Option<String>,
    segments: String,
    dictionary: String,
    layout: Layout,
    mark_restored: bool,
    /// Under `restored`: how many of the current step's marking statements ran ([`Self::mark`]).
    marked: usize,
    /// Whether the schemas of the tags and of the topics have a fence (issue 54), which
    /// `restored` marks too: the next tag or topic created first sets it past what the lost
    /// state could have handed out ([`super::failover`]).
    fences: [bool; 2],
    /// `restored --after`: the last numbers the operator knows were handed out.
    afters: Vec<After>,
    /// `restored --margin`: how many numbers past each of them the next starts.
    margin: u64,
    /// The serial registrations `(tag, format, zone)`, read for the serial texts of `afters`.
    registrations: Option<Vec<(String, String, String)>>,
    step: Step,
    now_ms: u64,
    present: [bool; 3],
    serials: bool,
    /// The tags' table records rates (PostgreSQL reads them by name: always; the MySQL family's
    /// probe says; SQLite's never do).
    rates: bool,
    /// SQLite: whether the schemas of the tags and of the topics are attached databases.
    attached: [bool; 2],
    /// SQLite: whether the lease's schema is an attached database.
    lease_attached: bool,
    /// PostgreSQL: whether the current user may create tables where a lease of its would make
    /// the lease table (the schema named, else the current schema): `restored` makes a missing
    /// one only then.
    lease_creatable: bool,
    leases: Vec<LeaseRow>,
    /// Under `restored`: the statements marking the lease table's fence row (issue 54), run
    /// right after the probe, and how many of them ran.
    lease_marks: (Vec<String>, usize),
    tags: Vec<TagRow>,
    topics: Vec<TopicRow>,
}

/// What `restored --after` says was handed out last ([`StatusReader::after`]).
#[derive(Clone, Debug)]
enum AfterValue {
    /// A tag's (or topic's) last number.
    Number(u64),
    /// A serial tag's last serial, as text.
    Serial(String),
}

/// One `--after` (or `--after-topic`).
#[derive(Clone, Debug)]
struct After {
    name: String,
    last: AfterValue,
    topic: bool,
    /// The tag (a serial's period's) and the last number to skip past, the margin added.
    resolved: Option<(String, u64)>,
}

/// The period's tag and the number of serial `text` of serial tag `tag`, registered with
/// `format` in `zone`.
#[cfg(feature = "serial")]
fn serial_after(tag: &str, format: &str, zone: &str, text: &str) -> Result<(String, u64), String> {
    let format = crate::serial::SerialFormat::new(format, zone)
        .map_err(|e| format!("--after {tag}: its registered format {format}: {e}"))?;
    let parsed = format.parse(text).map_err(|e| {
        format!(
            "--after {tag}={text}: not a serial of {}: {e}",
            format.as_str()
        )
    })?;
    Ok((parsed.period.tag(tag), parsed.number))
}

/// Serial text needs the serial formats (feature `serial`).
#[cfg(not(feature = "serial"))]
fn serial_after(tag: &str, _: &str, _: &str, text: &str) -> Result<(String, u64), String> {
    Err(format!(
        "--after {tag}={text}: reading serial text needs shardid's serial feature"
    ))
}

/// Text cells of one row, `None` for SQL `NULL`.
pub type Row = Vec<Option<String>>;

impl StatusReader {
    /// A reader of the lease table `table` (in the connection's search path, or its database on
    /// MySQL), the tags of schema `segments` and the topics of schema `dictionary`, with the
    /// layout `layout` (the others come from the lease rows).
    ///
    /// # Errors
    /// [`SqlError::SchemaName`] or [`SqlError::TableName`] for a name that is not a plain
    /// lower-case identifier.
    pub fn new(
        family: Dialect,
        table: &str,
        segments: &str,
        dictionary: &str,
        layout: Layout,
    ) -> Result<Self, SqlError> {
        check_table(table)?;
        check_schema(segments)?;
        check_schema(dictionary)?;
        Ok(Self {
            family,
            table: table.into(),
            lease_schema: None,
            lease_at: None,
            leases_not_read: None,
            segments: segments.into(),
            dictionary: dictionary.into(),
            layout,
            mark_restored: false,
            marked: 0,
            fences: [false; 2],
            afters: Vec::new(),
            margin: 0,
            registrations: None,
            step: match family {
                Dialect::Postgres | Dialect::Mysql | Dialect::Mariadb => Step::Probe,
                Dialect::Sqlite => Step::Schemas,
            },
            now_ms: 0,
            present: [false; 3],
            serials: false,
            rates: false,
            attached: [false; 2],
            lease_attached: false,
            lease_creatable: false,
            leases: Vec::new(),
            lease_marks: (Vec::new(), 0),
            tags: Vec::new(),
            topics: Vec::new(),
        })
    }

    /// The same reader of the lease table in `schema`, found as a lease finds it
    /// ([`crate::sql::LeaseProtocol::schema`], whose option this is): on PostgreSQL a schema,
    /// on the MySQL family a database, on SQLite an attached database. `None`, the lease's
    /// default: on PostgreSQL the schema where `search_path` finds the table, on the MySQL
    /// family the connection's database, on SQLite `main`. Either way the rows are read from
    /// the table the probe found, named `schema.table` (quoted) and shown so. On PostgreSQL,
    /// as a lease refuses to write to a table no role of its user owns (issue 60, finding 4),
    /// a table found through `search_path` that none of the current user's roles owns is not
    /// read as the application's: the report says whose it is and warns; one named here is
    /// read, its owner whoever it is (an operator's monitoring role may read the
    /// application's table).
    ///
    /// # Errors
    /// [`SqlError::SchemaName`] for a name that is not a plain lower-case identifier.
    pub fn lease_schema(mut self, schema: Option<&str>) -> Result<Self, SqlError> {
        if let Some(schema) = schema {
            check_schema(schema)?;
        }
        self.lease_schema = schema.map(Into::into);
        Ok(self)
    }

    /// The lease table as status names it: `schema.table` once the schema is known (named,
    /// or where the probe found the table), else the table alone.
    fn lease_table(&self) -> String {
        match self.lease_at.as_ref().or(self.lease_schema.as_ref()) {
            Some(schema) => format!("{schema}.{}", self.table),
            None => self.table.clone(),
        }
    }

    /// The family the statements are for.
    pub const fn family(&self) -> Dialect {
        self.family
    }

    /// Whether this is `shardid restored`'s reader ([`Self::marking_restored`]).
    pub const fn marks_restored(&self) -> bool {
        self.mark_restored
    }

    /// The same reader for `shardid restored`: every row of the tags and the topics is first
    /// marked restored (`UPDATE ... SET restored = true`, committed on its own: on PostgreSQL in
    /// the statement that reads them; on the MySQL family, which has no `UPDATE ... RETURNING`,
    /// and on SQLite, whose marks are rows of tables beside the tags and topics
    /// ([`super::sqlite`]), in a statement of its own just before, which returns no row), so the
    /// next take of each skips as after a new timeline or another server ([`super::failover`]);
    /// the report says how many rows it marked. On SQLite the binding opens the file for
    /// writing for it ([`Self::marks_restored`]), as a status opens it read-only.
    #[must_use]
    pub fn marking_restored(mut self) -> Self {
        self.mark_restored = true;
        self
    }

    /// `shardid restored --after NAME=VALUE`: the operator knows the last number handed out
    /// of tag `NAME` (`VALUE` a number), or the last serial of serial tag `NAME` (`VALUE` its
    /// text, read by the tag's registered format: its period's tag and number), and the next
    /// one starts right past it plus [`Self::after_margin`], instead of past what the tag's
    /// rate could have handed out (issue 54). A tag the restored data lacks (a period after the
    /// backup's last) is made there. `topic` (`--after-topic`): a dictionary topic's last ID.
    ///
    /// # Errors
    /// A name that is no tag (empty, longer than a tag), a value that is neither a number nor
    /// serial text, a topic's value not a number, or a number past 2^63 - 1 with the margin.
    pub fn after(mut self, name: &str, value: &str, topic: bool) -> Result<Self, String> {
        if name.is_empty() || name.len() > super::MAX_TAG_LEN {
            return Err(format!(
                "--after {name}={value}: a name is 1 to {} bytes",
                super::MAX_TAG_LEN
            ));
        }
        let number = value
            .parse::<u64>()
            .ok()
            .filter(|n| i64::try_from(*n).is_ok());
        let last = match (number, topic) {
            (Some(n), _) => AfterValue::Number(n),
            (None, false) if !value.is_empty() && !value.bytes().all(|b| b.is_ascii_digit()) => {
                AfterValue::Serial(value.into())
            }
            (None, _) => {
                return Err(format!(
                    "--after{} {name}={value}: the value is the last {} handed out (0 to 2^63 - 1){}",
                    if topic { "-topic" } else { "" },
                    if topic { "ID" } else { "number" },
                    if topic {
                        ""
                    } else {
                        ", or the last serial's text"
                    }
                ));
            }
        };
        self.afters.push(After {
            name: name.into(),
            last,
            topic,
            resolved: None,
        });
        Ok(self)
    }

    /// `shardid restored --margin N`: the first number after each `--after` is its number plus
    /// 1 plus `margin` (0 by default: exactly past it).
    #[must_use]
    pub const fn after_margin(mut self, margin: u64) -> Self {
        self.margin = margin;
        self
    }

    /// The tag (or topic) and the number each `--after` skips past, once resolved; a serial's
    /// text its period's tag and number, by its registration.
    fn resolve(&mut self) -> Result<(), String> {
        for a in &mut self.afters {
            if a.resolved.is_some() {
                continue;
            }
            let (target, number) = match &a.last {
                AfterValue::Number(n) => (a.name.clone(), *n),
                AfterValue::Serial(text) => {
                    let registration = self
                        .registrations
                        .as_deref()
                        .unwrap_or_default()
                        .iter()
                        .find(|(tag, _, _)| *tag == a.name)
                        .ok_or_else(|| {
                            format!("--after {}: no serial tag {} is registered", a.name, a.name)
                        })?;
                    serial_after(&a.name, &registration.1, &registration.2, text)?
                }
            };
            let last = number
                .checked_add(self.margin)
                .filter(|n| *n < LAST_NUMBER)
                .ok_or_else(|| {
                    format!(
                        "--after {}: {number} plus the margin {} passes 2^63 - 1",
                        a.name, self.margin
                    )
                })?;
            a.resolved = Some((target, last));
        }
        Ok(())
    }

    /// Under `restored --after`: the statements that move each tag (or topic) of the current
    /// step right past what the operator says was handed out, after the marks.
    fn after_statements(&self) -> Vec<String> {
        let topics = match self.step {
            Step::Tags => false,
            Step::Topics => true,
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        for a in self.afters.iter().filter(|a| a.topic == topics) {
            let Some((target, last)) = &a.resolved else {
                continue;
            };
            let first = last + 1;
            let hex = target.bytes().fold(String::new(), |mut hex, b| {
                _ = write!(hex, "{b:02x}");
                hex
            });
            let (s, table, key, marks, fence) = if topics {
                (
                    &self.dictionary,
                    "shardid_topics",
                    "topic",
                    "shardid_topic_marks",
                    "topic_id",
                )
            } else {
                (
                    &self.segments,
                    "shardid_tags",
                    "tag",
                    "shardid_tag_marks",
                    "tag",
                )
            };
            match self.family {
                Dialect::Postgres => out.push(format!(
                    "SELECT {s}.shardid_{}after(convert_from('\\x{hex}'::bytea, 'UTF8'), {last})::text",
                    if topics { "topic_" } else { "" }
                )),
                Dialect::Mysql | Dialect::Mariadb => {
                    let srv = self.family.server_identity().unwrap_or(super::failover::MYSQL_SERVER);
                    let origin = super::failover::MysqlOrigin {
                        schema: Some(s),
                        table,
                        galera: self.family == Dialect::Mariadb,
                    };
                    // Made if missing (then past the fence), then exactly past `last`: a row the
                    // mark did not reach (restored false) is the one just made.
                    out.push(if topics {
                        format!(
                            "INSERT INTO {s}.shardid_topics (topic, server, origin, written_ms, window_ms) \
                             VALUES (X'{hex}', {srv}, {origin}, {MYSQL_NOW_MS}, {MYSQL_NOW_MS}) \
                             ON DUPLICATE KEY UPDATE topic = topic"
                        )
                    } else {
                        format!("SELECT {s}.create_tag(X'{hex}')")
                    });
                    let next = if topics {
                        format!("IF(restored, GREATEST(next, {first}), {first})")
                    } else {
                        format!(
                            "IF(restored, next + CEIL(GREATEST({first} - next, 0) / stride) * stride, \
                             next - FLOOR(GREATEST(next - {first}, 0) / stride) * stride)"
                        )
                    };
                    out.push(format!(
                        "UPDATE {s}.{table} SET next = {next}, restored = FALSE, server = {srv}, origin = {origin}, \
                         written_ms = {MYSQL_NOW_MS}, window_ms = {MYSQL_NOW_MS}, window_n = 0 \
                         WHERE {key} = X'{hex}'{}",
                        if topics { " AND dropped_at IS NULL" } else { "" }
                    ));
                }
                Dialect::Sqlite => {
                    let name = format!("CAST(X'{hex}' AS TEXT)");
                    // Made if missing (then past the fence, its marks gone), then exactly past
                    // `last`: a row without marks is the one just made (every other was marked).
                    out.push(if topics {
                        format!(
                            "INSERT INTO {s}.shardid_topics (topic, created_at) VALUES ({name}, {SQLITE_NOW_MS}) \
                             ON CONFLICT (topic) DO NOTHING"
                        )
                    } else {
                        format!(
                            "INSERT INTO {s}.shardid_tags (tag, next, updated_at) VALUES ({name}, {first}, {SQLITE_NOW_MS}) \
                             ON CONFLICT (tag) DO NOTHING"
                        )
                    });
                    out.push(format!(
                        "UPDATE {s}.{table} AS t SET next = CASE WHEN EXISTS (SELECT 1 FROM {s}.{marks} AS r \
                         WHERE r.{fence} = t.{fence}) THEN max(t.next, {first}) ELSE {first} END \
                         WHERE t.{key} = {name}{}",
                        if topics { " AND t.dropped_at IS NULL" } else { "" }
                    ));
                    out.push(format!(
                        "UPDATE {s}.{marks} SET restored = 0 WHERE {fence} = \
                         (SELECT {fence} FROM {s}.{table} WHERE {key} = {name})"
                    ));
                }
            }
        }
        out
    }

    /// Under `restored`: the statements marking what the current step reads, one after the
    /// other, each returning no row: the schema's fence (issue 54), where there is one, then on
    /// the MySQL family and SQLite the rows (PostgreSQL marks them in the statement that reads
    /// them); `None` once they ran.
    fn mark(&self) -> Option<String> {
        if !self.mark_restored {
            return None;
        }
        let placeholders = super::Placeholders::Question;
        let (schema, fence, present) = match self.step {
            Step::Tags => (&self.segments, "shardid_tag_fence", self.fences[0]),
            Step::Topics => (&self.dictionary, "shardid_topic_fence", self.fences[1]),
            _ => return None,
        };
        // On PostgreSQL a query returning no row (its drivers read a result from every
        // statement of a status); a plain UPDATE elsewhere, as the rows' marks.
        let fence = present.then(|| match self.family {
            Dialect::Postgres => format!(
                "WITH m AS (UPDATE {schema}.{fence} SET restored = true RETURNING one) SELECT 1 FROM m WHERE false"
            ),
            Dialect::Mysql | Dialect::Mariadb => {
                format!("UPDATE {schema}.{fence} SET restored = TRUE")
            }
            Dialect::Sqlite => format!("UPDATE {schema}.{fence} SET restored = 1"),
        });
        let rows = match (self.family, self.step) {
            (Dialect::Postgres, Step::Tags | Step::Topics) => Some(format!(
                "WITH m AS (UPDATE {schema}.{} SET restored = true RETURNING 1) SELECT 1 FROM m WHERE false",
                if self.step == Step::Tags {
                    "shardid_tags"
                } else {
                    "shardid_topics"
                }
            )),
            (Dialect::Mysql | Dialect::Mariadb, Step::Tags) => Some(format!(
                "UPDATE {}.shardid_tags SET restored = TRUE",
                self.segments
            )),
            (Dialect::Mysql | Dialect::Mariadb, Step::Topics) => Some(format!(
                "UPDATE {}.shardid_topics SET restored = TRUE",
                self.dictionary
            )),
            (Dialect::Sqlite, Step::Tags) => super::sqlite::SqliteSegments::new(&self.segments)
                .ok()
                .map(|s| s.statements(placeholders).mark_restored().to_string()),
            (Dialect::Sqlite, Step::Topics) => {
                super::sqlite::SqliteDictionary::new(&self.dictionary)
                    .ok()
                    .map(|d| d.statements(placeholders).mark_restored().to_string())
            }
            _ => None,
        };
        fence
            .into_iter()
            .chain(rows)
            .chain(self.after_statements())
            .nth(self.marked)
    }

    /// How many of the current step's marking statements return no row (the marks; the
    /// `--after` statements may return one, which is not read).
    fn marks_without_rows(&self) -> usize {
        let fence = match self.step {
            Step::Tags => self.fences[0],
            Step::Topics => self.fences[1],
            _ => false,
        };
        usize::from(fence) + 1
    }

    /// The tags' statement on PostgreSQL: with what a failover would skip of each (read by
    /// name from the row, so a table of an older version reads NULL there) and the width of the
    /// serial whose period a tag is; under `restored`, marking every row first.
    fn postgres_tags(&self) -> String {
        let s = &self.segments;
        format!(
            "{}SELECT tag, next::text, step::text, '1', \
             floor(extract(epoch FROM updated_at) * 1000)::bigint::text, \
             to_jsonb(t)->>'rate', to_jsonb(t)->>'window_n', \
             floor(extract(epoch FROM (to_jsonb(t)->>'window_at')::timestamptz) * 1000)::bigint::text, \
             {} FROM {} AS t ORDER BY tag",
            String::new(),
            if self.serials {
                format!(
                    "(SELECT r.width FROM {s}.shardid_serials r WHERE r.tag = split_part(t.tag, '@', 1))::text"
                )
            } else {
                "NULL".into()
            },
            format_args!("{s}.shardid_tags"),
        )
    }

    /// The next statement to run (no parameters), or `None` when [`Self::report`] is ready.
    pub fn next(&self) -> Option<String> {
        if let Some(mark) = self.lease_marks.0.get(self.lease_marks.1) {
            return Some(mark.clone());
        }
        if let Some(mark) = self.mark() {
            return Some(mark);
        }
        if self.step == Step::Done {
            return None;
        }
        Some(match self.family {
            Dialect::Postgres => self.postgres_next(),
            Dialect::Mysql | Dialect::Mariadb => self.mysql_next(),
            Dialect::Sqlite => self.sqlite_next(),
        })
    }

    /// PostgreSQL's statement of the current step (not [`Step::Done`]).
    fn postgres_next(&self) -> String {
        let (t, s, d) = (&self.table, &self.segments, &self.dictionary);
        // The lease table as a lease looks it up (`CHECK_TABLE` of `sql::lease::postgres`): the
        // schema named, else where `search_path` finds it; quoted, both names being checked
        // plain identifiers. Its schema, owner, whether one of the current user's roles owns
        // it (`pg_auth_members` followed, as the lease's check) and the user are columns 8 to
        // 11; from then on the rows are read from `"schema"."table"`, never by search path.
        // Column 12: whether the user may create the table where a lease of its would.
        let (lease, home) = match &self.lease_schema {
            Some(schema) => (
                format!("\"{schema}\".\"{t}\""),
                format!("to_regnamespace('{schema}')"),
            ),
            None => (format!("\"{t}\""), "current_schema()".into()),
        };
        match self.step {
            Step::Schemas | Step::Probe | Step::Done => format!(
                "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text, \
                 CASE WHEN to_regclass('{lease}') IS NULL THEN 'false' ELSE 'true' END, \
                 CASE WHEN to_regclass('{s}.shardid_tags') IS NULL THEN 'false' ELSE 'true' END, \
                 CASE WHEN to_regclass('{d}.shardid_topics') IS NULL \
                 OR to_regclass('{d}.shardid_strings') IS NULL THEN 'false' ELSE 'true' END, \
                 CASE WHEN to_regclass('{s}.shardid_serials') IS NULL THEN 'false' ELSE 'true' END, \
                 'true', \
                 CASE WHEN to_regclass('{s}.shardid_tag_fence') IS NULL THEN 'false' ELSE 'true' END, \
                 CASE WHEN to_regclass('{d}.shardid_topic_fence') IS NULL THEN 'false' ELSE 'true' END, \
                 n.nspname::text, pg_get_userbyid(c.relowner), CASE WHEN c.relowner IN \
                 (WITH RECURSIVE mine(r) AS (SELECT oid FROM pg_roles WHERE rolname = current_user \
                 UNION SELECT m.roleid FROM pg_auth_members AS m JOIN mine ON m.member = mine.r) \
                 SELECT r FROM mine) THEN 'true' ELSE 'false' END, current_user::text, \
                 CASE WHEN coalesce(has_schema_privilege({home}, 'CREATE'), false) \
                 THEN 'true' ELSE 'false' END \
                 FROM (SELECT) AS one LEFT JOIN pg_class AS c ON c.oid = to_regclass('{lease}') \
                 LEFT JOIN pg_namespace AS n ON n.oid = c.relnamespace"
            ),
            Step::Leases => format!(
                "SELECT layout, shard::text, ceiling::text, holder, \
                 floor(extract(epoch FROM taken_at) * 1000)::bigint::text, \
                 CASE WHEN expires_at = 'infinity' THEN 'infinity' \
                 ELSE floor(extract(epoch FROM expires_at) * 1000)::bigint::text END \
                 FROM \"{}\".\"{t}\" WHERE layout <> '' ORDER BY layout, shard",
                self.lease_at.as_deref().unwrap_or_default()
            ),
            Step::Registrations => format!("SELECT tag, format, zone FROM {s}.shardid_serials"),
            Step::Tags => self.postgres_tags(),
            Step::Topics => format!(
                "{}SELECT t.topic, t.next::text, CASE WHEN t.dropped_at IS NULL THEN 'false' ELSE 'true' END, \
                 (SELECT count(*) FROM {d}.shardid_strings s WHERE s.topic_id = t.topic_id)::text \
                 FROM {d}.shardid_topics t ORDER BY t.topic",
                "",
            ),
        }
    }

    /// The MySQL family's statement of the current step (not [`Step::Done`]).
    fn mysql_next(&self) -> String {
        let (t, s, d) = (&self.table, &self.segments, &self.dictionary);
        match self.step {
            Step::Schemas | Step::Probe | Step::Done => {
                let exists = |schema: &str, table: &str| {
                    format!(
                        "CASE WHEN EXISTS (SELECT 1 FROM information_schema.tables WHERE \
                         table_schema = {schema} AND table_name = '{table}') THEN 'true' ELSE 'false' END"
                    )
                };
                // The lease's database: the one named, else the connection's (the URL's).
                let lease = self
                    .lease_schema
                    .as_ref()
                    .map_or_else(|| "DATABASE()".into(), |schema| format!("'{schema}'"));
                format!(
                    "SELECT CAST({MYSQL_NOW_MS} AS CHAR), {}, {}, CASE WHEN {} = 'true' AND {} = 'true' \
                     THEN 'true' ELSE 'false' END, {}, CASE WHEN EXISTS (SELECT 1 FROM \
                     information_schema.columns WHERE table_schema = '{s}' AND table_name = 'shardid_tags' \
                     AND column_name = 'rate') THEN 'true' ELSE 'false' END, {}, {}, \
                     CONVERT({lease} USING utf8mb4)",
                    exists(&lease, t),
                    exists(&format!("'{s}'"), "shardid_tags"),
                    exists(&format!("'{d}'"), "shardid_topics"),
                    exists(&format!("'{d}'"), "shardid_strings"),
                    exists(&format!("'{s}'"), "shardid_serials"),
                    exists(&format!("'{s}'"), "shardid_tag_fence"),
                    exists(&format!("'{d}'"), "shardid_topic_fence"),
                )
            }
            Step::Leases => {
                let ms = |c: &str| {
                    format!(
                        "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {c}) DIV 1000 AS CHAR)"
                    )
                };
                format!(
                    "SELECT CONVERT(layout USING utf8mb4), CAST(shard AS CHAR), CAST(ceiling AS CHAR), \
                     CONVERT(holder USING utf8mb4), {}, CASE WHEN expires_at = '9999-12-31 23:59:59' \
                     THEN 'infinity' ELSE {} END FROM {} WHERE layout <> '' ORDER BY layout, shard",
                    ms("taken_at"),
                    ms("expires_at"),
                    // As the lease names it: the named database's, else the connection's.
                    self.lease_schema
                        .as_ref()
                        .map_or_else(|| format!("`{t}`"), |schema| format!("`{schema}`.`{t}`"))
                )
            }
            Step::Registrations => format!(
                "SELECT CONVERT(tag USING utf8mb4), CONVERT(format USING utf8mb4), \
                 CONVERT(zone USING utf8mb4) FROM {s}.shardid_serials"
            ),
            // The rate, the open window (its start `window_ms` is Unix ms already) and the
            // width of the serial whose period a tag is (registrations are text, tags bytes:
            // compared as bytes).
            Step::Tags => format!(
                "SELECT CONVERT(t.tag USING utf8mb4), CAST(t.next AS CHAR), CAST(t.step AS CHAR), \
                 CAST(t.stride AS CHAR), CAST(FLOOR(UNIX_TIMESTAMP(t.updated_at) * 1000) AS CHAR), {}, {} \
                 FROM {s}.shardid_tags t ORDER BY t.tag",
                if self.rates {
                    "CAST(t.rate AS CHAR), CAST(t.window_n AS CHAR), CAST(t.window_ms AS CHAR)"
                } else {
                    "NULL, NULL, NULL"
                },
                if self.serials {
                    format!(
                        "(SELECT CAST(r.width AS CHAR) FROM {s}.shardid_serials r \
                         WHERE CAST(r.tag AS BINARY) = SUBSTRING_INDEX(t.tag, '@', 1))"
                    )
                } else {
                    "NULL".into()
                }
            ),
            Step::Topics => format!(
                "SELECT CONVERT(t.topic USING utf8mb4), CAST(t.next AS CHAR), \
                 CASE WHEN t.dropped_at IS NULL THEN 'false' ELSE 'true' END, \
                 CAST((SELECT COUNT(*) FROM {d}.shardid_strings s WHERE s.topic_id = t.topic_id) AS CHAR) \
                 FROM {d}.shardid_topics t ORDER BY t.topic"
            ),
        }
    }

    /// SQLite's statement of the current step (not [`Step::Done`]); see the module docs.
    fn sqlite_next(&self) -> String {
        let (t, s, d) = (&self.table, &self.segments, &self.dictionary);
        // A table of an attached schema; `'false'` for a schema that is not attached.
        let exists = |attached: bool, schema: &str, table: &str| {
            if attached {
                format!(
                    "CASE WHEN EXISTS (SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' \
                     AND name = '{table}') THEN 'true' ELSE 'false' END"
                )
            } else {
                "'false'".into()
            }
        };
        let [seg, dict] = self.attached;
        // The lease's attached database: the one named, else `main` (the lease's default).
        let lease = self.lease_schema.as_deref().unwrap_or(SQLITE_SCHEMA);
        match self.step {
            Step::Schemas | Step::Done => {
                "SELECT group_concat(name, ' ') AS c0 FROM pragma_database_list".into()
            }
            Step::Probe => format!(
                "SELECT CAST({SQLITE_NOW_MS} AS TEXT) AS c0, {} AS c1, {} AS c2, \
                 CASE WHEN {} = 'true' AND {} = 'true' THEN 'true' ELSE 'false' END AS c3, {} AS c4, \
                 'false' AS c5, {} AS c6, {} AS c7, '{lease}' AS c8",
                exists(self.lease_attached, lease, t),
                exists(seg, s, "shardid_tags"),
                exists(dict, d, "shardid_topics"),
                exists(dict, d, "shardid_strings"),
                exists(seg, s, "shardid_serials"),
                exists(seg, s, "shardid_tag_fence"),
                exists(dict, d, "shardid_topic_fence"),
            ),
            // Released rows have no expiry (NULL); SQLite has no session leases.
            Step::Leases => format!(
                "SELECT layout AS c0, CAST(shard AS TEXT) AS c1, CAST(ceiling AS TEXT) AS c2, \
                 holder AS c3, CAST(taken_at AS TEXT) AS c4, CAST(expires_at AS TEXT) AS c5 \
                 FROM {lease}.{t} WHERE layout <> '' ORDER BY layout, shard"
            ),
            Step::Registrations => {
                format!("SELECT tag AS c0, format AS c1, zone AS c2 FROM {s}.shardid_serials")
            }
            // No rate: one file has no failover to skip past.
            Step::Tags => format!(
                "SELECT t.tag AS c0, CAST(t.next AS TEXT) AS c1, CAST(t.step AS TEXT) AS c2, \
                 CAST(t.stride AS TEXT) AS c3, CAST(t.updated_at AS TEXT) AS c4, NULL AS c5, \
                 NULL AS c6, NULL AS c7, {} AS c8 FROM {s}.shardid_tags AS t ORDER BY t.tag",
                if self.serials {
                    format!(
                        "(SELECT CAST(r.width AS TEXT) FROM {s}.shardid_serials AS r WHERE r.tag = \
                         substr(t.tag, 1, instr(t.tag || '@', '@') - 1))"
                    )
                } else {
                    "NULL".into()
                }
            ),
            Step::Topics => format!(
                "SELECT t.topic AS c0, CAST(t.next AS TEXT) AS c1, \
                 CASE WHEN t.dropped_at IS NULL THEN 'false' ELSE 'true' END AS c2, \
                 CAST((SELECT count(*) FROM {d}.shardid_strings AS s WHERE s.topic_id = t.topic_id) AS TEXT) AS c3 \
                 FROM {d}.shardid_topics AS t ORDER BY t.topic"
            ),
        }
    }

    /// After the probe: where the lease table is (column 8) and, on PostgreSQL, whose
    /// (columns 9 to 11); a table found through `search_path` that none of the current user's
    /// roles owns is not read ([`Self::lease_schema`]).
    fn lease_found(&mut self, row: &Row) -> Result<(), String> {
        if !self.present[0] {
            return Ok(());
        }
        let schema = text(row, 8)?;
        self.lease_at = Some(schema.into());
        if self.family == Dialect::Postgres
            && self.lease_schema.is_none()
            && cell(row, 10) != Some("true")
        {
            let owner = cell(row, 9).unwrap_or("?");
            let user = cell(row, 11).unwrap_or("?");
            self.leases_not_read = Some(format!(
                "{}, found through search_path, is owned by role {owner}, which user {user} \
                 neither is nor is a member of: a lease run as {user} refuses it, so its rows are \
                 not shown as the application's; name the lease's schema (--lease-schema S) to \
                 read a table whoever owns it",
                self.lease_table()
            ));
            self.present[0] = false;
        }
        Ok(())
    }

    /// After the probe, under `restored`: the statements marking the lease table (issue 54).
    /// Every lease's next claim reads the mark: a shard's row the restored data lacks, or one
    /// last taken before the mark, starts past what a lost holder could have dated
    /// ([`super::LeaseProtocol`]). A table the probe did not find is made where a lease makes
    /// it (on PostgreSQL in the schema named, else the connection's current schema, where a
    /// lease of the same user makes it, and only where the user may create tables: where it
    /// may not, neither could its leases, and `restored` must not fail for an application
    /// without leases; each statement returns no row), so a backup taken before any lease ran
    /// is marked too: the lost holders made the table after it. Another role's table found
    /// through `search_path` is neither marked nor read.
    fn lease_marks_due(&self) -> Vec<String> {
        if !self.mark_restored || self.leases_not_read.is_some() {
            return Vec::new();
        }
        let t = &self.table;
        let exists = self.present[0];
        match self.family {
            Dialect::Postgres => {
                let schema = self.lease_at.as_ref().or(self.lease_schema.as_ref());
                let name = schema.map_or_else(
                    // No schema named, no table found: made in the current schema (the first
                    // of `search_path` that exists), and marked there through the same path.
                    || format!("\"{t}\""),
                    |schema| format!("\"{schema}\".\"{t}\""),
                );
                if exists || self.lease_creatable {
                    super::lease::mark_restored(self.family, &name, exists)
                } else {
                    Vec::new()
                }
            }
            Dialect::Mysql | Dialect::Mariadb => super::lease::mark_restored(
                self.family,
                &self
                    .lease_schema
                    .as_ref()
                    .map_or_else(|| format!("`{t}`"), |schema| format!("`{schema}`.`{t}`")),
                exists,
            ),
            Dialect::Sqlite if self.lease_attached => super::sqlite::mark_lease_restored(
                self.lease_schema.as_deref().unwrap_or(SQLITE_SCHEMA),
                t,
            )
            .into(),
            Dialect::Sqlite => Vec::new(),
        }
    }

    /// After the probe, under `restored --after`: each tag or topic named has its table, and
    /// what needs no registration is resolved.
    fn check_afters(&mut self) -> Result<(), String> {
        if let Some(a) = self
            .afters
            .iter()
            .find(|a| !self.present[if a.topic { 2 } else { 1 }])
        {
            return Err(format!(
                "--after{} {}: {} has no {} to move (install it first)",
                if a.topic { "-topic" } else { "" },
                a.name,
                if a.topic {
                    &self.dictionary
                } else {
                    &self.segments
                },
                if a.topic { "dictionary" } else { "tags" },
            ));
        }
        if self.mark_restored && !self.afters.is_empty() {
            let serial = self
                .afters
                .iter()
                .any(|a| matches!(a.last, AfterValue::Serial(_)));
            if serial && !self.serials {
                self.registrations = Some(Vec::new());
            }
            if !serial || !self.serials {
                self.resolve()?;
            }
        }
        Ok(())
    }

    /// The serial registrations read for `--after`'s serial texts; then the tags.
    fn registered(&mut self, rows: &[Row]) -> Result<(), String> {
        self.registrations = Some(
            rows.iter()
                .map(|row| {
                    Ok((
                        text(row, 0)?.into(),
                        text(row, 1)?.into(),
                        text(row, 2)?.into(),
                    ))
                })
                .collect::<Result<_, String>>()?,
        );
        self.resolve()?;
        self.step = Step::Tags;
        self.marked = 0;
        Ok(())
    }

    /// Takes the rows the last statement of [`Self::next`] returned.
    ///
    /// # Errors
    /// Rows no statement of this module returns (a cell missing or not a number where one is
    /// due), with what was wrong; the reader stays at its step.
    pub fn feed(&mut self, rows: &[Row]) -> Result<(), String> {
        if self.lease_marks.1 < self.lease_marks.0.len() {
            if !rows.is_empty() {
                return Err("the statement marking the lease table restored returned rows".into());
            }
            self.lease_marks.1 += 1;
            return Ok(());
        }
        if self.mark().is_some() {
            if !rows.is_empty() && self.marked < self.marks_without_rows() {
                return Err("the statement marking rows restored returned rows".into());
            }
            self.marked += 1;
            return Ok(());
        }
        match self.step {
            Step::Schemas => {
                let row = rows.first().ok_or("the first statement returned no row")?;
                let names = text(row, 0)?;
                let attached = |schema: &str| names.split(' ').any(|name| name == schema);
                self.attached = [attached(&self.segments), attached(&self.dictionary)];
                self.lease_attached =
                    attached(self.lease_schema.as_deref().unwrap_or(SQLITE_SCHEMA));
                self.step = Step::Probe;
                return Ok(());
            }
            Step::Probe => {
                let row = rows.first().ok_or("the probe returned no row")?;
                self.now_ms = number(row, 0)?;
                for (i, present) in self.present.iter_mut().enumerate() {
                    *present = text(row, i + 1)? == "true";
                }
                self.serials = cell(row, 4) == Some("true");
                self.rates = match self.family {
                    Dialect::Postgres => true,
                    Dialect::Mysql | Dialect::Mariadb => cell(row, 5) == Some("true"),
                    Dialect::Sqlite => false,
                };
                self.fences = [cell(row, 6) == Some("true"), cell(row, 7) == Some("true")];
                self.lease_creatable =
                    self.family == Dialect::Postgres && cell(row, 12) == Some("true");
                self.lease_found(row)?;
                self.check_afters()?;
                self.lease_marks = (self.lease_marks_due(), 0);
            }
            Step::Leases => {
                self.leases = rows
                    .iter()
                    .map(|row| {
                        let expires = text_or_null(row, 5)?;
                        Ok(LeaseRow {
                            signature: text(row, 0)?.into(),
                            shard: number(row, 1)?,
                            ceiling: number(row, 2)?,
                            holder: text_or_null(row, 3)?.map(Into::into),
                            since_ms: text_or_null(row, 4)?.map(parse).transpose()?,
                            session: expires == Some("infinity"),
                            expires_ms: expires
                                .filter(|e| *e != "infinity")
                                .map(parse)
                                .transpose()?,
                        })
                    })
                    .collect::<Result<_, String>>()?;
            }
            Step::Registrations => return self.registered(rows),
            Step::Tags => {
                self.tags = rows
                    .iter()
                    .map(|row| {
                        Ok(TagRow {
                            tag: text(row, 0)?.into(),
                            next: number(row, 1)?,
                            segment: number(row, 2)?,
                            stride: number(row, 3)?,
                            last_take_ms: number(row, 4)?,
                            rate: cell(row, 5).and_then(|c| c.parse::<f64>().ok()),
                            window_n: cell(row, 6).map(parse).transpose()?,
                            window_at_ms: cell(row, 7).map(parse).transpose()?,
                            width: cell(row, 8).map(parse).transpose()?,
                        })
                    })
                    .collect::<Result<_, String>>()?;
            }
            Step::Topics => {
                self.topics = rows
                    .iter()
                    .map(|row| {
                        Ok(TopicRow {
                            topic: text(row, 0)?.into(),
                            next: number(row, 1)?,
                            dropped: text(row, 2)? == "true",
                            strings: number(row, 3)?,
                        })
                    })
                    .collect::<Result<_, String>>()?;
            }
            Step::Done => return Err("no statement is due".into()),
        }
        self.advance();
        Ok(())
    }

    /// Moves past the statement just fed, and past the reads of absent tables.
    fn advance(&mut self) {
        let order = [Step::Leases, Step::Tags, Step::Topics];
        let from = match self.step {
            Step::Schemas | Step::Probe => 0,
            Step::Leases | Step::Registrations => 1,
            Step::Tags => 2,
            Step::Topics | Step::Done => 3,
        };
        self.marked = 0;
        self.step = (from..3)
            .find(|&i| self.present[i])
            .map_or(Step::Done, |i| order[i]);
        if self.step == Step::Tags
            && self.mark_restored
            && self.registrations.is_none()
            && self.serials
            && self
                .afters
                .iter()
                .any(|a| matches!(a.last, AfterValue::Serial(_)))
        {
            self.step = Step::Registrations;
        }
    }

    /// The report, once [`Self::next`] says `None` (before that, what was read so far).
    #[allow(clippy::too_many_lines)] // one section after the other, in the order shown
    pub fn report(&self) -> Report {
        let now = self.now_ms;
        let leases = self
            .leases
            .iter()
            .map(|r| {
                let layout = from_signature(&r.signature);
                Lease {
                    layout: layout.map_or_else(|| "unknown".into(), layout_name),
                    signature: r.signature.clone(),
                    shard: r.shard,
                    holder: r.holder.clone(),
                    since_ms: r.since_ms,
                    ceiling: r.ceiling,
                    ceiling_ms: layout.and_then(|l| {
                        r.ceiling
                            .checked_mul(l.unit_ms())
                            .and_then(|ms| ms.checked_add(l.epoch_ms()))
                    }),
                    expires_ms: r.expires_ms,
                    session: r.session,
                    state: if r.session {
                        "session"
                    } else {
                        match r.expires_ms {
                            None => "free",
                            Some(e) if e <= now => "expired",
                            Some(_) => "held",
                        }
                    },
                }
            })
            .collect::<Vec<_>>();
        let tags = self
            .tags
            .iter()
            .map(|r| {
                let per_second = burn_rate(r.segment, r.stride, r.last_take_ms, now);
                let left = years_left(r.next, per_second);
                Tag {
                    tag: r.tag.clone(),
                    next: r.next,
                    segment: r.segment,
                    stride: r.stride,
                    last_take_ms: r.last_take_ms,
                    per_second,
                    years_left: left,
                    runs_out_ms: left.and_then(|y| after(now, y)),
                }
            })
            .collect::<Vec<_>>();
        let topics = self
            .topics
            .iter()
            .map(|r| Topic {
                topic: r.topic.clone(),
                strings: r.strings,
                last_id: r.next.checked_sub(1),
                dropped: r.dropped,
            })
            .collect();
        let mut layouts = vec![layout_report(self.layout, "option", now)];
        for lease in &self.leases {
            if let Some(l) = from_signature(&lease.signature)
                && !layouts.iter().any(|x: &LayoutReport| x.layout == l)
            {
                layouts.push(layout_report(l, "leases", now));
            }
        }
        let mut warnings: Vec<String> = self.leases_not_read.iter().cloned().collect();
        for l in &layouts {
            if l.warning {
                warnings.push(if l.runs_out_ms <= now {
                    format!("layout {} ran out on {}", l.name, rfc3339(l.runs_out_ms))
                } else {
                    format!(
                        "layout {} runs out on {}, in {:.1} years",
                        l.name,
                        rfc3339(l.runs_out_ms),
                        l.years_left
                    )
                });
            }
        }
        for t in &tags {
            if let Some(y) = t.years_left
                && y < 5.0
            {
                warnings.push(format!(
                    "tag {} runs out of numbers in {y:.1} years at {:.3} a second",
                    Printable(&t.tag),
                    t.per_second
                ));
            }
        }
        // The current period of each serial (the latest tag: periods sort by date) whose
        // numbers left are fewer than one failover would skip.
        let mut latest: Vec<&TagRow> = Vec::new();
        for r in self
            .tags
            .iter()
            .filter(|r| r.width.is_some() && r.rate.is_some())
        {
            let base = r.tag.split('@').next().unwrap_or_default();
            match latest
                .iter_mut()
                .find(|l| l.tag.split('@').next() == Some(base))
            {
                Some(l) if l.tag < r.tag => *l = r,
                Some(_) => {}
                None => latest.push(r),
            }
        }
        for r in latest {
            let (Some(width), Some(rate)) = (r.width, r.rate) else {
                continue;
            };
            let last = 10u64.saturating_pow(u32::try_from(width).unwrap_or(u32::MAX)) - 1;
            let left = (last + 1).saturating_sub(r.next);
            #[allow(clippy::cast_precision_loss)]
            let window_s = r
                .window_at_ms
                .map_or(0.0, |w| r.last_take_ms.saturating_sub(w) as f64 / 1000.0);
            // Per ticket server on the MySQL family, whose skip is times the row's stride (1
            // on PostgreSQL).
            let skip = failover_skip(r.segment, rate, r.window_n.unwrap_or(0), window_s)
                .saturating_mul(r.stride.max(1));
            if left < skip {
                warnings.push(format!(
                    "serial period {} has {left} numbers left, fewer than a failover skips now ({skip}): \
                     after one, its serials fail with SERIAL_OVERFLOW until the next period",
                    Printable(&r.tag)
                ));
            }
            // After a restore (issue 54): how much of the period its numbers (a skip's
            // included) used, and when the rest runs out at the rate the row recorded, when
            // that is before the period can have ended.
            if let Some(warning) = period_running_out(&r.tag, r.next, last, rate, now) {
                warnings.push(warning);
            }
        }
        Report {
            database: self.family.family_name(),
            now_ms: now,
            table: self.lease_table(),
            leases_not_read: self.leases_not_read.clone(),
            segments_schema: self.segments.clone(),
            dictionary_schema: self.dictionary.clone(),
            leases: self.present[0].then_some(leases),
            tags: self.present[1].then_some(tags),
            topics: self.present[2].then_some(topics),
            layouts,
            warnings,
            after: self
                .afters
                .iter()
                .filter_map(|a| {
                    a.resolved
                        .as_ref()
                        .map(|(target, last)| (a.topic, target.clone(), last + 1))
                })
                .collect(),
            restored: self.mark_restored.then(|| {
                (
                    if self.present[1] { self.tags.len() } else { 0 },
                    if self.present[2] {
                        self.topics.len()
                    } else {
                        0
                    },
                )
            }),
        }
    }
}

#[derive(Clone, Debug)]
struct LeaseRow {
    signature: String,
    shard: u64,
    ceiling: u64,
    holder: Option<String>,
    since_ms: Option<u64>,
    expires_ms: Option<u64>,
    session: bool,
}

#[derive(Clone, Debug)]
struct TagRow {
    tag: String,
    next: u64,
    segment: u64,
    stride: u64,
    last_take_ms: u64,
    // What a step back would skip (None on SQLite and in tables of an older version).
    rate: Option<f64>,
    window_n: Option<u64>,
    window_at_ms: Option<u64>,
    // The width of the serial whose period this tag is.
    width: Option<u64>,
}

#[derive(Clone, Debug)]
struct TopicRow {
    topic: String,
    next: u64,
    dropped: bool,
    strings: u64,
}

/// A cell that older statements' rows may lack.
fn cell(row: &Row, i: usize) -> Option<&str> {
    row.get(i).and_then(Option::as_deref)
}

/// What one failover skips of a tag (see [`super::failover`]): the rate-based skip for a row
/// last written 1 s before a promotion (a second of WAL lost, promoted at once), its stride 1.
pub fn failover_skip(step: u64, rate: f64, window_n: u64, window_s: f64) -> u64 {
    use super::failover::{FLOOR_BATCHES, MARGIN, RATE_WINDOW_MS, SKEW_MS};
    #[allow(clippy::cast_precision_loss)] // figures for a warning
    let open = window_n as f64 / window_s.max(RATE_WINDOW_MS as f64 / 1000.0);
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let by_rate = (MARGIN as f64 * rate.max(open) * (1.0 + SKEW_MS as f64 / 1000.0)).ceil() as u64;
    FLOOR_BATCHES
        .saturating_mul(2)
        .saturating_mul(step.max(1))
        .saturating_add(by_rate)
}

fn text_or_null(row: &Row, i: usize) -> Result<Option<&str>, String> {
    row.get(i)
        .map(Option::as_deref)
        .ok_or_else(|| format!("a row of {} cells, not more than {i}", row.len()))
}

fn text(row: &Row, i: usize) -> Result<&str, String> {
    text_or_null(row, i)?.ok_or_else(|| format!("cell {i} is NULL"))
}

fn parse(cell: &str) -> Result<u64, String> {
    crate::parse_decimal(cell.as_bytes()).ok_or_else(|| {
        format!(
            "{:?} is not a number in 0..2^64",
            cell.chars().take(40).collect::<String>()
        )
    })
}

fn number(row: &Row, i: usize) -> Result<u64, String> {
    parse(text(row, i)?)
}

/// A layout read back from its lease signature (`epoch_ms=.. unit_ms=.. bits=t/s/q order=..`),
/// signed (IDs in a `bigint` column); `None` for text no lease wrote.
pub fn from_signature(signature: &str) -> Option<Layout> {
    let mut epoch = None;
    let mut unit = None;
    let mut bits = None;
    let mut order = None;
    for part in signature.split(' ') {
        let (key, value) = part.split_once('=')?;
        match key {
            "epoch_ms" => epoch = crate::parse_decimal(value.as_bytes()),
            "unit_ms" => unit = crate::parse_decimal(value.as_bytes()),
            "bits" => {
                let mut it = value.split('/').map(|b| b.parse::<u8>().ok());
                bits = Some((it.next()??, it.next()??, it.next()??));
            }
            "order" => {
                order = match value {
                    "TimeShardSequence" => Some(FieldOrder::TimeShardSequence),
                    "TimeSequenceShard" => Some(FieldOrder::TimeSequenceShard),
                    _ => None,
                }
            }
            _ => return None,
        }
    }
    let (time, shard, sequence) = bits?;
    Layout::builder()
        .epoch_ms(epoch?)
        .unit_ms(unit?)
        .bits(time, shard, sequence)
        .order(order?)
        .signed(true)
        .build()
        .ok()
}

fn layout_name(layout: Layout) -> String {
    layout
        .preset_name()
        .map_or_else(|| "custom".into(), str::to_ascii_lowercase)
}

/// Numbers a second a tag burns, estimated from one reading (see the module docs).
pub fn burn_rate(segment: u64, stride: u64, last_take_ms: u64, now_ms: u64) -> f64 {
    if segment == 0 {
        return 0.0;
    }
    let window = now_ms.saturating_sub(last_take_ms).max(TARGET_MS);
    #[allow(clippy::cast_precision_loss)]
    let rate = (segment as f64) * (stride.max(1) as f64) * 1000.0 / (window as f64);
    rate
}

/// The warning of a serial period `tag` (`base@2026-12-08`, `@2026-12`, `@2026`) at `next`
/// whose format holds numbers up to `last`, when it used at least a tenth of them
/// ([`PERIOD_USED_WARNING`]: after a restore, mostly its skip) and at `rate` numbers a second
/// the rest runs out before the period can have ended (its last instant in any zone: 12 h after midnight
/// UTC of its last day's end), read at `now_ms`: how much of it was used (after a restore,
/// mostly its skip) and when the rest runs out. `None` otherwise, or for a period that never
/// ends.
pub fn period_running_out(
    tag: &str,
    next: u64,
    last: u64,
    rate: f64,
    now_ms: u64,
) -> Option<String> {
    let (_, period) = tag.rsplit_once('@')?;
    let number = |range: core::ops::Range<usize>| period.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7), number(8..10));
    // The first day after the period, then its noon UTC (UTC-12 is the latest zone).
    let (y, m, d) = match (period.len(), month, day) {
        (4, _, _) => (year + 1, 1, 1),
        (7, Some(m), _) => (year + i64::from(m == 12), m % 12 + 1, 1),
        (10, Some(m), Some(d)) => (year, m, d + 1),
        _ => return None,
    };
    let end_ms = u64::try_from(days_from_civil(y, m, d) * 86_400_000 + 12 * 3_600_000).ok()?;
    // Its first instant, at the earliest (UTC+14): a period not begun yet is not warned about.
    let start = days_from_civil(year, month.unwrap_or(1), day.unwrap_or(1)) * 86_400_000;
    let begun = i64::try_from(now_ms).is_ok_and(|now| now >= start - 14 * 3_600_000);
    let used_enough = u128::from(next.saturating_sub(1)) * u128::from(PERIOD_USED_WARNING.1)
        >= u128::from(last) * u128::from(PERIOD_USED_WARNING.0);
    if rate <= 0.0 || next > last + 1 || now_ms >= end_ms || !begun || !used_enough {
        return None;
    }
    let left = last + 1 - next;
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let runs_out_ms = now_ms.saturating_add((left as f64 / rate * 1000.0) as u64);
    if runs_out_ms >= end_ms {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let used = (next - 1) as f64 * 100.0 / last as f64;
    Some(format!(
        "serial period {} has used {used:.1}% of its numbers ({} of {last}; after a restore, mostly its skip): \
         at its recorded rate ({rate:.1}/s) the rest runs out at {}, before the period ends; its serials then \
         fail with SERIAL_OVERFLOW until the next period (shardid restored --after gives the last serial issued)",
        Printable(tag),
        next - 1,
        rfc3339(runs_out_ms)
    ))
}

/// How much of a serial period's numbers used is worth a warning when the rest runs out
/// before the period ends ([`period_running_out`]): a tenth (`numerator / denominator`).
pub const PERIOD_USED_WARNING: (u64, u64) = (1, 10);

/// Days from 1970-01-01 to the civil date `y-m-d` (`d` may be one past the month's end).
const fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Years before a tag at `next` reaches 2^63 − 1 at `per_second`; `None` at a rate of 0.
pub fn years_left(next: u64, per_second: f64) -> Option<f64> {
    if per_second <= 0.0 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let left = LAST_NUMBER.saturating_sub(next) as f64;
    #[allow(clippy::cast_precision_loss)]
    Some(left / per_second * 1000.0 / YEAR_MS as f64)
}

/// Years past which [`years_text`] stops counting: a figure a person reads at a glance.
pub const YEARS_SHOWN: f64 = 1000.0;

/// Years left as a person reads them at a glance, as the text report and the Django admin show
/// them: `never` (`None`), one decimal up to [`YEARS_SHOWN`], and `> 1,000` above (a slow tag
/// has billions of years left, which no one needs to the decimal).
pub fn years_text(years: Option<f64>) -> String {
    match years {
        None => "never".into(),
        Some(y) if y > YEARS_SHOWN => "> 1,000".into(),
        Some(y) => format!("{y:.1}"),
    }
}

/// `now_ms` plus `years` of [`YEAR_MS`], when that is a time RFC 3339 can show (before 10000).
fn after(now_ms: u64, years: f64) -> Option<u64> {
    const YEAR_10000_MS: u64 = 253_402_300_800_000;
    #[allow(clippy::cast_precision_loss)]
    let ms = now_ms as f64 + years * YEAR_MS as f64;
    #[allow(clippy::cast_precision_loss)]
    if ms < YEAR_10000_MS as f64 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(ms as u64)
    } else {
        None
    }
}

fn layout_report(layout: Layout, source: &'static str, now_ms: u64) -> LayoutReport {
    let runs_out_ms = layout.expires_at_ms();
    #[allow(clippy::cast_precision_loss)]
    let years_left = (runs_out_ms as f64 - now_ms as f64) / YEAR_MS as f64;
    LayoutReport {
        name: layout_name(layout),
        signature: super::LeaseSignature(layout).to_string(),
        layout,
        source,
        runs_out_ms,
        years_left,
        warning: layout.runs_out_soon(now_ms),
    }
}

/// What `shardid status` reports: [`StatusReader::report`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Report {
    /// `"postgres"`, `"mysql"` (MySQL and MariaDB) or `"sqlite"`.
    pub database: &'static str,
    /// The server's clock when the status was read, Unix milliseconds.
    pub now_ms: u64,
    /// The lease table, `schema.table` once its schema is known (named, or where it was found).
    pub table: String,
    /// Why the lease rows were not read (`leases` is then `None`): on PostgreSQL, another
    /// role's table found through `search_path` ([`StatusReader::lease_schema`]).
    pub leases_not_read: Option<String>,
    /// The schema of the tags.
    pub segments_schema: String,
    /// The schema of the topics.
    pub dictionary_schema: String,
    /// The leases, or `None` when the table does not exist.
    pub leases: Option<Vec<Lease>>,
    /// The tags, or `None` when the table does not exist.
    pub tags: Option<Vec<Tag>>,
    /// The topics, or `None` when the tables do not exist.
    pub topics: Option<Vec<Topic>>,
    /// The layouts: `--layout`'s first, then the lease rows'.
    pub layouts: Vec<LayoutReport>,
    /// The warnings, one sentence each.
    pub warnings: Vec<String>,
    /// `shardid restored`: how many tags and topics it marked restored (`None`: a status).
    pub restored: Option<(usize, usize)>,
    /// `shardid restored --after`: each tag's (`false`) or topic's (`true`) first number now,
    /// right past the one the operator gave plus the margin.
    pub after: Vec<(bool, String, u64)>,
}

/// A row of the lease table.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Lease {
    /// The layout's name (a preset's, `custom`, or `unknown` for a signature no lease wrote).
    pub layout: String,
    /// The layout's numbers as the row records them.
    pub signature: String,
    /// The shard.
    pub shard: u64,
    /// Who holds it (host and process), or held it last.
    pub holder: Option<String>,
    /// When it was taken, Unix ms.
    pub since_ms: Option<u64>,
    /// The ceiling, in the layout's time units.
    pub ceiling: u64,
    /// The ceiling as a time, Unix ms.
    pub ceiling_ms: Option<u64>,
    /// When the lease expires (`None`: released, or a session lease).
    pub expires_ms: Option<u64>,
    /// A session lease (held while its holder's session holds a lock).
    pub session: bool,
    /// `held`, `expired`, `free` or `session`.
    pub state: &'static str,
}

/// A tag of segments.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Tag {
    /// The tag.
    pub tag: String,
    /// The next number it hands out.
    pub next: u64,
    /// The size of its last segment (0: none taken yet).
    pub segment: u64,
    /// The stride (ticket servers; 1 on PostgreSQL, whose rows do not record it).
    pub stride: u64,
    /// When the last segment was taken, Unix ms.
    pub last_take_ms: u64,
    /// Numbers a second, estimated ([`burn_rate`]).
    pub per_second: f64,
    /// Years before 2^63 at that rate (`None`: never).
    pub years_left: Option<f64>,
    /// When, Unix ms (`None`: never, or after the year 9999).
    pub runs_out_ms: Option<u64>,
}

/// A topic of the dictionary.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Topic {
    /// The topic.
    pub topic: String,
    /// How many strings it holds.
    pub strings: u64,
    /// The last ID it assigned (`None`: none yet).
    pub last_id: Option<u64>,
    /// Dropped (its name is never used again).
    pub dropped: bool,
}

/// A layout and when it runs out.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LayoutReport {
    /// A preset's name or `custom`.
    pub name: String,
    /// Its numbers, as lease rows record them.
    pub signature: String,
    /// The layout.
    pub layout: Layout,
    /// `option` (`--layout`, or the default) or `leases` (a lease row's).
    pub source: &'static str,
    /// Its run-out date, Unix ms.
    pub runs_out_ms: u64,
    /// Years from the server's clock to it (negative once past).
    pub years_left: f64,
    /// Within [`WARN_MS`] of the server's clock, or past.
    pub warning: bool,
}

/// Text as a JSON string.
struct Json<'a>(&'a str);

impl core::fmt::Display for Json<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}

/// Text as the text report shows it: control characters as `?`.
struct Printable<'a>(&'a str);

impl core::fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for c in self.0.chars() {
            f.write_char(if c.is_control() { '?' } else { c })?;
        }
        Ok(())
    }
}

fn json_time(ms: Option<u64>) -> String {
    ms.map_or_else(|| "null".into(), |ms| format!("\"{}\"", rfc3339(ms)))
}

fn json_opt_text(text: Option<&str>) -> String {
    text.map_or_else(|| "null".into(), |t| Json(t).to_string())
}

impl Report {
    /// Whether there is a warning (`--check` exits 1).
    pub fn warned(&self) -> bool {
        !self.warnings.is_empty()
    }

    /// The report as one line of JSON (schema version 1; the book's CLI reference lists the
    /// fields).
    #[allow(clippy::too_many_lines)] // one section after the other, in the order shown
    pub fn json(&self) -> String {
        let mut o = String::new();
        _ = write!(
            o,
            "{{\"version\":1,\"database\":\"{}\",\"now\":\"{}\",\"now_ms\":{}",
            self.database,
            rfc3339(self.now_ms),
            self.now_ms
        );
        if let Some((tags, topics)) = self.restored {
            _ = write!(o, ",\"restored\":{{\"tags\":{tags},\"topics\":{topics}");
            if !self.after.is_empty() {
                let after: Vec<String> = self
                    .after
                    .iter()
                    .map(|(topic, name, first)| {
                        format!(
                            "{{\"{}\":{},\"first\":{first}}}",
                            if *topic { "topic" } else { "tag" },
                            Json(name)
                        )
                    })
                    .collect();
                _ = write!(o, ",\"after\":[{}]", after.join(","));
            }
            o.push('}');
        }
        let section = |o: &mut String, name: &str, table: &str, rows: Option<Vec<String>>| {
            // A table found but not read says why (the leases only: another role's).
            let not_read = match &self.leases_not_read {
                Some(why) if name == "leases" => format!(",\"not_read\":{}", Json(why)),
                _ => String::new(),
            };
            _ = write!(
                o,
                ",\"{name}\":{{\"table\":{},\"present\":{}{not_read},\"rows\":[{}]}}",
                Json(table),
                rows.is_some(),
                rows.unwrap_or_default().join(",")
            );
        };
        let leases = self.leases.as_ref().map(|rows| {
            rows.iter()
                .map(|l| {
                    format!(
                        "{{\"layout\":{},\"signature\":{},\"shard\":{},\"holder\":{},\"since\":{},\
                         \"ceiling\":{},\"ceiling_time\":{},\"expires\":{},\"session\":{},\"state\":\"{}\"}}",
                        Json(&l.layout),
                        Json(&l.signature),
                        l.shard,
                        json_opt_text(l.holder.as_deref()),
                        json_time(l.since_ms),
                        l.ceiling,
                        json_time(l.ceiling_ms),
                        json_time(l.expires_ms),
                        l.session,
                        l.state
                    )
                })
                .collect()
        });
        section(&mut o, "leases", &self.table, leases);
        let tags = self.tags.as_ref().map(|rows| {
            rows.iter()
                .map(|t| {
                    format!(
                        "{{\"tag\":{},\"next\":\"{}\",\"segment\":{},\"stride\":{},\"last_take\":\"{}\",\
                         \"per_second\":{:.3},\"years_left\":{},\"years_left_text\":{},\"runs_out\":{}}}",
                        Json(&t.tag),
                        t.next,
                        t.segment,
                        t.stride,
                        rfc3339(t.last_take_ms),
                        t.per_second,
                        t.years_left
                            .map_or_else(|| "null".into(), |y| format!("{y:.1}")),
                        Json(&years_text(t.years_left)),
                        json_time(t.runs_out_ms)
                    )
                })
                .collect()
        });
        section(
            &mut o,
            "tags",
            &format!("{}.shardid_tags", self.segments_schema),
            tags,
        );
        let topics = self.topics.as_ref().map(|rows| {
            rows.iter()
                .map(|t| {
                    format!(
                        "{{\"topic\":{},\"strings\":{},\"last_id\":{},\"dropped\":{}}}",
                        Json(&t.topic),
                        t.strings,
                        t.last_id
                            .map_or_else(|| "null".into(), |id| format!("\"{id}\"")),
                        t.dropped
                    )
                })
                .collect()
        });
        section(
            &mut o,
            "topics",
            &format!("{}.shardid_topics", self.dictionary_schema),
            topics,
        );
        let layouts: Vec<String> = self
            .layouts
            .iter()
            .map(|l| {
                format!(
                    "{{\"name\":{},\"signature\":{},\"source\":\"{}\",\"runs_out\":\"{}\",\
                     \"runs_out_ms\":{},\"years_left\":{:.1},\"warning\":{}}}",
                    Json(&l.name),
                    Json(&l.signature),
                    l.source,
                    rfc3339(l.runs_out_ms),
                    l.runs_out_ms,
                    l.years_left,
                    l.warning
                )
            })
            .collect();
        let warnings: Vec<String> = self.warnings.iter().map(|w| Json(w).to_string()).collect();
        _ = writeln!(
            o,
            ",\"layouts\":[{}],\"warnings\":[{}]}}",
            layouts.join(","),
            warnings.join(",")
        );
        o
    }

    /// The report as text: a section per table, then the layouts and the warnings.
    #[allow(clippy::too_many_lines)] // one section after the other, in the order shown
    pub fn text(&self) -> String {
        let mut o = String::new();
        _ = writeln!(
            o,
            "database  {} (server clock {})",
            self.database,
            rfc3339(self.now_ms)
        );
        if let Some((tags, topics)) = self.restored {
            _ = writeln!(
                o,
                "marked restored: {tags} tag{}, {topics} topic{} (the next take of each skips what its rate could have handed out)",
                if tags == 1 { "" } else { "s" },
                if topics == 1 { "" } else { "s" }
            );
            for (topic, name, first) in &self.after {
                _ = writeln!(
                    o,
                    "{} {} starts at {first} (--after: the number given, plus the margin, plus 1; not by its rate)",
                    if *topic { "topic" } else { "tag" },
                    Printable(name)
                );
            }
        }
        let dash = |ms: Option<u64>| ms.map_or_else(|| "-".into(), rfc3339);
        o.push('\n');
        if let Some(why) = &self.leases_not_read {
            _ = writeln!(o, "leases ({}): not read: {why}\n", self.table);
        } else {
            table(
                &mut o,
                &format!("leases ({})", self.table),
                &[
                    "layout", "shard", "holder", "since", "ceiling", "expires", "state",
                ],
                self.leases.as_ref().map(|rows| {
                    rows.iter()
                        .map(|l| {
                            vec![
                                l.layout.clone(),
                                l.shard.to_string(),
                                l.holder
                                    .as_deref()
                                    .map_or_else(|| "-".into(), |h| Printable(h).to_string()),
                                dash(l.since_ms),
                                l.ceiling_ms.map_or_else(|| l.ceiling.to_string(), rfc3339),
                                if l.session {
                                    "never (session)".into()
                                } else {
                                    dash(l.expires_ms)
                                },
                                l.state.into(),
                            ]
                        })
                        .collect()
                }),
            );
        }
        table(
            &mut o,
            &format!("tags ({}.shardid_tags)", self.segments_schema),
            &[
                "tag",
                "next",
                "segment",
                "last take",
                "per second",
                "years left",
            ],
            self.tags.as_ref().map(|rows| {
                rows.iter()
                    .map(|t| {
                        vec![
                            Printable(&t.tag).to_string(),
                            t.next.to_string(),
                            if t.stride > 1 {
                                format!("{}x{}", t.segment, t.stride)
                            } else {
                                t.segment.to_string()
                            },
                            rfc3339(t.last_take_ms),
                            format!("{:.3}", t.per_second),
                            years_text(t.years_left),
                        ]
                    })
                    .collect()
            }),
        );
        table(
            &mut o,
            &format!("topics ({}.shardid_topics)", self.dictionary_schema),
            &["topic", "strings", "last id"],
            self.topics.as_ref().map(|rows| {
                rows.iter()
                    .map(|t| {
                        vec![
                            if t.dropped {
                                format!("{} (dropped)", Printable(&t.topic))
                            } else {
                                Printable(&t.topic).to_string()
                            },
                            t.strings.to_string(),
                            t.last_id.map_or_else(|| "-".into(), |id| id.to_string()),
                        ]
                    })
                    .collect()
            }),
        );
        table(
            &mut o,
            "layouts",
            &["layout", "from", "runs out", "years left", "signature"],
            Some(
                self.layouts
                    .iter()
                    .map(|l| {
                        vec![
                            l.name.clone(),
                            l.source.into(),
                            rfc3339(l.runs_out_ms),
                            years_text(Some(l.years_left)),
                            l.signature.clone(),
                        ]
                    })
                    .collect(),
            ),
        );
        if self.warnings.is_empty() {
            o.push_str("warnings: none\n");
        } else {
            for w in &self.warnings {
                _ = writeln!(o, "warning: {w}");
            }
        }
        o
    }
}

/// A titled table with columns aligned, or "absent" for `None`, or "none" for no rows.
fn table(o: &mut String, title: &str, head: &[&str], rows: Option<Vec<Vec<String>>>) {
    let Some(rows) = rows else {
        _ = writeln!(o, "{title}: absent (not installed)\n");
        return;
    };
    if rows.is_empty() {
        _ = writeln!(o, "{title}: none\n");
        return;
    }
    _ = writeln!(o, "{title}");
    let mut widths: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |o: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::from(" ");
        for (cell, w) in cells.zip(&widths) {
            _ = write!(text, " {cell:<w$}");
        }
        _ = writeln!(o, "{}", text.trim_end());
    };
    line(o, &mut head.iter().copied());
    for row in &rows {
        line(o, &mut row.iter().map(String::as_str));
    }
    o.push('\n');
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_serial_period_running_out_before_it_ends_is_a_warning() {
        // 2026-12-08T06:00Z; the day's period ends at the latest 2026-12-09T12:00Z.
        let now: u64 = 1_796_709_600_000;
        assert_eq!(super::days_from_civil(1970, 1, 1), 0);
        assert_eq!(
            super::days_from_civil(2026, 12, 8) * 86_400_000,
            1_796_709_600_000 - 6 * 3_600_000
        );
        let w = super::period_running_out("inv@2026-12-08", 352_721, 999_999, 200.0, now).unwrap();
        assert!(
            w.starts_with(
                "serial period inv@2026-12-08 has used 35.3% of its numbers (352720 of 999999;"
            ),
            "{w}"
        );
        // 647,279 left at 200/s: 3,236 s, at 06:53:56.395Z.
        assert!(w.contains("runs out at 2026-12-08T06:53:56.395Z"), "{w}");
        // Slower: not before the period ends; a period over, a never-ending one: nothing.
        assert_eq!(
            super::period_running_out("inv@2026-12-08", 352_721, 999_999, 1.0, now),
            None
        );
        assert_eq!(
            super::period_running_out("inv@2026-12-06", 352_721, 999_999, 200.0, now),
            None
        );
        assert_eq!(
            super::period_running_out("inv", 352_721, 999_999, 200.0, now),
            None
        );
        assert!(
            super::period_running_out("inv@2026-12-10", 900_000, 999_999, 200.0, now).is_none()
        );
        assert!(super::period_running_out("inv@2026-12", 900_000, 999_999, 200.0, now).is_some());
        // Less than a tenth used: no warning, however fast.
        assert!(super::period_running_out("inv@2026-12-08", 99_000, 999_999, 1e6, now).is_none());
        assert!(super::period_running_out("inv@2026", 900_000, 999_999, 200.0, now).is_some());
    }

    use super::*;

    #[test]
    fn burn_rate_is_zero_before_the_first_take() {
        assert!(burn_rate(0, 1, 0, 10_000_000).abs() < f64::EPSILON);
        assert_eq!(years_left(5, 0.0), None);
    }

    #[test]
    fn burn_rate_is_a_segment_per_target_or_per_time_since() {
        // Taken just now: 1000 numbers a minute.
        let fresh = burn_rate(1000, 1, 1_000_000, 1_000_000);
        assert!((fresh - 1000.0 / 60.0).abs() < 1e-9, "{fresh}");
        // Taken 10 minutes ago: no faster than 1000 in 10 minutes.
        let old = burn_rate(1000, 2, 0, 600_000);
        assert!((old - 2000.0 / 600.0).abs() < 1e-9, "{old}");
    }

    #[test]
    fn years_left_at_the_edges() {
        // One number a second with one number left: one second.
        let one = years_left(LAST_NUMBER - 1, 1.0).unwrap();
        #[allow(clippy::cast_precision_loss)]
        let second = 1000.0 / YEAR_MS as f64;
        assert!((one - second).abs() < 1e-15, "{one}");
        // At 2^63 - 1 nothing is left; past it (a row no client writes) neither.
        assert!(years_left(LAST_NUMBER, 1.0).unwrap().abs() < f64::EPSILON);
        assert!(years_left(u64::MAX, 1.0).unwrap().abs() < f64::EPSILON);
        // From 0 at a number a millisecond: 2^63 ms, about 292 million years.
        let all = years_left(0, 1000.0).unwrap();
        assert!((all - 292_277_024.627).abs() < 0.01, "{all}");
    }

    #[test]
    fn years_left_are_shown_to_the_decimal_up_to_a_thousand_and_capped_above() {
        assert_eq!(years_text(None), "never");
        assert_eq!(years_text(Some(0.04)), "0.0");
        assert_eq!(years_text(Some(-1.25)), "-1.2");
        assert_eq!(years_text(Some(19.62)), "19.6");
        assert_eq!(years_text(Some(1000.0)), "1000.0");
        assert_eq!(years_text(Some(1000.1)), "> 1,000");
        // A tag taking 33 numbers a second: 8.8 billion years, no figure to read.
        assert_eq!(years_text(years_left(2001, 33.333)), "> 1,000");
    }

    fn layout_at(epoch_ms: u64) -> Layout {
        Layout::builder()
            .epoch_ms(epoch_ms)
            .bits(30, 10, 12)
            .build()
            .unwrap()
    }

    #[test]
    fn run_out_exactly_five_years_away_warns_and_a_millisecond_more_does_not() {
        let layout = layout_at(10 * YEAR_MS);
        let end = layout.expires_at_ms();
        assert!(layout_report(layout, "option", end - WARN_MS).warning);
        assert!(!layout_report(layout, "option", end - WARN_MS - 1).warning);
        // Past its end: a warning, with negative years.
        let past = layout_report(layout, "option", end + 1);
        assert!(past.warning && past.years_left < 0.0);
    }

    fn reader() -> StatusReader {
        StatusReader::new(
            Dialect::Postgres,
            "shardid_leases",
            "seg",
            "dict",
            layout_at(0),
        )
        .unwrap()
    }

    /// A reader of the default schemas in `dialect`, for Instagram's layout.
    fn reader_in(dialect: Dialect) -> StatusReader {
        StatusReader::new(dialect, "shardid_leases", "seg", "dict", Layout::INSTAGRAM).unwrap()
    }

    fn row(cells: &[Option<&str>]) -> Row {
        cells.iter().map(|c| c.map(Into::into)).collect()
    }

    #[test]
    fn absent_tables_are_skipped_and_reported_absent() {
        let mut r = reader();
        assert!(r.next().unwrap().contains("to_regclass"));
        r.feed(&[row(&[
            Some("5000"),
            Some("false"),
            Some("true"),
            Some("false"),
        ])])
        .unwrap();
        assert!(r.next().unwrap().contains("seg.shardid_tags"));
        r.feed(&[row(&[
            Some("t"),
            Some("100"),
            Some("1000"),
            Some("1"),
            Some("5000"),
        ])])
        .unwrap();
        assert_eq!(r.next(), None);
        let report = r.report();
        assert!(report.leases.is_none() && report.topics.is_none());
        assert_eq!(report.tags.as_ref().unwrap().len(), 1);
        assert!(report.text().contains("leases (shardid_leases): absent"));
        assert!(
            report.json().contains(
                "\"leases\":{\"table\":\"shardid_leases\",\"present\":false,\"rows\":[]}"
            )
        );
    }

    #[test]
    fn a_serial_period_narrower_than_a_failovers_skip_is_warned_about() {
        let mut r = reader();
        let probe = r.next().unwrap();
        assert!(probe.contains("seg.shardid_serials"));
        r.feed(&[row(&[
            Some("5000"),
            Some("false"),
            Some("true"),
            Some("false"),
            Some("true"),
        ])])
        .unwrap();
        assert!(r.next().unwrap().contains("split_part(t.tag, '@', 1)"));
        // {seq:3} at 10 a second, 900 taken: a failover skips 4 * 2 * 20 + 4 * 10 * 3 = 280.
        // Yesterday's period (full) is not the current one; a dense tag has no width.
        let tag = |name: &str, next: &str, width: Option<&str>| {
            row(&[
                Some(name),
                Some(next),
                Some("20"),
                Some("1"),
                Some("5000"),
                Some("10"),
                Some("0"),
                Some("4000"),
                width,
            ])
        };
        r.feed(&[
            tag("d", "5", None),
            tag("f@2026-11-27", "1000", Some("3")),
            tag("f@2026-11-28", "901", Some("3")),
            tag("g@2026-11-28", "701", Some("3")),
        ])
        .unwrap();
        let report = r.report();
        let serial: Vec<_> = report
            .warnings
            .iter()
            .filter(|w| w.starts_with("serial"))
            .collect();
        assert_eq!(serial.len(), 1, "{:?}", report.warnings);
        assert!(
            serial[0].starts_with("serial period f@2026-11-28 has 99 numbers left, fewer than a failover skips now (280)"),
            "{}",
            serial[0]
        );
        assert_eq!(failover_skip(20, 10.0, 0, 1.0), 280);
        // The open window's rate when it is higher: 100 numbers over 0.5 s count as over 1 s.
        assert_eq!(failover_skip(1, 0.0, 100, 0.5), 8 + 1200);
    }

    #[test]
    fn a_lease_layout_is_read_back_and_warned_about() {
        let near = layout_at(0); // 30 bits of ms: runs out in 1970
        let signature = super::super::LeaseSignature(near).to_string();
        assert_eq!(from_signature(&signature), Some(near));
        assert_eq!(from_signature("epoch_ms=1 bits=1/2"), None);
        let mut r = reader_in(Dialect::Mysql);
        let probe = r.next().unwrap();
        assert!(probe.contains("information_schema.tables"));
        // The lease's database: the connection's, as a lease's with no schema named.
        assert!(probe.contains("table_schema = DATABASE() AND table_name = 'shardid_leases'"));
        r.feed(&[row(&[
            Some("1764115200000"),
            Some("true"),
            Some("false"),
            Some("false"),
            Some("false"),
            Some("false"),
            Some("false"),
            Some("false"),
            Some("app"),
        ])])
        .unwrap();
        assert!(
            r.next()
                .unwrap()
                .contains("FROM `shardid_leases` WHERE layout <> '' ORDER BY")
        );
        r.feed(&[row(&[
            Some(&signature),
            Some("3"),
            Some("7"),
            Some("host:1"),
            Some("1764115100000"),
            Some("infinity"),
        ])])
        .unwrap();
        let report = r.report();
        assert_eq!(report.layouts.len(), 2);
        assert!(!report.layouts[0].warning);
        assert!(report.layouts[1].warning && report.layouts[1].source == "leases");
        assert_eq!(report.leases.as_ref().unwrap()[0].state, "session");
        assert_eq!(report.leases.as_ref().unwrap()[0].ceiling_ms, Some(7));
        assert_eq!(report.warnings.len(), 1);
        assert!(report.warnings[0].starts_with("layout custom ran out on 1970-01-13"));
    }

    /// The lease table is found as the lease finds it (issue 60, finding 4): in the schema
    /// named, else where `search_path` finds it, then read by `"schema"."table"`; on
    /// PostgreSQL another role's table found through `search_path` is not read as the
    /// application's, and the report says whose it is.
    #[test]
    fn the_lease_table_is_named_by_its_schema_and_another_roles_is_not_read() {
        let probe_row = |present: &str, schema: Option<&str>, owner: &str, ours: &str| {
            let mut cells = vec![Some("5000"), Some(present)];
            cells.extend([Some("false"); 6]);
            cells.extend([schema, Some(owner), Some(ours), Some("app")]);
            row(&cells)
        };
        // Named: looked up and read in that schema, whoever owns it.
        let mut r = reader().lease_schema(Some("app")).unwrap();
        let probe = r.next().unwrap();
        assert!(
            probe.contains("to_regclass('\"app\".\"shardid_leases\"') IS NULL"),
            "{probe}"
        );
        r.feed(&[probe_row("true", Some("app"), "owner", "false")])
            .unwrap();
        let leases = r.next().unwrap();
        assert!(
            leases.contains("FROM \"app\".\"shardid_leases\" WHERE layout <> '' ORDER BY"),
            "{leases}"
        );
        r.feed(&[]).unwrap();
        let report = r.report();
        assert_eq!(report.table, "app.shardid_leases");
        assert!(report.leases.is_some());
        assert!(!report.warnings.iter().any(|w| w.contains("shardid_leases")));
        assert!(report.text().contains("leases (app.shardid_leases): none"));
        // Not named: by search path in the probe only, then by the schema found.
        let mut r = reader();
        assert!(
            r.next()
                .unwrap()
                .contains("to_regclass('\"shardid_leases\"') IS NULL")
        );
        r.feed(&[probe_row("true", Some("public"), "app", "true")])
            .unwrap();
        assert!(
            r.next()
                .unwrap()
                .contains("FROM \"public\".\"shardid_leases\" WHERE layout <> '' ORDER BY")
        );
        // Not named and another role's: not read, and said so.
        let mut r = reader();
        r.next().unwrap();
        r.feed(&[probe_row("true", Some("public"), "mallory", "false")])
            .unwrap();
        assert_eq!(r.next(), None, "no lease rows read");
        let report = r.report();
        assert!(report.leases.is_none());
        assert_eq!(report.table, "public.shardid_leases");
        let why = report.leases_not_read.as_deref().unwrap();
        assert!(
            why.contains("public.shardid_leases, found through search_path, is owned by role mallory, which user app"),
            "{why}"
        );
        assert!(report.warnings.iter().any(|w| w == why));
        let text = report.text();
        assert!(
            text.contains("leases (public.shardid_leases): not read: ")
                && !text.contains("shardid_leases): absent"),
            "{text}"
        );
        assert!(report.json().contains("\"present\":false,\"not_read\":"));
        // A name that is no plain identifier is refused, as the lease's.
        assert!(reader().lease_schema(Some("a.b")).is_err());
        // SQLite: main by default, an attached database when named.
        let mut r = StatusReader::new(
            Dialect::Sqlite,
            "shardid_leases",
            "main",
            "main",
            Layout::INSTAGRAM,
        )
        .unwrap()
        .lease_schema(Some("aux"))
        .unwrap();
        r.next().unwrap();
        r.feed(&[row(&[Some("main aux")])]).unwrap();
        assert!(
            r.next().unwrap().contains(
                "FROM aux.sqlite_master WHERE type = 'table' AND name = 'shardid_leases'"
            )
        );
        // MySQL: the database named.
        let r = reader_in(Dialect::Mysql).lease_schema(Some("app")).unwrap();
        assert!(
            r.next()
                .unwrap()
                .contains("table_schema = 'app' AND table_name = 'shardid_leases'")
        );
    }

    /// Issue 54: a backup taken before any lease ran has no lease table; the lost holders made
    /// one after it. `restored` on PostgreSQL makes the table as a lease would (in the schema
    /// named, else the current schema) and marks its fence row, so a new holder starts past
    /// what they could have dated; before, nothing was made or marked.
    #[test]
    fn restored_on_postgres_makes_a_missing_lease_table_and_marks_its_fence() {
        // The probe's row: whether the lease table exists, and whether the user may create it.
        let probe = |lease: &str, creatable: &str| {
            row(&[
                Some("1764115200000"),
                Some(lease),
                Some("false"),
                Some("false"),
                Some("false"),
                Some("true"),
                Some("false"),
                Some("false"),
                (lease == "true").then_some("app"),
                (lease == "true").then_some("app"),
                Some(if lease == "true" { "true" } else { "false" }),
                Some("app"),
                Some(creatable),
            ])
        };
        let create = |t: &str| {
            format!(
                "CREATE TABLE IF NOT EXISTS {t} (layout text NOT NULL, shard bigint NOT NULL, \
                 ceiling bigint NOT NULL DEFAULT 0, holder text, taken_at timestamptz, token text, \
                 expires_at timestamptz, tli integer, sysid bigint, PRIMARY KEY (layout, shard))"
            )
        };
        let mark = |t: &str| {
            format!(
                "WITH m AS (INSERT INTO {t} AS l (layout, shard, ceiling, taken_at) VALUES ('', -1, \
                 0, now()) ON CONFLICT (layout, shard) DO UPDATE SET taken_at = now() RETURNING 1) \
                 SELECT 1 FROM m WHERE false"
            )
        };
        for (schema, table) in [
            (None, "\"shardid_leases\""),
            (Some("app"), "\"app\".\"shardid_leases\""),
        ] {
            let mut r = reader_in(Dialect::Postgres)
                .lease_schema(schema)
                .unwrap()
                .marking_restored();
            assert!(r.next().unwrap().contains("has_schema_privilege"));
            let mut cannot = r.clone();
            r.feed(&[probe("false", "true")]).unwrap();
            assert_eq!(r.next().unwrap(), create(table), "{schema:?}");
            r.feed(&[]).unwrap();
            assert_eq!(r.next().unwrap(), mark(table), "{schema:?}");
            r.feed(&[]).unwrap();
            // Nothing else is installed: the lease table is not made or marked twice.
            assert_eq!(r.next(), None, "{schema:?}");
            // Where the user may not create tables, neither could its leases: nothing to make,
            // and restored goes on (an application without leases, a restricted role).
            cannot.feed(&[probe("false", "false")]).unwrap();
            assert_eq!(cannot.next(), None, "{schema:?}");
        }
        // A table found is marked where it was found, not made.
        let mut r = reader_in(Dialect::Postgres).marking_restored();
        r.next().unwrap();
        r.feed(&[probe("true", "false")]).unwrap();
        assert_eq!(r.next().unwrap(), mark("\"app\".\"shardid_leases\""));
        // Not under a plain status.
        let mut r = reader_in(Dialect::Postgres);
        r.next().unwrap();
        r.feed(&[probe("false", "true")]).unwrap();
        assert_eq!(r.next(), None);
    }

    #[test]
    fn restored_on_mysql_marks_each_table_in_a_statement_of_its_own_then_reads_it() {
        let mut r = reader_in(Dialect::Mariadb).marking_restored();
        assert!(r.next().unwrap().contains("information_schema.tables"));
        r.feed(&[row(&[
            Some("1764115200000"),
            Some("false"),
            Some("true"),
            Some("true"),
        ])])
        .unwrap();
        // First the lease table (absent here: made) and its fence row marked (issue 54), each
        // in a statement returning no row.
        assert!(
            r.next()
                .unwrap()
                .starts_with("CREATE TABLE IF NOT EXISTS `shardid_leases` (layout VARBINARY(255)")
        );
        r.feed(&[]).unwrap();
        assert_eq!(
            r.next().unwrap(),
            "INSERT INTO `shardid_leases` (layout, shard, ceiling, taken_at) VALUES ('', -1, 0, \
             UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE taken_at = UTC_TIMESTAMP(6)"
        );
        assert!(r.clone().feed(&[row(&[Some("1")])]).is_err());
        r.feed(&[]).unwrap();
        assert_eq!(
            r.next().unwrap(),
            "UPDATE seg.shardid_tags SET restored = TRUE"
        );
        // The mark returns no row; one that does is no statement of ours.
        assert!(r.clone().feed(&[row(&[Some("1")])]).is_err());
        r.feed(&[]).unwrap();
        assert!(r.next().unwrap().starts_with("SELECT CONVERT(t.tag"));
        r.feed(&[row(&[
            Some("orders"),
            Some("1001"),
            Some("1000"),
            Some("1"),
            Some("1764115100000"),
        ])])
        .unwrap();
        assert_eq!(
            r.next().unwrap(),
            "UPDATE dict.shardid_topics SET restored = TRUE"
        );
        r.feed(&[]).unwrap();
        assert!(r.next().unwrap().starts_with("SELECT CONVERT(t.topic"));
        r.feed(&[]).unwrap();
        assert_eq!(r.next(), None);
        assert_eq!(r.report().restored, Some((1, 0)));
    }

    #[test]
    fn rows_no_statement_returns_are_refused() {
        let mut r = reader();
        assert!(r.feed(&[]).is_err());
        assert!(r.feed(&[row(&[Some("x"), Some("true")])]).is_err());
        assert!(r.feed(&[row(&[Some("5"), Some("true")])]).is_err());
        assert!(r.next().unwrap().contains("to_regclass"));
    }

    #[test]
    fn names_are_checked() {
        assert!(
            StatusReader::new(
                Dialect::Postgres,
                "x;drop",
                "seg",
                "dict",
                Layout::INSTAGRAM
            )
            .is_err()
        );
        assert!(
            StatusReader::new(Dialect::Postgres, "t", "Seg", "dict", Layout::INSTAGRAM).is_err()
        );
    }

    #[test]
    fn each_dialect_reads_its_default_schemas_and_sqlite_is_never_read_as_postgres() {
        assert_eq!(default_schemas(Dialect::Postgres), ("seg", "dict"));
        assert_eq!(default_schemas(Dialect::Mariadb), ("seg", "dict"));
        assert_eq!(default_schemas(Dialect::Sqlite), ("main", "main"));
        let r = StatusReader::new(
            Dialect::Sqlite,
            "shardid_leases",
            "main",
            "main",
            Layout::INSTAGRAM,
        )
        .unwrap();
        // No statement of another dialect, at any step.
        let mut r2 = r.clone();
        let first = r2.next().unwrap();
        assert!(first.contains("pragma_database_list"), "{first}");
        r2.feed(&[row(&[Some("main temp")])]).unwrap();
        let probe = r2.next().unwrap();
        assert!(probe.contains("julianday('now')") && probe.contains("main.sqlite_master"));
        assert!(!probe.contains("to_regclass") && !probe.contains("information_schema"));
        // `restored` marks SQLite's rows too (in the marks tables beside the tags and topics):
        // the binding opens the file for writing for it (tests/python/test_status_sqlite.py
        // runs it on a file copied back).
        assert!(!r.marks_restored());
        assert!(r.marking_restored().marks_restored());
    }

    #[test]
    fn sqlite_schemas_not_attached_read_as_absent_without_naming_them() {
        let mut r = StatusReader::new(
            Dialect::Sqlite,
            "shardid_leases",
            "seg",
            "main",
            Layout::INSTAGRAM,
        )
        .unwrap();
        r.next().unwrap();
        r.feed(&[row(&[Some("main")])]).unwrap();
        let probe = r.next().unwrap();
        // `seg` is not attached: a statement naming seg.sqlite_master would fail.
        assert!(!probe.contains("seg."), "{probe}");
        r.feed(&[row(&[
            Some("5000"),
            Some("false"),
            Some("false"),
            Some("true"),
            Some("false"),
        ])])
        .unwrap();
        assert!(r.next().unwrap().contains("FROM main.shardid_topics AS t"));
        r.feed(&[row(&[Some("urls"), Some("3"), Some("false"), Some("3")])])
            .unwrap();
        assert_eq!(r.next(), None);
        let report = r.report();
        assert_eq!(report.database, "sqlite");
        assert!(report.tags.is_none() && report.leases.is_none());
        assert!(report.text().contains("tags (seg.shardid_tags): absent"));
        assert!(
            report.text().contains(
                "topics (main.shardid_topics)\n  topic strings last id\n  urls  3       2"
            )
        );
    }

    #[test]
    fn mysql_reads_the_rates_and_widths_and_warns_as_postgres_does() {
        let mut r = reader_in(Dialect::Mariadb);
        let probe = r.next().unwrap();
        assert!(probe.contains("'shardid_serials'") && probe.contains("column_name = 'rate'"));
        r.feed(&[row(&[
            Some("5000"),
            Some("false"),
            Some("true"),
            Some("false"),
            Some("true"),
            Some("true"),
        ])])
        .unwrap();
        let tags = r.next().unwrap();
        assert!(
            tags.contains(
                "CAST(t.rate AS CHAR), CAST(t.window_n AS CHAR), CAST(t.window_ms AS CHAR)"
            )
        );
        assert!(tags.contains("SUBSTRING_INDEX(t.tag, '@', 1)"));
        // {seq:3} at 10 a second per ticket server, 2 servers: the server skips twice 280.
        let tag = |name: &str, next: &str, stride: &str| {
            row(&[
                Some(name),
                Some(next),
                Some("20"),
                Some(stride),
                Some("5000"),
                Some("10"),
                Some("0"),
                Some("4000"),
                Some("3"),
            ])
        };
        r.feed(&[
            tag("f@2026-11-28", "441", "2"),
            tag("g@2026-11-28", "401", "1"),
        ])
        .unwrap();
        let report = r.report();
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        assert!(
            report.warnings[0].starts_with(
                "serial period f@2026-11-28 has 559 numbers left, fewer than a failover skips now (560)"
            ),
            "{}",
            report.warnings[0]
        );
        // A table of an older version (no rate columns) reads NULL there, and warns of nothing.
        let mut old = reader_in(Dialect::Mysql);
        old.next().unwrap();
        old.feed(&[row(&[
            Some("5000"),
            Some("false"),
            Some("true"),
            Some("false"),
            Some("false"),
            Some("false"),
        ])])
        .unwrap();
        let tags = old.next().unwrap();
        assert!(
            tags.contains("NULL, NULL, NULL, NULL FROM seg.shardid_tags"),
            "{tags}"
        );
    }

    /// `shardid status` on a real SQLite file (`rusqlite`, SQLite bundled), every statement
    /// run as a driver runs it: the tables made by the core's SQLite DDL and statements (with
    /// feature `sqlite`, which brings rusqlite; CI's core tests run it).
    #[cfg(all(feature = "sqlite", not(miri)))] // SQLite is C behind rusqlite's FFI, which Miri cannot call
    #[test]
    #[allow(clippy::too_many_lines)] // the file's rows, the run, what the report says of each
    fn sqlite_status_on_a_real_file() {
        use crate::sql::Placeholders;
        use crate::sql::sqlite::{
            ConnectionSetup, DEFAULT_BUSY_TIMEOUT_MS, SqliteDictionary, SqliteLease, SqliteSegments,
        };
        use rusqlite::types::Value as Sql;
        use rusqlite::{Connection, params_from_iter};

        let path = std::env::temp_dir().join(format!("shardid-status-{}.db", std::process::id()));
        let remove = || {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = path.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        };
        remove();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&ConnectionSetup(DEFAULT_BUSY_TIMEOUT_MS).to_string())
            .unwrap();
        let segments = SqliteSegments::new("main").unwrap();
        conn.execute_batch(&segments.to_string()).unwrap();
        conn.execute_batch(&SqliteDictionary::new("main").unwrap().to_string())
            .unwrap();
        let q = Placeholders::Question;
        let seg = segments.statements(q);
        let exec = |sql: &str, params: Vec<Sql>| {
            let mut stmt = conn.prepare(sql).unwrap();
            let mut rows = stmt.query(params_from_iter(params)).unwrap();
            while rows.next().unwrap().is_some() {}
        };
        let text = |t: &str| Sql::Text(t.into());
        exec(
            &seg.create_tag().to_string(),
            vec![text("orders"), Sql::Integer(1)],
        );
        exec(
            &seg.take().to_string(),
            vec![Sql::Integer(5000), text("orders")],
        );
        exec(
            &seg.create_tag().to_string(),
            vec![text("invoices"), Sql::Integer(100)],
        );
        // A serial registered with {seq:3} and its period's tag.
        exec(
            "INSERT INTO main.shardid_serials (tag, format, canonical, shape, zone, pieces, width, \
             resets, max_gap, created_at) VALUES ('ord', 'ORD-{seq:3}', 'x', 'x', 'UTC', '[]', 3, 'never', 1, 0)",
            vec![],
        );
        exec(
            &seg.create_tag().to_string(),
            vec![text("ord@2026-11-28"), Sql::Integer(901)],
        );
        let dict = SqliteDictionary::new("main").unwrap().statements(q);
        exec(&dict.create_topic().to_string(), vec![text("urls")]);
        exec(
            &dict.insert(3).to_string(),
            vec![
                Sql::Integer(1),
                text("/a"),
                Sql::Integer(0),
                Sql::Integer(1),
                text("/b"),
                Sql::Integer(1),
                Sql::Integer(1),
                text("/c"),
                Sql::Integer(2),
            ],
        );
        exec(
            &dict.advance().to_string(),
            vec![Sql::Integer(3), Sql::Integer(1), Sql::Integer(0)],
        );
        let lease = SqliteLease::new(
            Layout::TWITTER,
            "shardid_leases",
            q,
            0,
            4,
            "web1 pid 7",
            "tok",
        )
        .unwrap();
        conn.execute_batch(&lease.create_table()).unwrap();
        let (claim, params) = lease.claim(0, 0);
        let params: Vec<Sql> = params
            .into_iter()
            .map(|v| match v {
                crate::sql::Value::Text(t) => text(t),
                crate::sql::Value::Int(n) => Sql::Integer(i64::try_from(n).unwrap()),
            })
            .collect();
        exec(&claim, params);

        let mut r = StatusReader::new(
            Dialect::Sqlite,
            "shardid_leases",
            "main",
            "main",
            Layout::INSTAGRAM,
        )
        .unwrap();
        let mut statements = 0;
        while let Some(sql) = r.next() {
            statements += 1;
            let mut stmt = conn.prepare(&sql).unwrap_or_else(|e| panic!("{e}: {sql}"));
            let n = stmt.column_count();
            let rows: Vec<Row> = stmt
                .query_map([], |row| {
                    (0..n)
                        .map(|i| row.get::<_, Option<String>>(i))
                        .collect::<Result<Row, _>>()
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            r.feed(&rows).unwrap();
        }
        assert_eq!(statements, 5, "schemas, probe, leases, tags, topics");
        let report = r.report();
        drop(conn);
        remove();
        assert_eq!(report.database, "sqlite");
        let tags = report.tags.as_ref().unwrap();
        let rows: Vec<_> = tags
            .iter()
            .map(|t| (t.tag.as_str(), t.next, t.segment, t.stride))
            .collect();
        assert_eq!(
            rows,
            [
                ("invoices", 100, 0, 1),
                ("ord@2026-11-28", 901, 0, 1),
                ("orders", 5001, 5000, 1)
            ]
        );
        let orders = &tags[2];
        assert!(
            (orders.per_second - 5000.0 / 60.0).abs() < 1e-9,
            "{}",
            orders.per_second
        );
        assert!(report.now_ms.abs_diff(orders.last_take_ms) < 60_000);
        let topics = report.topics.as_ref().unwrap();
        assert_eq!(
            (
                topics[0].topic.as_str(),
                topics[0].strings,
                topics[0].last_id
            ),
            ("urls", 3, Some(2))
        );
        let leases = report.leases.as_ref().unwrap();
        assert_eq!(leases.len(), 1);
        let held = &leases[0];
        assert_eq!(
            (held.layout.as_str(), held.shard, held.state, held.session),
            ("twitter", 0, "held", false)
        );
        assert_eq!(held.holder.as_deref(), Some("web1 pid 7"));
        assert!(
            held.expires_ms.unwrap() > report.now_ms && held.since_ms.unwrap() <= report.now_ms
        );
        // No rate on SQLite: no serial warning, though {seq:3} has 99 numbers left.
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let text = report.text();
        assert!(
            text.starts_with("database  sqlite (server clock "),
            "{text}"
        );
        assert!(text.contains("tags (main.shardid_tags)"));
        assert!(report.json().contains("\"database\":\"sqlite\""));
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(Json("a\"b\\c\n").to_string(), "\"a\\\"b\\\\c\\u000a\"");
    }
}
