//! Opening a `mysql` crate connection from a `mysql://` URL, for the Rust clients (feature
//! `mysql`): the URL read by [`MysqlUrl`], and a server that accepts the connection but does not
//! greet as MySQL told apart from one that is down.

use std::format;
use std::io::{ErrorKind, Read};
use std::net::{TcpStream, ToSocketAddrs};
use std::string::{String, ToString};
use std::time::Duration;

use super::MysqlUrl;

/// How long the TCP connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a server has to greet before it is taken for something else than MySQL.
pub const GREETING_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a connection could not be opened.
#[derive(Debug)]
pub enum ConnectError {
    /// The URL cannot be read (`INVALID_ARGUMENT` on `url`).
    Url(&'static str),
    /// The server accepted the connection and did not greet as MySQL (`NOT_MYSQL`).
    NotMysql {
        /// `host:port`.
        server: String,
        /// What it did instead.
        reason: String,
    },
    /// The driver's error (the server is down, refused the log-in, ...).
    Driver(mysql::Error),
}

/// A connection to the server `url` names, its database selected.
///
/// # Errors
/// [`ConnectError`].
pub fn connect(url: &str) -> Result<mysql::Conn, ConnectError> {
    let u = MysqlUrl::parse(url).map_err(ConnectError::Url)?;
    greeting(&u.host, u.port).map_err(|reason| ConnectError::NotMysql {
        server: format!("{}:{}", u.host, u.port),
        reason,
    })?;
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some(u.host))
        .tcp_port(u.port)
        .user(Some(u.user))
        .pass(u.password)
        .db_name(u.database)
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT));
    mysql::Conn::new(opts).map_err(ConnectError::Driver)
}

/// The dialect of the server `conn` reaches ([`super::DETECT_DIALECT`]): one round trip.
///
/// # Errors
/// The driver's error, when the server answered neither as MariaDB nor as MySQL does.
pub fn detect(conn: &mut mysql::Conn) -> Result<super::Dialect, mysql::Error> {
    use mysql::prelude::Queryable;
    match conn.query_drop(super::DETECT_DIALECT) {
        Ok(()) => Ok(super::Dialect::Mariadb),
        Err(mysql::Error::MySqlError(e))
            if super::Dialect::detected(Some(&e.code.to_string())).is_some() =>
        {
            Ok(super::Dialect::Mysql)
        }
        Err(e) => Err(e),
    }
}

/// Whether the server at `host:port` greets as MySQL: the first packet of the protocol
/// (sequence 0, protocol version 10, or an error packet). The `mysql` crate would wait for it
/// without end (a PostgreSQL server, say, waits for its client to speak first), and a read
/// timeout would also bound every later statement, which may wait for a lock. A server that
/// cannot be reached is left for the driver to report.
fn greeting(host: &str, port: u16) -> Result<(), String> {
    let Some(address) = (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    else {
        return Ok(());
    };
    let Ok(mut stream) = TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) else {
        return Ok(());
    };
    stream
        .set_read_timeout(Some(GREETING_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 5];
    match stream.read_exact(&mut head) {
        Ok(()) if head[3] == 0 && (head[4] == 10 || head[4] == 0xff) => Ok(()),
        Ok(()) => Err("its first bytes are not a MySQL greeting".into()),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Err(format!(
            "no greeting within {} ms",
            GREETING_TIMEOUT.as_millis()
        )),
        Err(e) => Err(format!("no greeting: {e}")),
    }
}
