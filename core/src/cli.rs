//! The `shardid` command line, written once: the Python package's `shardid` script
//! (`python -m shardid`) and the npm package's `npx shardid` both hand their arguments here and
//! print what comes back, so the two behave byte for byte alike.
//!
//! ```text
//! shardid decode [--layout L] [--json] ID...     time, shard and sequence (IDs from stdin if none)
//! shardid bounds [--layout L] [--json] FROM [TO]  the smallest and largest ID of a time range
//! shardid uuid [--layout L] [--json] ID...       IDs to UUIDv7s; --from: UUIDs back to IDs (stdin if none)
//! shardid layout [L | custom flags] [--json]      a layout's numbers: rate, shards, run-out date
//! shardid new --shard N [--layout L] [-n COUNT]   make IDs (for scripts: a shard no service uses)
//! shardid sql --schema S (--layout L --shard N | --segments | --dictionary | --public-ids) [--dialect D]   the DDL
//! shardid public encode|decode --key-file F [--prefix P] [--encoding E] VALUE...   public IDs
//! shardid status URL [--schema S] [--table T] [--lease-schema S] [--layout L] [--json] [--check]   leases, tags, topics, run-out dates
//! shardid restored URL [--schema S] [--after NAME=LAST]... [--margin N] ...   marks every tag and topic restored (after a restore), then status
//! ```
//!
//! `status` and `restored` read a database: the bindings see it ([`status`]), run the statements of the
//! [`StatusRun`] it returns on their driver and feed the rows back; everything else is pure.
//!
//! Times are Unix milliseconds or RFC 3339 in UTC (`2026-11-24T05:00:00Z`, `2026-11-24`). Exit
//! status: 0 when everything worked, 1 when an input was refused (the others are still
//! printed), 2 for a usage error.

use std::fmt::Write as _;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::sql::mysql::MysqlSerials;
use crate::sql::sqlite::{SqliteDictionary, SqliteSegments};
use crate::sql::status::{DEFAULT_TABLE, Row, StatusReader, default_schemas};
use crate::sql::{Dialect, Dictionary, Mysql, MysqlDictionary, MysqlSegments, Postgres, Segments};
use crate::{FieldOrder, Generator, Layout, Options};

/// What a run of the command line printed, and its exit status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit status: 0 success, 1 an input refused, 2 a usage error.
    pub code: i32,
}

/// The usage text (`shardid --help`).
pub const USAGE: &str = "\
usage: shardid <command> [options]

