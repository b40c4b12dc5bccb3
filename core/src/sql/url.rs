//! The one rule for a database URL: its scheme names the database, for every client (Rust,
//! Python, Node: each binding calls [`Dialect::of_url`]) and the command line. Anything else
//! is refused at once (`INVALID_ARGUMENT`, naming the schemes taken), before any connection:
//! a URL no driver takes is not a database to wait for.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Display, Formatter};

use super::Dialect;

/// The schemes [`Dialect::of_url`] takes, as its refusal names them.
pub const URL_SCHEMES: &str = "postgresql://, postgres://, mysql://, mariadb:// or sqlite:///";

/// Why [`Dialect::of_url`] refused a URL: the reason of an `INVALID_ARGUMENT` (render with
/// [`Display`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotADatabaseUrl<'a> {
    /// The scheme the URL has (before `://`, at most 20 characters shown), if any.
    scheme: Option<&'a str>,
}

impl Display for NotADatabaseUrl<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.scheme {
            Some(scheme) => {
                let shown = scheme
                    .char_indices()
                    .nth(20)
                    .map_or(scheme, |(i, _)| &scheme[..i]);
                write!(f, "{shown:?} is not a database URL: {URL_SCHEMES}")
            }
            None => write!(
                f,
                "is not a database URL: {URL_SCHEMES} (or libpq's host=... dbname=...)"
            ),
        }
    }
}

impl Dialect {
    /// The database a connection string names: `postgresql://` and `postgres://` URLs and
    /// libpq's `key=value` strings are PostgreSQL, `mysql://` MySQL and `mariadb://` MariaDB
    /// (one family: [`Dialect::is_mysql`]; where the two differ, a client asks the server,
    /// [`super::mysql::DETECT_DIALECT`]), `sqlite:` SQLite (its file: [`sqlite_path`]).
    ///
    /// # Errors
    /// Any other scheme (`postgresql+psycopg://`, `http://`), or text that is neither a URL
    /// nor a `key=value` string.
    pub fn of_url(url: &str) -> Result<Self, NotADatabaseUrl<'_>> {
        match url.split_once("://") {
            Some(("postgres" | "postgresql", _)) => Ok(Self::Postgres),
            Some(("mysql", _)) => Ok(Self::Mysql),
            Some(("mariadb", _)) => Ok(Self::Mariadb),
            Some(("sqlite", _)) => Ok(Self::Sqlite),
            Some((scheme, _)) => Err(NotADatabaseUrl {
                scheme: Some(scheme),
            }),
            None if url.contains('=') => Ok(Self::Postgres),
            None => Err(NotADatabaseUrl { scheme: None }),
        }
    }

    /// [`Dialect::of_url`], and `SQLAlchemy`'s `family+driver://` (`postgresql+asyncpg://`) as
    /// its family's database when the driver is one of [`SQLALCHEMY_DRIVERS`] ([`url_driver`],
    /// [`without_driver`]): the rule of the Python clients, whose applications hand one URL to
    /// `SQLAlchemy` and to shardid (each client runs the driver the URL names, or refuses it).
    /// The Rust and Node clients and the command line keep [`Dialect::of_url`]: they run none
    /// of those drivers, so a URL naming one is refused there at once.
    ///
    /// # Errors
    /// [`Dialect::of_url`]'s, and a driver `SQLAlchemy`'s list for the family lacks.
    pub fn of_sqlalchemy_url(url: &str) -> Result<Self, NotADatabaseUrl<'_>> {
        match url
            .split_once("://")
            .and_then(|(scheme, _)| with_driver(scheme))
        {
            Some((dialect, _)) => Ok(dialect),
            None => Self::of_url(url),
        }
    }

    /// `"postgres"`, `"mysql"`, `"mariadb"` or `"sqlite"` ([`Dialect::from_name`] reads it
    /// back).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Postgres => "postgres",
            Self::Mysql => "mysql",
            Self::Mariadb => "mariadb",
            Self::Sqlite => "sqlite",
        }
    }

    /// The family's name: `"postgres"`, `"sqlite"`, or `"mysql"` for MySQL and MariaDB, whose
    /// statements are the same (which driver runs them).
    pub const fn family_name(self) -> &'static str {
        match self {
            Self::Mysql | Self::Mariadb => "mysql",
            other => other.name(),
        }
    }
}

