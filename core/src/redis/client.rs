//! The Rust executor of [`super::RedisSegments`] over the `redis` crate (feature `redis`, sync):
//! it keeps the connection, reads the server's `run_id` once per connection, sends the script
//! a step names (`redis::Script`: `EVALSHA`, then `EVAL` on `NOSCRIPT`) and feeds the reply
//! back; the segments' driver shared with the SQL databases (the fetch thread, waiting,
//! reconnecting, giving back on close, `SegmentError`) runs it as any database's client.
//!
//! ```no_run
//! use shardid::segment::SizePolicy;
//! use shardid::redis::{DenseIds, create_tag_from};
//!
//! let url = "redis://127.0.0.1:6379";
//! create_tag_from(url, "orders", "shardid", 1)?; // once, on a new server
//! let orders = DenseIds::connect(url, "orders", "shardid", SizePolicy::new())?;
//! let id = orders.next_id()?;
//! orders.close();
//! # Ok::<(), shardid::redis::SegmentError>(())
//! ```

use std::boxed::Box;
use std::format;
use std::string::{String, ToString};
use std::time::Duration;
use std::vec::Vec;

use redis::{ConnectionLike as _, IntoConnectionInfo as _, Value as Reply};

use super::{Command, Failure, RedisSegments, Step};
use crate::driver::{Client, ConnectError, Owned};
use crate::segment::driver::{Driver, Failed, SegmentClient, SegmentError, dense_ids_methods};
use crate::segment::{Segment, SizePolicy, Unused};
use crate::sql::{Cell, Dialect, Placeholders, Value};

/// How long connecting and each reply may take: a server that does not answer is unreachable,
/// not a wait without end.
const TIMEOUT: Duration = Duration::from_secs(5);

/// One connection to a Redis server and the protocol's state on it.
pub(crate) struct RedisClient {
    conn: redis::Connection,
    run_id: String,
    closed: bool,
}