commands:
  decode [--layout L] [--json] ID...      time, shard and sequence of IDs (read from stdin if none)
  bounds [--layout L] [--json] FROM [TO]  the smallest ID of FROM and the largest of TO (default FROM),
                                          for range queries: WHERE id BETWEEN min AND max
  layout [L] [--json]                     a layout's numbers: IDs per second per shard, shards, run-out date
  uuid [--layout L] [--json] ID...        IDs as UUIDv7s (their time the ID's, the ID inside), one a line
  uuid --from [--layout L] [--json] UUID...
                                          UUIDs made by uuid back to IDs; a preset's needs no
                                          --layout (its UUID names it), a custom layout's does
                                          (values from stdin if none)
  new --shard N [--layout L] [-n COUNT] [--json]
                                          make IDs here (for scripts and tests: use a shard no service uses)
  shard --shards FIRST..END [--hostname NAME] [--layout L]
                                          this Kubernetes StatefulSet pod's shard: the ordinal of
                                          NAME (default $HOSTNAME, then the host's name: app-3 is
                                          3), refused outside the layout and FIRST..END (END
                                          excluded); for an entrypoint: SHARD=$(shardid shard ...)
  sql --schema S --layout L --shard N     the DDL of next_id() and the decoding functions
  sql --schema S --segments [--servers N --index I]   the DDL of dense IDs from segments
  sql --schema S --dictionary             the DDL of the string <-> ID dictionary
  sql --schema S --serials --dialect mysql
                                          the DDL of serial numbers' registrations on MySQL and
                                          MariaDB, after --segments' (PostgreSQL's and SQLite's
                                          --segments holds them)
      [--dialect postgres|mysql|mariadb|sqlite]  the database (default postgres); mysql: MySQL 8
                                          (and MariaDB); mariadb: MariaDB 10.6+, a Galera cluster
                                          named as one server; --schema names the database;
                                          sqlite: 3.35+, --schema main or an attached database
                                          (segments with serials, the dictionary; clients create
                                          the tables on first use)
  sql --schema S --public-ids             the DDL of public IDs in SQL (public_id_encode/_decode)
  public encode --key-file F [--prefix P] [--encoding E] [--json] ID...
  public decode --key-file F [--prefix P] [--encoding E] [--json] TEXT...
                                          IDs to public IDs and back (values from stdin if none):
                                          the key file holds 16 raw bytes [--key-version V], or
                                          keys as text (32 hex digits, or VERSION:HEX,...);
                                          encodings base32 (default), base32check, base58, base62
  status URL [--schema S] [--table T] [--lease-schema S] [--layout L] [--json] [--check]
                                          a database's leases, segments' tags (burn rate, years left),
                                          dictionary topics and the layouts' run-out dates; URL:
                                          postgresql://... (or libpq's host=... dbname=...), mysql://...,
                                          sqlite:///file.db (read-only); tags in schema seg and topics
                                          in dict (SQLite: main) unless --schema S
                                          (or --segments-schema S, --dictionary-schema S); leases in
                                          table shardid_leases unless --table T, in schema S with
                                          --lease-schema S (the lease's schema option; else as a
                                          lease finds it: PostgreSQL's search_path, not read when
                                          another role owns it; the URL's database; SQLite main);
                                          --check: exit 1 on a warning (a layout or tag running
                                          out within 5 years)
  restored URL [--schema S] [--after NAME=LAST]... [--after-topic TOPIC=ID]... [--margin N]
           [...as status]
                                          after restoring a backup the database cannot tell from
                                          its timeline or system identifier (a dump restored with
                                          --clean into the same cluster; a Galera node bootstrapped
                                          from an old backup; a SQLite file copied back): marks
                                          every tag, serial period and topic restored, so the next
                                          take of each skips what its rate could have handed out,
                                          and a tag or topic the backup lacks starts past that
                                          bound too; then prints the status (PostgreSQL, the MySQL
                                          family, SQLite). --after orders=52311 or
                                          --after 'inv=INV-20261208-000010' (a tag's last number,
                                          a serial's last text) and --after-topic words=812: the
                                          next starts right past it plus --margin N (default 0)
                                          instead of by its rate

layouts: --layout instagram (the default), twitter, discord, sonyflake, or a custom one:
  --epoch-ms MS --bits TIME,SHARD,SEQUENCE [--unit-ms MS] [--order time_sequence_shard] [--unsigned]
times: Unix milliseconds, or RFC 3339 in UTC: 2026-11-24T05:00:00.250Z, 2026-11-24
exit status: 0 ok, 1 an input was refused (the others are still printed) or status --check
  warned, 2 a usage error (or status could not read the database)
";

/// Whether [`run`] will read standard input for these arguments (`decode` without IDs), so a
/// binding reads it only then and never waits on a terminal or an open pipe otherwise.
pub fn wants_stdin(args: &[&str]) -> bool {
    match args {
        ["decode" | "uuid", rest @ ..] | ["public", "encode" | "decode", rest @ ..] => {
            parse(rest).is_ok_and(|p| p.positional.is_empty())
        }
        _ => false,
    }
}

/// Runs the command line on `args` (without the program name). `stdin` is standard input's
/// text when [`wants_stdin`] said so.
pub fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut out = Output::default();
    let Some((&command, rest)) = args.split_first() else {
        out.stderr = USAGE.into();
        out.code = 2;
        return out;
    };
    let result = match command {
        "-h" | "--help" | "help" => {
            out.stdout = USAGE.into();
            Ok(())
        }
        "-V" | "--version" | "version" => {
            out.stdout = format!("shardid {}\n", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        "decode" => parse(rest).and_then(|p| decode(&p, stdin, &mut out)),
        "bounds" => parse(rest).and_then(|p| bounds(&p, &mut out)),
        "uuid" => parse(rest).and_then(|p| uuid(&p, stdin, &mut out)),
        "layout" => parse(rest).and_then(|p| layout_info(&p, &mut out)),
        "new" => parse(rest).and_then(|p| new_ids(&p, &mut out)),
        "shard" => parse(rest).and_then(|p| shard_of_pod(&p, &mut out)),
        "sql" => parse(rest).and_then(|p| sql(&p, &mut out)),
        "public" => public(rest, stdin, &mut out),
        "status" | "restored" => match status(args) {
            Err(usage) => return usage,
            Ok(_) => Err(format!(
                "{command} reads a database: run it from the Python or Node package"
            )),
        },
        other => Err(format!("unknown command {other:?}: try shardid --help")),
    };
    if let Err(usage) = result {
        _ = writeln!(out.stderr, "shardid: {usage}");
        out.code = 2;
    }
    out
}

/// Parsed options: flags with their values, and the positional arguments.
#[derive(Default)]
struct Parsed<'a> {
    options: Vec<(&'a str, &'a str)>,
    switches: Vec<&'a str>,
    positional: Vec<&'a str>,
}

/// The options that take a value, and the switches.
const VALUED: &[&str] = &[
    "--layout",
    "--epoch-ms",
    "--unit-ms",
    "--bits",
    "--order",
    "--shard",
    "--shards",
    "--hostname",
    "-n",
    "--schema",
    "--servers",
    "--index",
    "--dialect",
    "--key-file",
    "--key-version",
    "--prefix",
    "--encoding",
    "--table",
    "--lease-schema",
    "--segments-schema",
    "--dictionary-schema",
    "--after",
    "--after-topic",
    "--margin",
];
/// The options that may be given more than once (each value kept, in order).
const REPEATED: &[&str] = &["--after", "--after-topic"];
const SWITCHES: &[&str] = &[
    "--json",
    "--unsigned",
    "--segments",
    "--serials",
    "--dictionary",
    "--public-ids",
    "--check",
    "--from",
];

fn parse<'a>(args: &[&'a str]) -> Result<Parsed<'a>, String> {
    let mut p = Parsed::default();
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg, None),
        };
        if VALUED.contains(&name) {
            let value = match inline {
                Some(v) => v,
                None => it.next().ok_or(format!("{name} needs a value"))?,
            };
            if !REPEATED.contains(&name) && p.options.iter().any(|(n, _)| *n == name) {
                return Err(format!("{name} given twice"));
            }
            p.options.push((name, value));
        } else if SWITCHES.contains(&name) && inline.is_none() {
            p.switches.push(name);
        } else if arg == "--" {
            p.positional.extend(it.by_ref().copied());
        } else if arg.starts_with('-')
            && arg.len() > 1
            && !arg[1..].starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!("unknown option {arg}: try shardid --help"));
        } else {
            p.positional.push(arg);
        }
    }
    Ok(p)
}