/// The drivers `SQLAlchemy` names after a scheme's `+` (`postgresql+asyncpg://`), by family:
/// an application hands its one URL to every Python client, so [`Dialect::of_sqlalchemy_url`]
/// takes these as the database they name. Which of them a client runs is the binding's (it has the drivers): one
/// it does not run is refused naming the one to install or write, never run with another.
pub const SQLALCHEMY_DRIVERS: [(&str, &[&str]); 4] = [
    (
        "postgres",
        &[
            "psycopg",
            "psycopg_async",
            "psycopg2",
            "psycopg2cffi",
            "asyncpg",
            "pg8000",
        ],
    ),
    (
        "mysql",
        &[
            "pymysql",
            "aiomysql",
            "mysqldb",
            "mysqlconnector",
            "asyncmy",
        ],
    ),
    (
        "mariadb",
        &[
            "pymysql",
            "aiomysql",
            "mysqldb",
            "mysqlconnector",
            "mariadbconnector",
            "asyncmy",
        ],
    ),
    ("sqlite", &["pysqlite", "aiosqlite"]),
];

/// A scheme `SQLAlchemy` writes with its driver (`postgresql+asyncpg`): the database and the
/// driver, when the family is one [`Dialect::of_url`] takes and the driver one of
/// [`SQLALCHEMY_DRIVERS`]' for it.
fn with_driver(scheme: &str) -> Option<(Dialect, &str)> {
    let (base, driver) = scheme.split_once('+')?;
    let dialect = match base {
        "postgres" | "postgresql" => Dialect::Postgres,
        "mysql" => Dialect::Mysql,
        "mariadb" => Dialect::Mariadb,
        "sqlite" => Dialect::Sqlite,
        _ => return None,
    };
    SQLALCHEMY_DRIVERS
        .iter()
        .any(|(family, drivers)| *family == dialect.name() && drivers.contains(&driver))
        .then_some((dialect, driver))
}

/// The driver a `SQLAlchemy` URL names after its scheme's `+` (`"asyncpg"` of
/// `postgresql+asyncpg://h/d`), when [`Dialect::of_sqlalchemy_url`] takes it; `None` for a URL without
/// one (`postgresql://`, libpq's `key=value`).
pub fn url_driver(url: &str) -> Option<&str> {
    let (scheme, _) = url.split_once("://")?;
    with_driver(scheme).map(|(_, driver)| driver)
}

/// `url` without the driver [`url_driver`] reads (`postgresql://h/d` of
/// `postgresql+asyncpg://h/d`): what the driver itself and [`sqlite_path`] read. Any other
/// text is returned as it is.
pub fn without_driver(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) if with_driver(scheme).is_some() => {
            let base = scheme.split_once('+').map_or(scheme, |(base, _)| base);
            let mut plain = String::from(base);
            plain.push_str("://");
            plain.push_str(rest);
            plain
        }
        _ => String::from(url),
    }
}

/// Why [`sqlite_path`] refused a `sqlite:` URL (render with [`Display`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotASqliteUrl {
    reason: &'static str,
}

impl Display for NotASqliteUrl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: sqlite:///relative/path.db or sqlite:////absolute/path.db",
            self.reason
        )
    }
}

/// The file a `sqlite:` URL names, as `SQLAlchemy` and `dj-database-url` write them:
/// `sqlite:///relative/path.db` is `relative/path.db` (from the working directory),
/// `sqlite:////absolute/path.db` is `/absolute/path.db`. The path is taken as written (no
/// percent-decoding: a name with `%` is used as is).
///
/// An in-memory database (`sqlite://`, `sqlite:///:memory:`) is refused: each connection
/// would have its own, so two connections of one process would hand out the same numbers,
/// and nothing would outlive the process. So is a host (`sqlite://host/x.db`: SQLite has no
/// server) and a query string (no parameter is read, and one silently ignored would surprise).
///
/// # Errors
/// Not a `sqlite:` URL, or one of the refusals above.
pub fn sqlite_path(url: &str) -> Result<&str, NotASqliteUrl> {
    let refuse = |reason| Err(NotASqliteUrl { reason });
    let Some(rest) = url.strip_prefix("sqlite://") else {
        return refuse("not a sqlite:// URL");
    };
    if rest.contains('?') {
        return refuse("a sqlite URL takes no query string");
    }
    let Some(path) = rest.strip_prefix('/') else {
        return if rest.is_empty() {
            refuse("an in-memory database is one per connection: name a file")
        } else {
            refuse("a sqlite URL names no host (three slashes before a relative path)")
        };
    };
    match path {
        "" | "/" => refuse("the URL names no file"),
        ":memory:" => refuse("an in-memory database is one per connection: name a file"),
        _ if path.ends_with('/') => refuse("the URL names a directory, not a file"),
        _ => Ok(path),
    }
}

