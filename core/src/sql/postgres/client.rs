//! What the Rust clients over the `postgres` crate share (feature `postgres`): a driver error
//! as text that keeps what the server or the system said. The crate's own `Display` of an
//! error is its kind only ("db error", "error connecting to server"); the server's message,
//! its detail and hint, and the system's reason (connection refused) are in
//! [`postgres::Error::as_db_error`] and the error's source.

use core::fmt;
use std::boxed::Box;
use std::error::Error;

/// `e` shown with the server's own message (`ERROR: relation "seg.x" does not exist`, with its
/// detail and hint) or, for an error of the connection, the system's reason after the kind
/// (`error connecting to server: Connection refused (os error 111)`).
pub(crate) struct Described<'a>(pub &'a postgres::Error);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(db) = self.0.as_db_error() {
            return write!(f, "{db} (SQLSTATE {})", db.code().code());
        }
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// A driver error boxed for an error that holds any database's (the leases'
/// `LeaseError::Database`): shown as [`Described`], with the driver's error as
/// its source.
#[derive(Debug)]
pub(crate) struct ServerError(pub(crate) postgres::Error);

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Described(&self.0).fmt(f)
    }
}

impl Error for ServerError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.0)
    }
}

impl ServerError {
    /// `e`, boxed.
    pub(crate) fn boxed(e: postgres::Error) -> Box<dyn Error + Send + Sync> {
        Box::new(Self(e))
    }
}

/// The core's one rule for a connection string ([`crate::sql::Dialect::of_url`]), for the
/// PostgreSQL clients: the reason of an `INVALID_ARGUMENT` on `config` for a URL no driver
/// takes or one of a MySQL-family server (which the `mysql` modules' clients take).
pub(crate) fn url_problem(config: &str) -> Option<std::string::String> {
    use std::string::ToString;
    match crate::sql::Dialect::of_url(config) {
        Ok(dialect) if dialect.is_mysql() => {
            Some("names a MySQL or MariaDB server: the mysql module's client takes it".into())
        }
        Ok(_) => None,
        Err(why) => Some(why.to_string()),
    }
}