impl Parsed<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// Every value of an option given more than once ([`REPEATED`]), in order.
    fn all<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s str> + 's {
        self.options
            .iter()
            .filter(move |(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    fn switch(&self, name: &str) -> bool {
        self.switches.contains(&name)
    }

    fn number(&self, name: &str) -> Result<Option<u64>, String> {
        self.get(name)
            .map(|v| {
                crate::parse_decimal(v.as_bytes())
                    .ok_or(format!("{name} {v:?} is not a decimal integer in 0..2^64"))
            })
            .transpose()
    }

    /// Only the options in `allowed` (and `--json`, and the layout's) may be given.
    fn only(&self, allowed: &[&str]) -> Result<(), String> {
        let layout = [
            "--layout",
            "--epoch-ms",
            "--unit-ms",
            "--bits",
            "--order",
            "--unsigned",
        ];
        let names = self
            .options
            .iter()
            .map(|(n, _)| *n)
            .chain(self.switches.iter().copied());
        for name in names {
            if !allowed.contains(&name) && !layout.contains(&name) && name != "--json" {
                return Err(format!("{name} does not apply here"));
            }
        }
        Ok(())
    }

    /// The layout: `--layout NAME` (default Instagram's) or the custom flags.
    fn layout(&self) -> Result<Layout, String> {
        let custom = self.get("--epoch-ms").is_some() || self.get("--bits").is_some();
        match (self.get("--layout"), custom) {
            (Some(_), true) => Err("give either --layout or a custom layout, not both".into()),
            (Some(name), false) => Layout::preset(name).map_err(|_| {
                format!("--layout {name:?} is not a preset: instagram, twitter, discord, sonyflake")
            }),
            (None, false) => Ok(Layout::INSTAGRAM),
            (None, true) => {
                let epoch = self
                    .number("--epoch-ms")?
                    .ok_or("a custom layout needs --epoch-ms")?;
                let bits = self
                    .get("--bits")
                    .ok_or("a custom layout needs --bits TIME,SHARD,SEQUENCE")?;
                let widths: Vec<u8> = bits
                    .split(',')
                    .filter_map(|b| b.trim().parse().ok())
                    .collect();
                let [time, shard, sequence] = widths[..] else {
                    return Err(format!("--bits {bits:?}: three widths, like 41,13,10"));
                };
                let order = match self.get("--order") {
                    None | Some("time_shard_sequence") => FieldOrder::TimeShardSequence,
                    Some("time_sequence_shard") => FieldOrder::TimeSequenceShard,
                    Some(o) => {
                        return Err(format!(
                            "--order {o:?}: time_shard_sequence or time_sequence_shard"
                        ));
                    }
                };
                Layout::builder()
                    .epoch_ms(epoch)
                    .unit_ms(self.number("--unit-ms")?.unwrap_or(1))
                    .bits(time, shard, sequence)
                    .order(order)
                    .signed(!self.switch("--unsigned"))
                    .build()
                    .map_err(|e| e.to_string())
            }
        }
    }
}

/// A refused input: reported on stderr, the run goes on, the exit status becomes 1.
fn refused(out: &mut Output, input: &str, why: &dyn core::fmt::Display) {
    let shown: String = input.chars().take(48).collect();
    _ = writeln!(out.stderr, "shardid: {shown}: {why}");
    out.code = 1;
}

fn decode(p: &Parsed<'_>, stdin: Option<&str>, out: &mut Output) -> Result<(), String> {
    p.only(&[])?;
    let layout = p.layout()?;
    let ids: Vec<&str> = if p.positional.is_empty() {
        stdin.unwrap_or_default().split_whitespace().collect()
    } else {
        p.positional.clone()
    };
    for text in ids {
        let Some(id) = crate::parse_decimal(text.as_bytes()) else {
            refused(out, text, &"not a decimal integer in 0..2^64");
            continue;
        };
        match layout.decode(id) {
            Ok(parts) if p.switch("--json") => {
                _ = writeln!(
                    out.stdout,
                    "{{\"id\":\"{id}\",\"timestamp_ms\":{},\"time\":\"{}\",\"shard\":{},\"sequence\":{}}}",
                    parts.timestamp_ms,
                    rfc3339(parts.timestamp_ms),
                    parts.shard,
                    parts.sequence
                );
            }
            Ok(parts) => {
                _ = writeln!(
                    out.stdout,
                    "{id}  {}  shard {}  sequence {}",
                    rfc3339(parts.timestamp_ms),
                    parts.shard,
                    parts.sequence
                );
            }
            Err(e) => refused(out, text, &e),
        }
    }
    Ok(())
}

/// `uuid`: IDs to UUIDv7 values, or with `--from` UUIDs back to IDs, one a line (the core's bridge,
/// [`crate::uuid`]). `--from` without a layout reads the preset the UUID's marker names.
fn uuid(p: &Parsed<'_>, stdin: Option<&str>, out: &mut Output) -> Result<(), String> {
    p.only(&["--from"])?;
    let from = p.switch("--from");
    let given = ["--layout", "--epoch-ms", "--bits"]
        .iter()
        .any(|flag| p.get(flag).is_some());
    let layout = if from && !given {
        None
    } else {
        Some(p.layout()?)
    };
    let values: Vec<&str> = if p.positional.is_empty() {
        stdin.unwrap_or_default().split_whitespace().collect()
    } else {
        p.positional.clone()
    };
    for text in values {
        let pair = if from {
            crate::uuid::from_uuid_text(layout.as_ref(), text).map(|id| (id, text.to_lowercase()))
        } else {
            let Some(id) = crate::parse_decimal(text.as_bytes()) else {
                refused(out, text, &"not a decimal integer in 0..2^64");
                continue;
            };
            let layout = layout.unwrap_or(Layout::INSTAGRAM);
            crate::uuid::to_uuid_text(&layout, id).map(|u| (id, u.to_string()))
        };
        match pair {
            Ok((id, uuid)) if p.switch("--json") => {
                _ = writeln!(out.stdout, "{{\"id\":\"{id}\",\"uuid\":\"{uuid}\"}}");
            }
            Ok((id, _)) if from => _ = writeln!(out.stdout, "{id}"),
            Ok((_, uuid)) => _ = writeln!(out.stdout, "{uuid}"),
            Err(e) => refused(out, text, &e),
        }
    }
    Ok(())
}

fn bounds(p: &Parsed<'_>, out: &mut Output) -> Result<(), String> {
    p.only(&[])?;
    let layout = p.layout()?;
    let (from, to) = match p.positional[..] {
        [from] => (from, from),
        [from, to] => (from, to),
        _ => return Err("bounds takes FROM and an optional TO".into()),
    };
    let (Some(from_ms), Some(to_ms)) = (parse_time(from), parse_time(to)) else {
        return Err("times are Unix ms or RFC 3339 in UTC (2026-11-24T05:00:00Z)".into());
    };
    if to_ms < from_ms {
        return Err("TO is before FROM".into());
    }
    match (layout.min_id_at(from_ms), layout.max_id_at(to_ms)) {
        (Ok(min), Ok(max)) if p.switch("--json") => {
            _ = writeln!(
                out.stdout,
                "{{\"min\":\"{min}\",\"max\":\"{max}\",\"from\":\"{}\",\"to\":\"{}\"}}",
                rfc3339(from_ms),
                rfc3339(to_ms)
            );
        }
        (Ok(min), Ok(max)) => _ = writeln!(out.stdout, "{min} {max}"),
        (Err(e), _) => refused(out, from, &e),
        (_, Err(e)) => refused(out, to, &e),
    }
    Ok(())
}

fn layout_info(p: &Parsed<'_>, out: &mut Output) -> Result<(), String> {
    p.only(&[])?;
    let layout = match p.positional[..] {
        [] => p.layout()?,
        [name] if p.get("--layout").is_none() => Layout::preset(name).map_err(|_| {
            format!("{name:?} is not a preset: instagram, twitter, discord, sonyflake")
        })?,
        _ => return Err("layout takes one preset name, or --layout, or a custom layout".into()),
    };
    let per_second = (layout.max_sequence() + 1) * 1000 / layout.unit_ms();
    let js_safe = layout.max_id() <= crate::js::MAX_SAFE_INTEGER;
    let name = layout.preset_name().unwrap_or("custom");
    let order = match layout.order() {
        FieldOrder::TimeShardSequence => "time_shard_sequence",
        FieldOrder::TimeSequenceShard => "time_sequence_shard",
    };
    let fields = [
        ("name", format!("\"{}\"", name.to_ascii_lowercase())),
        ("epoch", format!("\"{}\"", rfc3339(layout.epoch_ms()))),
        ("epoch_ms", layout.epoch_ms().to_string()),
        ("unit_ms", layout.unit_ms().to_string()),
        (
            "bits",
            format!(
                "\"{},{},{}\"",
                layout.time_bits(),
                layout.shard_bits(),
                layout.sequence_bits()
            ),
        ),
        ("order", format!("\"{order}\"")),
        ("signed", layout.signed().to_string()),
        ("shards", (layout.max_shard() + 1).to_string()),
        ("ids_per_second_per_shard", per_second.to_string()),
        ("max_id", format!("\"{}\"", layout.max_id())),
        (
            "expires",
            format!("\"{}\"", rfc3339(layout.expires_at_ms())),
        ),
        ("fits_a_javascript_number", js_safe.to_string()),
    ];
    if p.switch("--json") {
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        _ = writeln!(out.stdout, "{{{}}}", body.join(","));
    } else {
        for (k, v) in fields {
            _ = writeln!(out.stdout, "{k:<26}{}", v.trim_matches('"'));
        }
    }
    Ok(())
}

fn new_ids(p: &Parsed<'_>, out: &mut Output) -> Result<(), String> {
    p.only(&["--shard", "-n"])?;
    let layout = p.layout()?;
    let shard = p
        .number("--shard")?
        .ok_or("new needs --shard N: a shard no running service uses")?;
    let count = p.number("-n")?.unwrap_or(1);
    if count > 1_000_000 {
        return Err("-n is at most 1000000".into());
    }
    let generator = Generator::shared(layout, shard, Options::new()).map_err(|e| e.to_string())?;
    for _ in 0..count {
        match generator.next_id() {
            Ok(id) if p.switch("--json") => _ = writeln!(out.stdout, "\"{id}\""),
            Ok(id) => _ = writeln!(out.stdout, "{id}"),
            Err(e) => {
                refused(out, "new", &e);
                break;
            }
        }
    }
    Ok(())
}

/// `shard`: the core's [`crate::ordinal::shard_of_pod`], for an entrypoint that hands the
/// shard to a service in a language without shardid.
fn shard_of_pod(p: &Parsed<'_>, out: &mut Output) -> Result<(), String> {
    p.only(&["--shards", "--hostname"])?;
    if !p.positional.is_empty() {
        return Err("shard takes no positional arguments: --hostname NAME".into());
    }
    let layout = p.layout()?;
    let shards = p.get("--shards").ok_or(
        "shard needs --shards FIRST..END: the range this service was given (END excluded)",
    )?;
    let bound = |text: &str| text.parse::<u64>().ok();
    let (first, end) = shards
        .split_once("..")
        .and_then(|(a, b)| Some((bound(a)?, bound(b)?)))
        .ok_or(format!(
            "--shards {shards:?}: expected FIRST..END, e.g. 0..16"
        ))?;
    let hostname = p.get("--hostname");
    match crate::ordinal::shard_of_pod(hostname, &layout, first..end) {
        Ok(shard) => _ = writeln!(out.stdout, "{shard}"),
        Err(e) => refused(out, hostname.unwrap_or("shard"), &e),
    }
    Ok(())
}

fn sql(p: &Parsed<'_>, out: &mut Output) -> Result<(), String> {
    let schema = p.get("--schema").ok_or("sql needs --schema S")?;
    if !p.positional.is_empty() {
        return Err("sql takes no positional arguments".into());
    }
    let dialect = match p.get("--dialect") {
        None => Dialect::Postgres,
        Some(name) => Dialect::from_name(name)
            .ok_or(format!("--dialect {name:?}: one of {}", Dialect::NAMES))?,
    };
    // Every dialect named in each branch: a new one is a compile error here, not silently
    // another's SQL.
    let text = if p.switch("--public-ids") {
        p.only(&["--schema", "--public-ids"])?;
        crate::sql::PostgresPublicIds::new(p.layout()?, schema).map(|d| d.to_string())
    } else if p.switch("--dictionary") {
        p.only(&["--schema", "--dictionary", "--dialect"])?;
        match dialect {
            Dialect::Postgres => Dictionary::new(schema).map(|d| d.to_string()),
            Dialect::Mysql | Dialect::Mariadb => {
                MysqlDictionary::new(schema).map(|d| d.dialect(dialect).to_string())
            }
            Dialect::Sqlite => SqliteDictionary::new(schema).map(|d| d.to_string()),
        }
    } else if p.switch("--serials") {
        p.only(&["--schema", "--serials", "--dialect"])?;
        match dialect {
            Dialect::Mysql | Dialect::Mariadb => MysqlSerials::new(schema).map(|s| s.to_string()),
            Dialect::Postgres | Dialect::Sqlite => {
                return Err(format!(
                    "--serials: --dialect mysql or mariadb ({}'s --segments holds the \
                     registrations)",
                    if dialect == Dialect::Sqlite {
                        "SQLite"
                    } else {
                        "PostgreSQL"
                    }
                ));
            }
        }
    } else if p.switch("--segments") {
        p.only(&[
            "--schema",
            "--segments",
            "--servers",
            "--index",
            "--dialect",
        ])?;
        let servers = p.number("--servers")?.unwrap_or(1);
        let index = p.number("--index")?.unwrap_or(0);
        match dialect {
            Dialect::Postgres => Segments::new(schema)
                .and_then(|s| s.ticket_server(servers, index))
                .map(|s| s.to_string()),
            Dialect::Mysql | Dialect::Mariadb => MysqlSegments::new(schema)
                .and_then(|s| s.ticket_server(servers, index))
                .map(|s| s.dialect(dialect).to_string()),
            Dialect::Sqlite if servers != 1 || index != 0 => {
                return Err(
                    "--dialect sqlite takes no --servers/--index: one file has no ticket servers"
                        .into(),
                );
            }
            // The serial numbers' registrations come with the segments' tables.
            Dialect::Sqlite => SqliteSegments::new(schema).map(|s| s.to_string()),
        }
    } else {
        p.only(&["--schema", "--shard", "--dialect"])?;
        let shard = p.number("--shard")?.ok_or(
            "sql needs --shard N (the database's own shard), or --segments, or --dictionary",
        )?;
        match dialect {
            Dialect::Postgres => Postgres::new(p.layout()?, shard, schema).map(|s| s.to_string()),
            Dialect::Mysql | Dialect::Mariadb => {
                Mysql::new(p.layout()?, shard, schema).map(|s| s.dialect(dialect).to_string())
            }
            Dialect::Sqlite => {
                return Err(
                    "--dialect sqlite has no next_id() (SQLite has no stored routines): \
                            take time-sortable IDs from a client's generator, dense IDs from \
                            --segments"
                        .into(),
                );
            }
        }
    };
    out.stdout = text.map_err(|e| e.to_string())?;
    Ok(())
}

/// A `shardid status` to run: the binding connects to [`Self::url`] with the driver of
/// [`Self::family`], runs each statement of [`Self::next`] and [`Self::feed`]s the rows back,
/// then prints [`Self::output`]; when it cannot connect or a statement fails, [`Self::failed`]
/// with the driver's words.
#[derive(Clone, Debug)]
pub struct StatusRun {
    url: String,
    reader: StatusReader,
    json: bool,
    check: bool,
}

/// The `status` command's arguments (`args` with `status` first) as a [`StatusRun`], or the
/// [`Output`] of a usage error (exit status 2).
///
/// # Errors
/// The usage error's output.
pub fn status(args: &[&str]) -> Result<StatusRun, Output> {
    let usage = |why: String| Output {
        stdout: String::new(),
        stderr: format!("shardid: {why}\n"),
        code: 2,
    };
    let Some((&command @ ("status" | "restored"), rest)) = args.split_first() else {
        return Err(usage("not a status command".into()));
    };
    let p = parse(rest).map_err(usage)?;
    p.only(&[
        "--schema",
        "--segments-schema",
        "--dictionary-schema",
        "--table",
        "--lease-schema",
        "--check",
        "--after",
        "--after-topic",
        "--margin",
    ])
    .map_err(usage)?;
    let [url] = p.positional[..] else {
        return Err(usage(format!(
            "{command} takes one database URL: shardid {command} postgresql://... (or mysql://..., sqlite:///file.db)"
        )));
    };
    let family = status_family(url).map_err(|why| usage(format!("{command}: {why}")))?;
    let schema = p.get("--schema");
    let (default_segments, default_dictionary) = default_schemas(family);
    let segments = p
        .get("--segments-schema")
        .or(schema)
        .unwrap_or(default_segments);
    let dictionary = p
        .get("--dictionary-schema")
        .or(schema)
        .unwrap_or(default_dictionary);
    let table = p.get("--table").unwrap_or(DEFAULT_TABLE);
    let layout = p.layout().map_err(usage)?;
    let mut reader = StatusReader::new(family, table, segments, dictionary, layout)
        .and_then(|r| r.lease_schema(p.get("--lease-schema")))
        .map_err(|e| usage(format!("{command}: {e}")))?;
    if command == "restored" {
        reader = reader.marking_restored();
        // The operator's exact knowledge (issue 54): the last number (or serial) handed out.
        for (value, topic) in p
            .all("--after")
            .map(|v| (v, false))
            .chain(p.all("--after-topic").map(|v| (v, true)))
        {
            let Some((name, last)) = value.split_once('=') else {
                return Err(usage(format!(
                    "restored: --after{} takes NAME=LAST (a tag's last number, a serial's last text, a topic's last ID), not {value}",
                    if topic { "-topic" } else { "" }
                )));
            };
            reader = reader
                .after(name, last, topic)
                .map_err(|why| usage(format!("restored: {why}")))?;
        }
        if let Some(margin) = p.number("--margin").map_err(usage)? {
            reader = reader.after_margin(margin);
        }
    } else if let Some(option) = ["--after", "--after-topic", "--margin"]
        .into_iter()
        .find(|o| p.get(o).is_some())
    {
        return Err(usage(format!(
            "{option} is an option of restored, not of {command}"
        )));
    }
    Ok(StatusRun {
        url: url.into(),
        reader,
        json: p.switch("--json"),
        check: p.switch("--check"),
    })
}

/// The database a status reads, by the core's one rule for URLs ([`Dialect::of_url`]); a
/// `sqlite:` URL must also name a usable file ([`crate::sql::sqlite::usable_file`]: no
/// in-memory database, no host, no query string, not on a network filesystem), as every
/// SQLite client's.
///
/// # Errors
/// Why the URL names no database status can read.
pub fn status_family(url: &str) -> Result<Dialect, String> {
    let family = Dialect::of_url(url).map_err(|why| why.to_string())?;
    match family {
        Dialect::Postgres | Dialect::Mysql | Dialect::Mariadb => Ok(family),
        Dialect::Sqlite => crate::sql::sqlite::usable_file(url).map(|_| family),
    }
}

impl StatusRun {
    /// A run of `reader` on a connection the caller already has: `url` only names the
    /// database in [`Self::failed`]'s message.
    pub fn new(url: &str, reader: StatusReader) -> Self {
        Self {
            url: url.into(),
            reader,
            json: false,
            check: false,
        }
    }

    /// A run for the Python and Node APIs, on the database of `family` (`"postgres"`,
    /// `"mysql"` or `"sqlite"`: a connection the caller has), or when `None` on the database
    /// `url` names by the core's one rule ([`status_family`]: the caller opens its driver).
    /// The tables are in `table` and the schemas given, a schema `None` the family's default
    /// (`seg` and `dict`; `main` on SQLite); the lease table in `lease_schema`, `None` as a
    /// lease finds it ([`StatusReader::lease_schema`]).
    ///
    /// # Errors
    /// The argument refused (`family`, `database`, `table` or `schema`) and why: both bindings
    /// report it as `INVALID_ARGUMENT`.
    pub fn on_connection(
        family: Option<&str>,
        url: &str,
        table: &str,
        lease_schema: Option<&str>,
        segments_schema: Option<&str>,
        dictionary_schema: Option<&str>,
        layout: Layout,
    ) -> Result<Self, (&'static str, String)> {
        let family = match family {
            None => status_family(url).map_err(|why| ("database", why))?,
            // A family's own name only (`Dialect::family_name`): not `mariadb`, `postgresql`.
            Some(name) => Dialect::from_name(name)
                .filter(|d| d.family_name() == name)
                .ok_or(("family", "is postgres, mysql or sqlite".into()))?,
        };
        let (segments, dictionary) = default_schemas(family);
        let segments = segments_schema.unwrap_or(segments);
        let dictionary = dictionary_schema.unwrap_or(dictionary);
        let reader = StatusReader::new(family, table, segments, dictionary, layout).map_err(
            |e| match e {
                crate::sql::SqlError::TableName { reason } => {
                    ("table", format!("is not a valid name: {reason}"))
                }
                crate::sql::SqlError::SchemaName { reason } => {
                    ("schema", format!("is not a valid name: {reason}"))
                }
                other => ("schema", other.to_string()),
            },
        )?;
        reader
            .lease_schema(lease_schema)
            .map(|reader| Self::new(url, reader))
            .map_err(|e| match e {
                crate::sql::SqlError::SchemaName { reason } => {
                    ("lease_schema", format!("is not a valid name: {reason}"))
                }
                other => ("lease_schema", other.to_string()),
            })
    }

    /// The report as JSON, whatever `--json` said (the Python and Node APIs read it).
    pub fn report_json(&self) -> String {
        self.reader.report().json()
    }

    /// The report as text, whatever `--json` said.
    pub fn report_text(&self) -> String {
        self.reader.report().text()
    }

    /// The database URL, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Which driver runs the statements.
    pub const fn family(&self) -> Dialect {
        self.reader.family()
    }

    /// The file of a SQLite run ([`crate::sql::sqlite_path`] of [`Self::url`]), which the
    /// binding opens read-only for a status (it creates no file and writes nothing) and for
    /// writing for `restored` ([`Self::marks_restored`]); `None` for the other databases, or a
    /// URL that names no file (a run on a connection of the caller's).
    pub fn sqlite_path(&self) -> Option<&str> {
        match self.family() {
            Dialect::Sqlite => crate::sql::sqlite_path(&self.url).ok(),
            Dialect::Postgres | Dialect::Mysql | Dialect::Mariadb => None,
        }
    }

    /// Whether this is `shardid restored`, which writes (marks the rows restored): on SQLite
    /// the binding opens the file for writing, not read-only.
    pub const fn marks_restored(&self) -> bool {
        self.reader.marks_restored()
    }

    /// The next statement, or `None` when [`Self::output`] is ready.
    pub fn next(&self) -> Option<String> {
        self.reader.next()
    }

    /// The rows of the last statement, as text cells.
    ///
    /// # Errors
    /// Rows none of the statements return, with what was wrong (then [`Self::failed`]).
    pub fn feed(&mut self, rows: &[Row]) -> Result<(), String> {
        self.reader.feed(rows)
    }

    /// What the command prints: the report (text, or JSON with `--json`); exit status 1 with
    /// `--check` when there is a warning.
    pub fn output(&self) -> Output {
        let report = self.reader.report();
        Output {
            stdout: if self.json {
                report.json()
            } else {
                report.text()
            },
            stderr: String::new(),
            code: i32::from(self.check && report.warned()),
        }
    }

    /// What the command prints when the database could not be read (`why`: the driver's error;
    /// only its first line is shown, without the URL's password, which drivers may quote):
    /// exit status 2. The URL is shown as its server only ([`crate::sql::url_shown`]).
    pub fn failed(&self, why: &str) -> Output {
        let why = crate::sql::redacted(why, &self.url);
        let why = why
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("failed");
        Output {
            stdout: String::new(),
            stderr: format!(
                "shardid: {}: {}: {}\n",
                if self.reader.marks_restored() {
                    "restored"
                } else {
                    "status"
                },
                crate::sql::url_shown(&self.url),
                why.trim()
            ),
            code: 2,
        }
    }
}

/// `public encode|decode`: IDs to public IDs and back, one per line.
fn public(args: &[&str], stdin: Option<&str>, out: &mut Output) -> Result<(), String> {
    let (encode, rest) = match args.split_first() {
        Some((&"encode", rest)) => (true, rest),
        Some((&"decode", rest)) => (false, rest),
        _ => return Err("public takes encode or decode: try shardid --help".into()),
    };
    let p = parse(rest)?;
    p.only(&["--key-file", "--key-version", "--prefix", "--encoding"])?;
    let ids = public_ids(&p, out)?;
    let values: Vec<&str> = if p.positional.is_empty() {
        stdin.unwrap_or_default().split_whitespace().collect()
    } else {
        p.positional.clone()
    };
    for text in values {
        let pair = if encode {
            match crate::parse_decimal(text.as_bytes()) {
                None => Err(format!(
                    "{} is not a decimal integer in 0..2^64",
                    Shown(text)
                )),
                Some(id) => ids.encode(id).map(|t| (id, t)).map_err(|e| e.to_string()),
            }
        } else {
            ids.decode(text)
                .map_err(|e| e.to_string())
                .and_then(|id| ids.encode(id).map(|t| (id, t)).map_err(|e| e.to_string()))
        };
        match pair {
            Ok((id, public_id)) if p.switch("--json") => {
                _ = writeln!(
                    out.stdout,
                    "{{\"id\":\"{id}\",\"public_id\":\"{public_id}\"}}"
                );
            }
            Ok((_, public_id)) if encode => _ = writeln!(out.stdout, "{public_id}"),
            Ok((id, _)) => _ = writeln!(out.stdout, "{id}"),
            Err(why) => refused(out, text, &why),
        }
    }
    Ok(())
}

/// A value as a refusal shows it: at most 48 characters.
struct Shown<'a>(&'a str);