/// A connection string as every message shows it, in every language and the command line:
/// `host:port/database` only (`h1:5432,h2:5433/app`; a part the string does not name is left
/// out; a `sqlite:` URL, which names a file, is shown as written without its query string). Users, passwords and every other parameter are left
/// out, however they are written: `user:password@` (a password holding `@` ends at the last
/// `@` before the host, as [`super::mysql::MysqlUrl`] reads it), `?password=`, or libpq's
/// `key=value` pairs with quoted values (`password = 'a b'`). Text that is no connection
/// string is not echoed at all: it could be a password pasted in the wrong place.
pub fn url_shown(url: &str) -> String {
    let target = Target::of(url);
    let mut out = String::new();
    if let Some(file) = target.file {
        out.push_str(file);
        return out;
    }
    if !target.parsed {
        out.push_str("(not a connection string)");
        return out;
    }
    for (i, host) in target.hosts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(host);
        // One port for every host, or one each (libpq's rule).
        let port = match target.ports.len() {
            1 => target.ports.first(),
            _ => target.ports.get(i),
        };
        if let Some(port) = port.filter(|p| !p.is_empty()) {
            out.push(':');
            out.push_str(port);
        }
    }
    if let Some(port) = target
        .ports
        .first()
        .filter(|p| target.hosts.is_empty() && !p.is_empty())
    {
        out.push(':');
        out.push_str(port);
    }
    if let Some(database) = target.database.filter(|d| !d.is_empty()) {
        out.push('/');
        out.push_str(&database);
    }
    if out.is_empty() {
        out.push_str("(default server)");
    }
    out
}

/// `text` (a driver's error about `url`, which may quote the connection string or a part of
/// it: libpq's "invalid percent-encoded token", an echoed URL) with every occurrence of the
/// password `url` holds replaced by `***`: as written and percent-decoded, from the user
/// information, a `?password=` parameter or libpq's `password` key. Every binding passes a
/// driver's words about a connection through it before they reach a message.
pub fn redacted(text: &str, url: &str) -> String {
    // (what to find, what to put there)
    let mut needles: Vec<(String, &str)> = Vec::new();
    for secret in Target::of(url).secrets {
        // A password holding `@` is split at its first `@` by libpq (`user:p@ss1x@host`: the
        // password `p`, the host `ss1x@host`), which then names that host: each piece after
        // an `@` is taken out where an `@` follows it, and any piece of 3 characters or more
        // everywhere (shorter pieces are left: replacing every `s` would leave no message).
        for (at, _) in secret.match_indices('@') {
            let (before, after) = (&secret[..at], &secret[at + 1..]);
            if !after.is_empty() {
                needles.push((alloc::format!("{after}@"), "***@"));
            }
            for piece in [before, after] {
                if piece.chars().count() >= 3 {
                    needles.push((piece.into(), "***"));
                }
            }
        }
        if !secret.is_empty() {
            needles.push((secret, "***"));
        }
    }
    // Longest first, so a secret holding another is replaced whole.
    needles.sort_by_key(|(s, _)| core::cmp::Reverse(s.len()));
    let mut out = String::from(text);
    for (needle, with) in &needles {
        if out.contains(needle.as_str()) {
            out = out.replace(needle.as_str(), with);
        }
    }
    out
}

/// What [`url_shown`] and [`redacted`] read of a connection string.
#[derive(Default)]
struct Target<'a> {
    /// Whether the text is a URL or `key=value` pairs at all.
    parsed: bool,
    /// A `sqlite:` URL without its query string.
    file: Option<&'a str>,
    hosts: Vec<String>,
    ports: Vec<String>,
    database: Option<String>,
    /// The password as written and as the driver reads it (percent-decoded, unquoted).
    secrets: Vec<String>,
}

