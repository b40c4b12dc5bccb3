//! The one rule for a database URL: its scheme names the database, for every client (Rust,
//! Python, Node: each binding calls [`Dialect::of_url`]) and the command line. Anything else
//! is refused at once (`INVALID_ARGUMENT`, naming the schemes taken), before any connection:
//! a URL no driver takes is not a database to wait for.

use core::fmt::{self, Display, Formatter};

use super::Dialect;

/// The schemes [`Dialect::of_url`] takes, as its refusal names them.
pub const URL_SCHEMES: &str = "postgresql://, postgres://, mysql:// or mariadb://";

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
    /// [`super::mysql::DETECT_DIALECT`]).
    ///
    /// # Errors
    /// Any other scheme (`postgresql+psycopg://`, `http://`), or text that is neither a URL
    /// nor a `key=value` string.
    pub fn of_url(url: &str) -> Result<Self, NotADatabaseUrl<'_>> {
        match url.split_once("://") {
            Some(("postgres" | "postgresql", _)) => Ok(Self::Postgres),
            Some(("mysql", _)) => Ok(Self::Mysql),
            Some(("mariadb", _)) => Ok(Self::Mariadb),
            Some((scheme, _)) => Err(NotADatabaseUrl {
                scheme: Some(scheme),
            }),
            None if url.contains('=') => Ok(Self::Postgres),
            None => Err(NotADatabaseUrl { scheme: None }),
        }
    }

    /// `"postgres"`, `"mysql"` or `"mariadb"` ([`Dialect::from_name`] reads it back).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Postgres => "postgres",
            Self::Mysql => "mysql",
            Self::Mariadb => "mariadb",
        }
    }

    /// The family's name: `"postgres"`, or `"mysql"` for MySQL and MariaDB, whose statements
    /// are the same (which driver runs them).
    pub const fn family_name(self) -> &'static str {
        if self.is_mysql() { "mysql" } else { "postgres" }
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
        assert_eq!(
            Dialect::of_url("postgresql+psycopg://h/d")
                .unwrap_err()
                .to_string(),
            "\"postgresql+psycopg\" is not a database URL: postgresql://, postgres://, mysql:// or mariadb://"
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
        for d in [Dialect::Postgres, Dialect::Mysql, Dialect::Mariadb] {
            assert_eq!(Dialect::from_name(d.name()), Some(d));
        }
        assert_eq!(Dialect::Mariadb.family_name(), "mysql");
    }
}