impl core::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let shown: String = self.0.chars().take(48).collect();
        write!(f, "{shown:?}")
    }
}

/// What a key file may hold, every accepted form: the words of `docs/src/reference/cli.md`,
/// in each message about a key file that holds none of them.
pub const KEY_FILE_FORMS: &str = "a key file holds one key of 16 raw bytes (head -c 16 /dev/urandom > F), \
or keys as text: 32 hex digits (one key, version 0), or VERSION:HEX pairs separated by commas, \
the highest version current (2:<32 hex digits>,1:<32 hex digits>)";

/// The most a key file is read of: far more than the longest valid one (four `VERSION:HEX`
/// keys, 143 bytes, with room for whitespace), so `--key-file /dev/zero` or a log file named
/// by mistake is refused at once instead of read to its end.
pub const KEY_FILE_MAX_BYTES: u64 = 4096;

/// The bytes of the key file `path`, at most [`KEY_FILE_MAX_BYTES`] (a larger file is refused
/// unread), with a warning on `out`'s stderr when group or others may read or write it (as
/// ssh says of a private key; a warning, not a refusal: a key in a container's mounted secret
/// often has the mode its platform gives, and refusing would stop a working service).
fn read_key_file(path: &str, out: &mut Output) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("--key-file {path:?}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(KEY_FILE_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("--key-file {path:?}: {e}"))?;
    if bytes.len() as u64 > KEY_FILE_MAX_BYTES {
        return Err(format!(
            "--key-file {path:?} holds more than {KEY_FILE_MAX_BYTES} bytes, not a key file: {KEY_FILE_FORMS}"
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0, |m| m.permissions().mode());
        if mode & 0o077 != 0 {
            _ = writeln!(
                out.stderr,
                "shardid: warning: --key-file {path:?} may be read or written by others (mode {:04o}): \
                 chmod 600 it; whoever reads the key turns public IDs back into IDs",
                mode & 0o7777
            );
        }
    }
    #[cfg(not(unix))]
    let _ = &out;
    Ok(bytes)
}

/// The public IDs of `--key-file` (16 raw bytes, or keys as text), `--prefix`, `--encoding`
/// and the layout. No message shows the key.
fn public_ids(p: &Parsed<'_>, out: &mut Output) -> Result<crate::PublicIds, String> {
    let path = p
        .get("--key-file")
        .ok_or_else(|| format!("public needs --key-file F: {KEY_FILE_FORMS}"))?;
    let bytes = read_key_file(path, out)?;
    let prefix = p.get("--prefix").unwrap_or("");
    let encoding = crate::Encoding::from_name(p.get("--encoding").unwrap_or("base32"))
        .map_err(|e| format!("--{e}"))?;
    let neither = || {
        format!(
            "--key-file {path:?} holds {} bytes, neither a key nor keys as text: {KEY_FILE_FORMS}",
            bytes.len()
        )
    };
    let ids = if bytes.len() == crate::public::KEY_LEN {
        let version = p.number("--key-version")?.unwrap_or(0);
        let version = u32::try_from(version).unwrap_or(u32::MAX);
        crate::PublicIds::new(&bytes, version, prefix, encoding)
    } else {
        if p.get("--key-version").is_some() {
            return Err("--key-version applies to a key file of 16 raw bytes; keys as text name their versions (VERSION:HEX)".into());
        }
        let text = core::str::from_utf8(&bytes).map_err(|_| neither())?;
        crate::PublicIds::from_keys(text, prefix, encoding)
    };
    let ids = ids.map_err(|e| match e {
        // Neither form: the message names both, as the command line's page does.
        crate::Error::InvalidArgument {
            argument: "keys",
            reason,
        } if reason == crate::public::KEYS_FORMAT => neither(),
        crate::Error::InvalidArgument {
            argument: "key" | "keys",
            reason,
        } => {
            format!("--key-file {path:?}: the key {reason}")
        }
        crate::Error::InvalidArgument { argument, reason } => {
            format!("--{}: {reason}", argument.replace('_', "-"))
        }
        other => other.to_string(),
    })?;
    Ok(ids.with_layout(p.layout()?))
}

/// `ms` (Unix milliseconds) as RFC 3339 in UTC with milliseconds.
pub fn rfc3339(ms: u64) -> String {
    let (days, ms_of_day) = (ms / 86_400_000, ms % 86_400_000);
    let (y, m, d) = civil_from_days(days);
    let s = ms_of_day / 1000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s / 60 % 60,
        s % 60,
        ms_of_day % 1000
    )
}