impl<'a> Target<'a> {
    fn of(url: &'a str) -> Self {
        let mut t = Self::default();
        if let Some((_, rest)) = url.split_once("://") {
            if url.starts_with("sqlite:") {
                // The URL names a file, no server: shown as written, without a query string.
                t.file = url.split(['?', '#']).next();
                // A sqlite URL holds no password, but a query string could.
                t.url_query(rest);
                return t;
            }
            t.parsed = true;
            t.url(rest);
        } else if url.contains('=') {
            t.parsed = true;
            t.conninfo(url);
        }
        t
    }

    /// A URL after `scheme://`: the user information ends at the last `@` before the query
    /// string (a password holding `@`, even `/`, unencoded is taken whole: more than
    /// [`super::mysql::MysqlUrl`] accepts, so no part of it is ever shown as a host or a
    /// database), the authority at the first `/`, `?` or `#` after it.
    fn url(&mut self, rest: &str) {
        let query = rest.find(['?', '#']).unwrap_or(rest.len());
        let from = rest[..query].rfind('@').unwrap_or(0);
        let end = rest[from..]
            .find(['/', '?', '#'])
            .map_or(rest.len(), |i| from + i);
        let (authority, after) = rest.split_at(end);
        let hostlist = match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                if let Some((_, password)) = userinfo.split_once(':') {
                    self.secret(password);
                }
                &authority[at + 1..]
            }
            None => authority,
        };
        // libpq's own reading ends the user information at the first `@` before any `/`, so a
        // password holding `?` (which ends the authority above) is still its password; one
        // that is the start of the password read above is a piece `redacted` already handles.
        let libpq_end = rest
            .find(['@', '/'])
            .filter(|&i| rest[i..].starts_with('@'));
        if let Some((_, password)) = libpq_end.and_then(|at| rest[..at].split_once(':'))
            && !self.secrets.iter().any(|s| s.starts_with(password))
        {
            self.secret(password);
        }
        for hostport in hostlist.split(',').filter(|h| !h.is_empty()) {
            let (host, port) = match hostport.strip_prefix('[') {
                Some(v6) => match v6.split_once(']') {
                    Some((host, after)) => (&hostport[..host.len() + 2], after.strip_prefix(':')),
                    None => (hostport, None),
                },
                None => match hostport.rsplit_once(':') {
                    Some((host, port)) => (host, Some(port)),
                    None => (hostport, None),
                },
            };
            self.hosts
                .push(decoded(host).unwrap_or_else(|| host.into()));
            // A port that is not a number is not shown: it may be a password misread.
            self.ports.push(
                port.filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
                    .unwrap_or_default()
                    .into(),
            );
        }
        if self.ports.iter().all(String::is_empty) {
            self.ports.clear();
        }
        let path = after.split(['?', '#']).next().unwrap_or_default();
        let database = path.trim_start_matches('/');
        if !database.is_empty() {
            self.database = Some(decoded(database).unwrap_or_else(|| database.into()));
        }
        self.url_query(after);
    }

    /// The `key=value&...` parameters after a URL's `?`: `password` is a secret; `host`,
    /// `port` and `dbname` name the server when the authority and path did not.
    fn url_query(&mut self, after: &str) {
        let Some((_, query)) = after.split_once('?') else {
            return;
        };
        let query = query.split('#').next().unwrap_or_default();
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value_text = decoded(value).unwrap_or_else(|| value.into());
            match decoded(key).as_deref().unwrap_or(key) {
                "password" => self.secret(value),
                "host" | "hostaddr" if self.hosts.is_empty() => {
                    self.hosts = value_text.split(',').map(Into::into).collect();
                }
                "port" if self.ports.is_empty() => {
                    self.ports = value_text.split(',').map(Into::into).collect();
                }
                "dbname" if self.database.is_none() => self.database = Some(value_text),
                _ => {}
            }
        }
    }

    /// libpq's `key = value` pairs (values bare or single-quoted, `\` escaping the next
    /// character), as `PQconnectdb` reads them.
    fn conninfo(&mut self, text: &str) {
        let mut chars = text.char_indices().peekable();
        let mut host = None;
        let mut hostaddr = None;
        loop {
            while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
            let Some(&(start, _)) = chars.peek() else {
                break;
            };
            let mut end = start;
            while let Some((i, _)) = chars.next_if(|(_, c)| !c.is_whitespace() && *c != '=') {
                end = i + 1;
            }
            let key = &text[start..end.max(start)];
            while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
            if chars.next_if(|(_, c)| *c == '=').is_none() {
                // Not key=value: libpq refuses the string; the word is not shown.
                continue;
            }
            while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
            let mut value = String::new();
            let raw_start = chars.peek().map_or(text.len(), |&(i, _)| i);
            let quoted = chars.next_if(|(_, c)| *c == '\'').is_some();
            let mut raw_end = raw_start;
            while let Some((i, c)) = chars.next() {
                raw_end = i + c.len_utf8();
                if c == '\\' {
                    if let Some((j, next)) = chars.next() {
                        raw_end = j + next.len_utf8();
                        value.push(next);
                    }
                    continue;
                }
                if quoted && c == '\'' {
                    break;
                }
                if !quoted && c.is_whitespace() {
                    raw_end = i;
                    break;
                }
                value.push(c);
            }
            match key {
                "password" => {
                    let raw = &text[raw_start..raw_end];
                    self.secret(raw);
                    self.secret(raw.trim_matches('\''));
                    self.secrets.push(value);
                }
                "host" => host = Some(value),
                "hostaddr" => hostaddr = Some(value),
                "port" => self.ports = value.split(',').map(Into::into).collect(),
                "dbname" => {
                    // libpq reads a dbname that is a URL or key=value pairs as a connection
                    // string of its own.
                    if value.contains('=') || value.contains("://") {
                        let inner = Target::of(&value);
                        self.secrets.extend(inner.secrets);
                        self.database = inner.database;
                    } else {
                        self.database = Some(value);
                    }
                }
                _ => {}
            }
        }
        if let Some(hosts) = host.or(hostaddr) {
            self.hosts = hosts.split(',').map(Into::into).collect();
        }
    }

    /// A password as written and percent-decoded.
    fn secret(&mut self, written: &str) {
        if let Some(plain) = decoded(written) {
            self.secrets.push(plain);
        }
        self.secrets.push(written.into());
    }
}

