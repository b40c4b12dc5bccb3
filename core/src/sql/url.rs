//! The one rule for a database URL: its scheme names the database, for every client (Rust,
//! Python, Node: each binding calls [`Dialect::of_url`]) and the command line. Anything else
//! is refused at once (`INVALID_ARGUMENT`, naming the schemes taken), before any connection:
//! a URL no driver takes is not a database to wait for.

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
