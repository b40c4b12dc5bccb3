//! `mysql://user:password@host:port/database` (or `mariadb://`): the one reading every client
//! gives such a URL, so a password holding `@`, `:` or `/` (percent-encoded, as URLs want) means
//! the same in Python, Node and Rust.

use alloc::string::String;
use alloc::vec::Vec;

/// A MySQL URL's parts, percent-decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MysqlUrl {
    /// The user (`root` when the URL names none).
    pub user: String,
    /// The password, if the URL holds one.
    pub password: Option<String>,
    /// The host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// The port (3306 when the URL names none).
    pub port: u16,
    /// The database the statements run in (`USE`); the DDL's objects name theirs.
    pub database: Option<String>,
}

/// Why a URL was refused: the reason of an `INVALID_ARGUMENT` on `url`.
pub type UrlProblem = &'static str;

impl MysqlUrl {
    /// Reads `url`.
    ///
    /// # Errors
    /// What is wrong with it, for an `INVALID_ARGUMENT` on `url`.
    pub fn parse(url: &str) -> Result<Self, UrlProblem> {
        let rest = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
            .ok_or("must start with mysql:// or mariadb://")?;
        // The authority ends at the first '/', '?' or '#' (none of them may stand unencoded in
        // a password); the user information at the authority's last '@'.
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            None => (String::from("root"), None),
            Some(info) => match info.split_once(':') {
                Some((user, password)) => (decode(user)?, Some(decode(password)?)),
                None => (decode(info)?, None),
            },
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or("has an IPv6 host without its ]")?;
            (host, after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (hostport, None),
            }
        };
        if host.is_empty() {
            return Err("names no host");
        }
        let port = match port {
            None | Some("") => 3306,
            Some(port) => port
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or("has a port that is not a number in 1..=65535")?,
        };
        let path = path.split(['?', '#']).next().unwrap_or("");
        let database = match path.trim_start_matches('/') {
            "" => None,
            name => Some(decode(name)?),
        };
        Ok(Self {
            user,
            password,
            host: decode(host)?,
            port,
            database,
        })
    }

    /// Whether `text` is a MySQL or MariaDB URL, by the one rule ([`super::Dialect::of_url`]).
    pub fn is_url(text: &str) -> bool {
        super::Dialect::of_url(text).is_ok_and(super::Dialect::is_mysql)
    }
}

/// Percent-decodes `text` as UTF-8.
fn decode(text: &str) -> Result<String, UrlProblem> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| core::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("has a % that is not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "percent-decodes to text that is not UTF-8")
}