/// `text` percent-decoded (`+` left as it is), or `None` for a `%` not followed by two hex
/// digits or bytes that are not UTF-8. The one decoding of a URL's pieces: Redis's Sentinel URLs
/// (`crate::redis::sentinel_url`) use it too.
pub(crate) fn decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = core::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn a_url_names_its_database_or_is_refused_naming_the_schemes() {
        assert_eq!(Dialect::of_url("mysql://u@h/d"), Ok(Dialect::Mysql));
        assert_eq!(Dialect::of_url("mariadb://h"), Ok(Dialect::Mariadb));
        assert_eq!(Dialect::of_url("postgresql://h/d"), Ok(Dialect::Postgres));
        assert_eq!(Dialect::of_url("postgres://h/d"), Ok(Dialect::Postgres));
        assert_eq!(Dialect::of_url("host=h dbname=d"), Ok(Dialect::Postgres));
        assert_eq!(Dialect::of_url("sqlite:///a.db"), Ok(Dialect::Sqlite));
        assert_eq!(
            Dialect::of_url("postgresql+psycopg://h/d")
                .unwrap_err()
                .to_string(),
            "\"postgresql+psycopg\" is not a database URL: postgresql://, postgres://, mysql://, mariadb:// or sqlite:///"
        );
        assert!(
            Dialect::of_url("nonsense")
                .unwrap_err()
                .to_string()
                .starts_with("is not a database URL: postgresql://")
        );
        assert!(Dialect::of_url("http://h").is_err());
        let long = "x".repeat(100) + "://h";
        let shown = std::format!("{:?} is not", "x".repeat(20));
        assert!(
            Dialect::of_url(&long)
                .unwrap_err()
                .to_string()
                .starts_with(&shown)
        );
        for d in [
            Dialect::Postgres,
            Dialect::Mysql,
            Dialect::Mariadb,
            Dialect::Sqlite,
        ] {
            assert_eq!(Dialect::from_name(d.name()), Some(d));
        }
        assert_eq!(Dialect::Mariadb.family_name(), "mysql");
        assert_eq!(Dialect::Sqlite.family_name(), "sqlite");
    }

    /// `SQLAlchemy`'s URLs name the database before the `+` and the driver after it (issue
    /// 56): each is its family's, the driver read and taken out; another family or driver is
    /// refused as before.
    #[test]
    fn a_sqlalchemy_url_names_its_database_and_its_driver() {
        for (url, dialect, driver, plain) in [
            (
                "postgresql+asyncpg://u:p@h:5432/d",
                Dialect::Postgres,
                "asyncpg",
                "postgresql://u:p@h:5432/d",
            ),
            (
                "postgresql+psycopg://h/d",
                Dialect::Postgres,
                "psycopg",
                "postgresql://h/d",
            ),
            (
                "postgres+psycopg2://h/d",
                Dialect::Postgres,
                "psycopg2",
                "postgres://h/d",
            ),
            (
                "mysql+pymysql://root@h/d",
                Dialect::Mysql,
                "pymysql",
                "mysql://root@h/d",
            ),
            (
                "mysql+aiomysql://root@h/d",
                Dialect::Mysql,
                "aiomysql",
                "mysql://root@h/d",
            ),
            (
                "mariadb+pymysql://h/d",
                Dialect::Mariadb,
                "pymysql",
                "mariadb://h/d",
            ),
            (
                "sqlite+aiosqlite:///a.db",
                Dialect::Sqlite,
                "aiosqlite",
                "sqlite:///a.db",
            ),
            (
                "sqlite+pysqlite:////tmp/a.db",
                Dialect::Sqlite,
                "pysqlite",
                "sqlite:////tmp/a.db",
            ),
        ] {
            assert_eq!(Dialect::of_sqlalchemy_url(url), Ok(dialect), "{url}");
            // Rust's, Node's and the command line's rule still refuses it: they run none.
            assert!(Dialect::of_url(url).is_err(), "{url}");
            assert_eq!(url_driver(url), Some(driver), "{url}");
            assert_eq!(without_driver(url), plain, "{url}");
            assert_eq!(url_driver(&without_driver(url)), None, "{url}");
        }
        assert_eq!(
            sqlite_path(&without_driver("sqlite+aiosqlite:///a.db")),
            Ok("a.db")
        );
        for url in [
            "postgresql+nosuch://h/d",
            "redis+sentinel://h/m",
            "sqlite+asyncpg:///a.db",
            "http+asyncpg://h",
            "postgresql+://h/d",
        ] {
            assert!(Dialect::of_sqlalchemy_url(url).is_err(), "{url}");
            assert_eq!(url_driver(url), None, "{url}");
            assert_eq!(without_driver(url), url, "{url}");
        }
        for (url, dialect) in [
            ("postgresql://h/d", Dialect::Postgres),
            ("host=h dbname=d", Dialect::Postgres),
            ("mariadb://h", Dialect::Mariadb),
            ("sqlite:///a.db", Dialect::Sqlite),
        ] {
            assert_eq!(Dialect::of_sqlalchemy_url(url), Ok(dialect), "{url}");
        }
        assert!(Dialect::of_sqlalchemy_url("nonsense").is_err());
        assert_eq!(url_driver("host=h dbname=d"), None);
        assert_eq!(without_driver("host=h dbname=d"), "host=h dbname=d");
    }

    /// Every way the issue found a password printed (issue 60, finding 6), and the forms
    /// around them: none is shown, each is redacted from a driver's words.
    #[test]
    fn a_connection_string_is_shown_as_its_server_only_and_its_password_redacted() {
        for (url, shown, password) in [
            (
                "postgresql://alice:p@ss@db.example:5433/app",
                "db.example:5433/app",
                "p@ss",
            ),
            ("postgresql://alice:p%40ss%2Fx@db/app", "db/app", "p@ss/x"),
            ("postgres://alice:s3cr%zzet@db/app", "db/app", "s3cr%zzet"),
            (
                "postgresql://db:5432/app?password=hunter2&sslmode=disable",
                "db:5432/app",
                "hunter2",
            ),
            (
                "postgresql://db/app?user=a&password=h%20unter",
                "db/app",
                "h unter",
            ),
            (
                "postgresql:///app?host=/var/run/postgresql&password=pw1",
                "/var/run/postgresql/app",
                "pw1",
            ),
            (
                "postgresql://u:pw2@h1:5432,h2:5433/app",
                "h1:5432,h2:5433/app",
                "pw2",
            ),
            ("postgresql://u:pw3@[::1]:5432/app", "[::1]:5432/app", "pw3"),
            (
                "host=db port=5432 dbname=app password = hunter2",
                "db:5432/app",
                "hunter2",
            ),
            ("host=db dbname=app password='a b'", "db/app", "a b"),
            ("host=db dbname=app password='it\\'s x'", "db/app", "it's x"),
            ("host=db dbname=app password=tab\\ x", "db/app", "tab x"),
            (
                "host=h1,h2 port=1,2 dbname=app password=pw4",
                "h1:1,h2:2/app",
                "pw4",
            ),
            ("dbname='host=db password=pw5 dbname=app'", "/app", "pw5"),
            ("mysql://root:p@ss:w@db:3307/app", "db:3307/app", "p@ss:w"),
            ("mariadb://root:pw6@db", "db", "pw6"),
        ] {
            assert_eq!(url_shown(url), shown, "{url}");
            let said = std::format!("connection to {url} failed: password {password:?} is wrong");
            let clean = redacted(&said, url);
            assert!(!clean.contains(password), "{url}: {clean}");
            assert!(clean.contains("***"), "{url}: {clean}");
        }
        // libpq's own words about a bad percent-encoding quote the password as written.
        let url = "postgresql://alice:s3cr%zzet@db/app";
        let said = "invalid percent-encoded token: \"s3cr%zzet\"";
        assert_eq!(
            redacted(said, url),
            "invalid percent-encoded token: \"***\""
        );
        // libpq splits user:p@ss1x@host at the first `@` and names the host it could not find.
        let url = "postgresql://alice:p@ss1x@db/app";
        let said = "failed to resolve host 'ss1x@db': Name or service not known";
        assert_eq!(
            redacted(said, url),
            "failed to resolve host '***@db': Name or service not known"
        );
        let said = "could not translate host name \"ss@db\" to address";
        assert_eq!(
            redacted(said, "postgresql://alice:p@ss@db/app"),
            "could not translate host name \"***@db\" to address"
        );
        assert_eq!(
            url_shown("sqlite:///data/app.db?x=1"),
            "sqlite:///data/app.db"
        );
        assert_eq!(url_shown("hunter2"), "(not a connection string)");
        assert_eq!(url_shown("postgresql://"), "(default server)");
        // A password with a raw '/' is still the password; one with a raw '?' makes the rest
        // a query string, and the part before it shows no port that is not a number.
        assert_eq!(url_shown("postgresql://u:pa/ss@db/app"), "db/app");
        assert_eq!(redacted("pa/ss", "postgresql://u:pa/ss@db/app"), "***");
        assert_eq!(url_shown("postgresql://u:pa?ss@db/app"), "u");
        assert_eq!(redacted("pa?ss", "postgresql://u:pa?ss@db/app"), "***");
        assert_eq!(
            redacted("no secret here", "postgresql://db/app"),
            "no secret here"
        );
        // A password's first piece of one letter is not replaced everywhere.
        assert_eq!(
            redacted("postgres: p@ss", "postgresql://u:p@ss@db/app"),
            "postgres: ***"
        );
    }

    #[test]
    fn a_sqlite_url_names_its_file_as_sqlalchemy_writes_it() {
        assert_eq!(sqlite_path("sqlite:///app.db"), Ok("app.db"));
        assert_eq!(sqlite_path("sqlite:///data/app.db"), Ok("data/app.db"));
        assert_eq!(
            sqlite_path("sqlite:////var/db/app.db"),
            Ok("/var/db/app.db")
        );
        for (url, why) in [
            ("sqlite://", "in-memory"),
            ("sqlite:///:memory:", "in-memory"),
            ("sqlite://host/app.db", "no host"),
            ("sqlite:///app.db?timeout=5", "no query string"),
            ("sqlite:///", "no file"),
            ("sqlite:////", "no file"),
            ("sqlite:///data/", "a directory"),
            ("postgresql://h/d", "not a sqlite"),
        ] {
            let said = sqlite_path(url).unwrap_err().to_string();
            assert!(said.contains(why), "{url}: {said}");
            assert!(
                said.ends_with("sqlite:////absolute/path.db"),
                "{url}: {said}"
            );
        }
    }
}