/// Unix milliseconds of a time given as digits, `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS[.fff]Z`
/// (also with a space for the `T`, and `+00:00` for the `Z`).
pub fn parse_time(text: &str) -> Option<u64> {
    if let Some(ms) = crate::parse_decimal(text.as_bytes()) {
        return Some(ms);
    }
    let bytes = text.as_bytes();
    let num = |r: core::ops::Range<usize>| crate::parse_decimal(bytes.get(r)?);
    if bytes.len() < 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1970..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
    {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * 86_400_000;
    let rest = &text[10..];
    if rest.is_empty() {
        return Some(ms);
    }
    let rest = rest.strip_prefix(['T', ' '])?;
    let rest = rest
        .strip_suffix('Z')
        .or_else(|| rest.strip_suffix("+00:00"))?;
    let (hms, frac) = rest.split_once('.').unwrap_or((rest, ""));
    let clock = hms.as_bytes();
    if clock.len() != 8 || clock[2] != b':' || clock[5] != b':' {
        return None;
    }
    let part = |r: core::ops::Range<usize>| crate::parse_decimal(&clock[r]);
    let (hours, minutes, seconds) = (part(0..2)?, part(3..5)?, part(6..8)?);
    if hours > 23 || minutes > 59 || seconds > 59 {
        return None;
    }
    ms += (hours * 3600 + minutes * 60 + seconds) * 1000;
    if !frac.is_empty() {
        if frac.len() > 3 {
            return None;
        }
        let f = crate::parse_decimal(frac.as_bytes())?;
        // `frac` has 1 to 3 digits: tenths, hundredths or thousandths of a second.
        ms += f * [100, 10, 1][frac.len() - 1];
    }
    Some(ms)
}

fn is_leap(y: u64) -> bool {
    y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400))
}

fn days_in_month(y: u64, m: u64) -> u64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a date from 1970 on (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + u64::from(m <= 2), m, d)
}