/// The refusals of the URL rule for this build's client: `None` when it takes `url`.
fn url_problem(url: &str) -> Option<String> {
    if !super::is_redis_url(url) {
        return Some(format!("is not a Redis URL: {}", super::REDIS_URL_SCHEMES));
    }
    if url.starts_with("redis+sentinel://") {
        return Some("Sentinel URLs are not supported by the Rust client yet: name the primary with redis://".into());
    }
    if url.starts_with("rediss://") {
        return Some(
            "this build of shardid's Redis client has no TLS (rediss://): use redis:// or unix://"
                .into(),
        );
    }
    match url.into_connection_info() {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// A reply's cells, nested arrays flattened.
fn cells(reply: &Reply, out: &mut Vec<Owned>) {
    match reply {
        Reply::Int(n) => out.push(Owned::Int(*n)),
        Reply::BulkString(bytes) => out.push(Owned::Text(String::from_utf8_lossy(bytes).into())),
        Reply::SimpleString(text) => out.push(Owned::Text(text.clone())),
        Reply::Array(items) | Reply::Set(items) => {
            for item in items {
                cells(item, out);
            }
        }
        _ => out.push(Owned::Null),
    }
}

impl RedisClient {
    /// The connected server's `run_id`.
    pub(super) fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Runs one script call.
    pub(super) fn script(&mut self, command: &Command) -> Result<Vec<Owned>, redis::RedisError> {
        let Command::Script { source, keys, args } = command;
        let script = redis::Script::new(source);
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(key);
        }
        for arg in args {
            invocation.arg(arg);
        }
        let reply: Reply = invocation.invoke(&mut self.conn)?;
        let mut out = Vec::new();
        cells(&reply, &mut out);
        Ok(out)
    }

    /// Runs `protocol`'s operation to its end on this connection.
    fn drive(&mut self, protocol: &mut RedisSegments) -> Result<Step, redis::RedisError> {
        protocol.connected(&self.run_id);
        loop {
            match protocol.next() {
                Step::Run { command, .. } => match self.script(&command) {
                    Ok(reply) => {
                        let reply: Vec<Cell<'_>> = reply.iter().map(Owned::cell).collect();
                        protocol.answer(&reply);
                    }
                    Err(e) => {
                        if Self::broken(&e) {
                            self.closed = true;
                        }
                        protocol.failed();
                        return Err(e);
                    }
                },
                // Connected above; one connection per client.
                Step::Connect { .. } | Step::Idle => {
                    return Ok(Step::Failed(Failure::Driver));
                }
                done => {
                    protocol.finish();
                    return Ok(done);
                }
            }
        }
    }
}

impl Client for RedisClient {
    type Error = redis::RedisError;
    // The segments' driver asks a dialect of every client; Redis speaks no SQL, and nothing
    // of a dialect is read on this path.
    const DIALECT: Dialect = Dialect::Postgres;
    const PLACEHOLDERS: Placeholders = Placeholders::Numbered;
    const URL_ARGUMENT: &'static str = "url";

    fn url_problem(url: &str) -> Option<String> {
        url_problem(url)
    }

    fn connect(url: &str) -> Result<Self, ConnectError<Self::Error>> {
        if let Some(reason) = url_problem(url) {
            return Err(ConnectError::Url(reason));
        }
        let client = redis::Client::open(url).map_err(|e| ConnectError::Url(e.to_string()))?;
        let mut conn = client
            .get_connection_with_timeout(TIMEOUT)
            .map_err(ConnectError::Driver)?;
        conn.set_read_timeout(Some(TIMEOUT))
            .and_then(|()| conn.set_write_timeout(Some(TIMEOUT)))
            .map_err(ConnectError::Driver)?;
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut conn)
            .map_err(ConnectError::Driver)?;
        let Some(run_id) = super::run_id(&info).map(ToString::to_string) else {
            return Err(ConnectError::Url(
                "the server's INFO names no run_id: not a Redis server".into(),
            ));
        };
        Ok(Self {
            conn,
            run_id,
            closed: false,
        })
    }

    /// Runs the Lua script `sql` with `params` as its `ARGV` (no keys): the one seam's shape
    /// for a store whose statements are scripts. The segments run through [`SegmentClient`].
    fn run(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Option<Vec<Owned>>, Self::Error> {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(sql).arg(0);
        for param in params {
            match param {
                Value::Text(text) => cmd.arg(*text),
                Value::Int(n) => cmd.arg(*n),
            };
        }
        let reply: Reply = cmd.query(&mut self.conn)?;
        let mut out = Vec::new();
        cells(&reply, &mut out);
        Ok(Some(out))
    }

    fn describe(e: &Self::Error) -> String {
        e.to_string()
    }

    fn message(e: &Self::Error) -> Option<String> {
        e.detail().map(ToString::to_string)
    }

    fn code(e: &Self::Error) -> Option<String> {
        e.code().map(ToString::to_string)
    }

    fn broken(e: &Self::Error) -> bool {
        // A replica refuses writes (READONLY) and a loading server answers LOADING: reconnect,
        // and read the identity again.
        e.is_io_error()
            || e.is_connection_dropped()
            || e.is_unrecoverable_error()
            || e.is_timeout()
            || matches!(e.code(), Some("READONLY" | "LOADING" | "MASTERDOWN"))
    }

    fn is_closed(&self) -> bool {
        self.closed || !self.conn.is_open()
    }

    fn close(self) {}
}

impl SegmentClient for RedisClient {
    type Statements = RedisSegments;

    fn statements(schema: &str) -> Result<RedisSegments, String> {
        RedisSegments::new(schema).map_err(ToString::to_string)
    }

    fn take(
        &mut self,
        protocol: &RedisSegments,
        _: Dialect,
        tag: &str,
        size: u64,
        _: &mut Option<u64>,
    ) -> Result<Segment, Failed<Self::Error>> {
        let mut protocol = protocol.clone();
        protocol.take(tag, size);
        match self.drive(&mut protocol)? {
            Step::Segment(segment) => Ok(segment),
            Step::Failed(Failure::Refused {
                kind: crate::ErrorKind::UnknownTag,
                reason,
            }) => Err(Failed::UnknownTag(reason)),
            Step::Failed(Failure::Refused { reason, .. }) => Err(Failed::Unusable(reason)),
            other => Err(Failed::Unusable(format!("the take ended with {other:?}"))),
        }
    }

    fn give_back(
        &mut self,
        protocol: &RedisSegments,
        _: Dialect,
        tag: &str,
        unused: &Unused,
    ) -> Result<bool, Self::Error> {
        let mut protocol = protocol.clone();
        protocol.give_back(tag, unused.first, unused.end);
        Ok(matches!(self.drive(&mut protocol)?, Step::GivenBack(true)))
    }

    /// A serial period's tag would be made here; Redis has no serials yet (phase 1), and a
    /// tag is never made from 1 behind the caller's back: nothing is made.
    fn create_tag(&mut self, _: &RedisSegments, _: Dialect, _: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Creates `tag` from `first`, or from 1 with `explicit` false (see [`super`]'s "A server that
/// restarts empty"); where its numbers continue.
fn create(
    url: &str,
    tag: &str,
    prefix: &str,
    first: u64,
    explicit: bool,
) -> Result<u64, SegmentError> {
    crate::segment::driver::check_tag(tag)?;
    let mut protocol =
        RedisSegments::new(prefix).map_err(|reason| SegmentError::InvalidArgument {
            argument: "schema",
            reason: reason.into(),
        })?;
    if first == 0 || first >= 1 << 53 {
        return Err(SegmentError::InvalidArgument {
            argument: "first",
            reason: "must be 1 to 2^53 - 1".into(),
        });
    }
    let mut conn = RedisClient::connect(url).map_err(SegmentError::of_connect::<RedisClient>)?;
    protocol.create_tag(tag, first, explicit);
    let step = conn
        .drive(&mut protocol)
        .map_err(|e| SegmentError::Database(Box::new(e)))?;
    match step {
        Step::Created { next, .. } => Ok(next),
        Step::Failed(Failure::Refused {
            kind: crate::ErrorKind::InvalidArgument,
            reason,
        }) => Err(SegmentError::InvalidArgument {
            argument: "url",
            reason,
        }),
        other => Err(SegmentError::Database(
            format!("creating tag {tag} ended with {other:?}").into(),
        )),
    }
}

/// Creates `tag` (its first number 1) under `prefix` on the Redis server `url` names; an
/// existing tag is left as it is. Only on a server that holds shardid's marks (it created or
/// took a tag before and kept its data): a new server, or one that restarted empty, is refused,
/// so that a deploy script creating its tags at every start never hands numbers out again
/// after a loss (use [`create_tag_from`] once on a new server).
///
/// # Errors
/// [`SegmentError::InvalidArgument`] for a bad tag, prefix or URL, or a server without
/// shardid's marks; [`SegmentError::Database`] when the server cannot be reached.
pub fn create_tag(url: &str, tag: &str, prefix: &str) -> Result<(), SegmentError> {
    create(url, tag, prefix, 1, false).map(drop)
}

/// Creates `tag` from `first` (past the server's fence after a step back) under `prefix` on
/// the Redis server `url` names, also on a server without shardid's marks: 1 on a new server,
/// past the last number handed out on one that lost its data. An existing tag is left as it
/// is. Returns where its numbers continue.
///
/// # Errors
/// As [`create_tag`], but a server without marks is taken as new.
pub fn create_tag_from(
    url: &str,
    tag: &str,
    prefix: &str,
    first: u64,
) -> Result<u64, SegmentError> {
    create(url, tag, prefix, first, true)
}

dense_ids_methods!(
    RedisClient,
    "a Redis server",
    "the Redis server `url` names (`redis://` or `unix://`)",
    "[`SegmentError::Database`] when the server cannot be reached"
);

#[cfg(test)]
mod tests {
    use super::url_problem;

    #[test]
    fn urls() {
        assert_eq!(url_problem("redis://127.0.0.1:6379/0"), None);
        assert_eq!(url_problem("unix:///tmp/redis.sock"), None);
        assert!(url_problem("rediss://h").is_some_and(|r| r.contains("TLS")));
        assert!(url_problem("redis+sentinel://h:26379/m").is_some_and(|r| r.contains("Sentinel")));
        assert!(url_problem("http://h").is_some_and(|r| r.contains("not a Redis URL")));
    }
}
