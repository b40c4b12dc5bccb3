//! Dense IDs on Redis 7 (and Valkey, the same protocol), issue 57: a segment take, its
//! give-back and a tag's creation are one Lua script each ([`scripts`]), run atomically by the
//! server; [`RedisSegments`] says which script to run with which keys and arguments, and reads
//! the reply (sans I/O, in the same vocabulary as the SQL databases' segment protocol:
//! [`Step::Connect`], [`Step::Run`] with a [`Command`], [`Step::Segment`], [`Step::GivenBack`],
//! [`Step::Failed`]), so an executor in any language only sends `EVALSHA` (then `EVAL` on
//! `NOSCRIPT`) and feeds the reply back. The Rust client over the `redis` crate is
//! `client::DenseIds` and `client::create_tag` (feature `redis`).
//!
//! # URLs
//! `redis://[user:password@]host[:port][/db]`, `rediss://` (TLS), `unix:///path/to/socket` and
//! Sentinel's `redis+sentinel://host:26379,host2:26380/mymaster` ([`REDIS_URL_SCHEMES`],
//! [`is_redis_url`]); `shardid::segment::create_tag` takes them beside the SQL databases'. This
//! build's Rust client takes `redis://` and `unix://`; `rediss://` (no TLS compiled in) and
//! Sentinel (not yet) are refused as `INVALID_ARGUMENT` saying so.
//!
//! # Keys
//! A tag's hash is `<prefix>:tag:{<tag>}` (the `{tag}` hash tag: one slot in a Redis Cluster),
//! the server's marks `<prefix>:server`; `<prefix>` is the schema argument of every entry point
//! (a plain identifier, `shardid` by convention). Keys have no TTL; the server must not evict
//! them (`maxmemory-policy` `noeviction` or a `volatile-*` one).
//!
//! # Lost writes and failover
//! Replication and `appendfsync everysec` are asynchronous: a promoted replica, or a server
//! restarted after a crash, may lack the last acknowledged takes, and a plain `INCRBY` would hand
//! those numbers out again. Each tag records the identity of the server that last wrote it (its
//! `run_id`, which the executor reads once per connection: every start of `redis-server` draws a
//! new one and a replica has its own), as the SQL rows record a timeline or a server; a take that
//! finds another identity first skips by the rate-and-time rule of
//! [`crate::sql::failover`] (the same constants: [`MARGIN`](crate::sql::failover::MARGIN) times
//! the tag's highest rate from its last write to now plus
//! [`SKEW_MS`](crate::sql::failover::SKEW_MS), plus
//! [`FLOOR_BATCHES`](crate::sql::failover::FLOOR_BATCHES) segments of twice its last size). A
//! data set this very process wrote last cannot have lost anything, so `run_id` alone tells a
//! step back; `master_replid` adds nothing to it (it changes at a promotion, where the promoted
//! replica's `run_id` already differs). A clean restart skips too (a hole, never a duplicate):
//! Redis gives no way to tell it from a crash. A tag created after a step back (the lost state
//! may have created and used it) starts past the server's fence, the same bound over all its
//! tags, never lowered.
//!
//! # A server that restarts empty
//! A server without persistence, or whose files were lost, restarts with no tags at all: the
//! running clients' takes say the tag is unknown (they stop handing out, never start again at
//! 1), and nothing on the server remembers what was handed out. So the tag's creation decides:
//! `create_tag` (and `shardid::segment::create_tag`, the entry point every database shares)
//! creates a tag from 1 only on a server that holds shardid's marks (`<prefix>:server`, written by
//! every creation and take, kept with the data), and refuses a server without them
//! (`INVALID_ARGUMENT`): it is new, or it lost everything, and only the operator knows which.
//! `create_tag_from` names the first number explicitly (1 on a new server; past the last
//! number handed out after a loss): a deploy script that creates its tags at every start then
//! fails loudly after an empty restart instead of handing the numbers out again.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use crate::ErrorKind;
use crate::segment::Segment;
use crate::sql::{Cell, decoded};

pub mod lease_steps;
pub mod scripts;

#[cfg(feature = "redis")]
pub mod client;
#[cfg(feature = "redis")]
pub mod lease;
#[cfg(feature = "redis")]
pub use crate::segment::driver::SegmentError;
#[cfg(feature = "redis")]
pub use client::{DenseIds, create_tag, create_tag_from};
#[cfg(feature = "redis")]
pub use lease::Lease;

/// The schemes [`is_redis_url`] takes.
pub const REDIS_URL_SCHEMES: &str =
    "redis://, rediss://, unix:// or redis+sentinel://host:port,host:port/master";

/// Whether `url` names a Redis server (its scheme is one of [`REDIS_URL_SCHEMES`]): the core's
/// URL rule for Redis, beside [`crate::sql::Dialect::of_url`]'s for the SQL databases.
pub fn is_redis_url(url: &str) -> bool {
    matches!(
        url.split_once("://"),
        Some(("redis" | "rediss" | "unix" | "redis+sentinel", _))
    )
}

/// What a Sentinel URL names ([`sentinel_url`]): the sentinels to ask, the primary's name
/// among them, and what to connect to the primary with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentinelUrl {
    /// The sentinels, `(host, port)`, in the URL's order (port 26379 when none is given).
    pub sentinels: Vec<(String, u16)>,
    /// The name the sentinels monitor the primary under.
    pub master: String,
    /// The database number on the primary (0 when none is given).
    pub db: u32,
    /// The user for the primary (`None`: the default user).
    pub username: Option<String>,
    /// The password for the primary.
    pub password: Option<String>,
}

/// Sentinel's default port.
pub const SENTINEL_PORT: u16 = 26379;

/// Reads a Sentinel URL, `redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/master[/db]`
/// (the form redis-py's and ioredis's users write for a Sentinel group): every client connects
/// to the primary the sentinels name, asking them again after each lost connection.
///
/// # Errors
/// Why the URL is refused (no sentinel, a bad port, no master name, a bad database number).
pub fn sentinel_url(url: &str) -> Result<SentinelUrl, &'static str> {
    let rest = url
        .strip_prefix("redis+sentinel://")
        .ok_or("is not a redis+sentinel:// URL")?;
    let (authority, path) = rest
        .split_once('/')
        .ok_or("names no master: .../mymaster")?;
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (Some(userinfo), hosts),
        None => (None, authority),
    };
    let (username, password) = match userinfo {
        None => (None, None),
        Some(info) => {
            let (user, password) = match info.split_once(':') {
                Some((user, password)) => (user, Some(password)),
                None => (info, None),
            };
            let user = decoded(user).ok_or("has a user that is not percent-encoded UTF-8")?;
            let password = password
                .map(|p| decoded(p).ok_or("has a password that is not percent-encoded UTF-8"))
                .transpose()?;
            ((!user.is_empty()).then_some(user), password)
        }
    };
    let mut sentinels = Vec::new();
    for host in hosts.split(',') {
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) if !name.ends_with(']') || name.starts_with('[') => (
                name,
                port.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or("has a sentinel port that is not 1 to 65535")?,
            ),
            _ => (host, SENTINEL_PORT),
        };
        let name = name.trim_start_matches('[').trim_end_matches(']');
        if name.is_empty() {
            return Err("names no sentinel host: host:26379[,host:26380...]");
        }
        sentinels.push((name.to_string(), port));
    }
    let (master, db) = match path.split_once('/') {
        Some((master, db)) => (
            master,
            db.parse::<u32>()
                .map_err(|_| "has a database number that is not a number")?,
        ),
        None => (path, 0),
    };
    let master = master.split(['?', '#']).next().unwrap_or_default();
    if master.is_empty() {
        return Err("names no master: .../mymaster");
    }
    Ok(SentinelUrl {
        sentinels,
        master: master.to_string(),
        db,
        username,
        password,
    })
}

/// The server's identity in the text of `INFO server` (its `run_id`), which an executor reads
/// once per connection and gives [`RedisSegments::connected`].
pub fn run_id(info: &str) -> Option<&str> {
    info.lines()
        .find_map(|line| line.strip_prefix("run_id:"))
        .map(str::trim)
        .filter(|id| !id.is_empty())
}

/// Why a prefix (the schema argument) is refused: `None` for a plain identifier.
pub fn prefix_problem(prefix: &str) -> Option<&'static str> {
    let plain = !prefix.is_empty()
        && prefix.len() <= 63
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    (!plain).then_some("must be 1 to 63 ASCII letters, digits, _ or -")
}

/// What an executor sends: a script with its keys and arguments (`EVALSHA` of the script's
/// SHA-1, then `EVAL` of its source on `NOSCRIPT`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// One script call.
    Script {
        /// The Lua source (one of [`scripts`]).
        source: &'static str,
        /// `KEYS`, all in the tag's hash slot but the server's marks.
        keys: Vec<String>,
        /// `ARGV`.
        args: Vec<String>,
    },
}

/// What an executor does next ([`RedisSegments::next`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Use (open if needed) the connection of server `server`, read its `INFO server` and
    /// answer [`RedisSegments::connected`] with its [`run_id`], or [`RedisSegments::failed`].
    Connect {
        /// The server (always 0 in this phase: one server per tag).
        server: usize,
    },
    /// Run `command` on the server's connection; answer [`RedisSegments::answer`] with the
    /// reply's integers (a nested reply flattened, text as [`Cell::Text`]) or
    /// [`RedisSegments::failed`].
    Run {
        /// The server.
        server: usize,
        /// What to send.
        command: Command,
    },
    /// The take's segment.
    Segment(Segment),
    /// The give-back is over: whether the server took the rest back.
    GivenBack(bool),
    /// The creation is over: whether it made the tag (`false`: it was there), and its next
    /// number.
    Created {
        /// Whether this call made it.
        made: bool,
        /// Where its numbers continue.
        next: u64,
    },
    /// The operation failed.
    Failed(Failure),
    /// No operation under way.
    Idle,
}

/// Why an operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The executor's last error ([`RedisSegments::failed`]): raise it as the client raised it.
    Driver,
    /// The protocol's refusal of the server's answer.
    Refused {
        /// [`ErrorKind::UnknownTag`], [`ErrorKind::InvalidArgument`] (a server without shardid's
        /// marks, creation not explicit) or [`ErrorKind::Database`] (an exhausted tag, a reply
        /// no script makes).
        kind: ErrorKind,
        /// Why, naming the tag.
        reason: String,
    },
}

impl Failure {
    /// The SQLSTATE the SQL databases' segment protocol gives the same refusal
    /// ([`crate::segment::protocol::Failure`]), so a binding raises a Redis refusal as it raises
    /// theirs: an unknown tag [`UNKNOWN_TAG`](crate::sql::UNKNOWN_TAG), an exhausted one
    /// [`TAG_EXHAUSTED`](crate::sql::TAG_EXHAUSTED), a creation refused `22023`
    /// (`invalid_parameter_value`), any other reply `XX000` (`internal_error`); `None` for the
    /// executor's own error.
    pub fn sqlstate(&self) -> Option<&'static str> {
        let Self::Refused { kind, reason } = self else {
            return None;
        };
        Some(match kind {
            ErrorKind::UnknownTag => crate::sql::UNKNOWN_TAG,
            ErrorKind::InvalidArgument => "22023",
            _ if reason.starts_with("TAG_EXHAUSTED") => crate::sql::TAG_EXHAUSTED,
            _ => "XX000",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Idle,
    Take {
        tag: String,
        size: u64,
    },
    GiveBack {
        tag: String,
        first: u64,
        end: u64,
    },
    Create {
        tag: String,
        first: u64,
        explicit: bool,
    },
    Done(Step),
}

/// The take, give-back and creation of one tag's segments on one Redis server (see the
/// module's doc): one operation at a time, then [`RedisSegments::next`] until it ends.
#[derive(Clone, Debug)]
pub struct RedisSegments {
    prefix: String,
    /// The connected server's `run_id` (`None`: connect first).
    identity: Option<String>,
    op: Op,
}

/// An integer of a reply.
fn int(cell: Option<&Cell<'_>>) -> Option<i64> {
    match cell? {
        Cell::Int(n) => Some(*n),
        Cell::Text(text) => text.parse().ok(),
        _ => None,
    }
}

/// A number of a reply (none below 0).
fn uint(cell: Option<&Cell<'_>>) -> Option<u64> {
    u64::try_from(int(cell)?).ok()
}

impl RedisSegments {
    /// The protocol for the keys under `prefix`.
    ///
    /// # Errors
    /// The reason `prefix` is refused ([`prefix_problem`]).
    pub fn new(prefix: &str) -> Result<Self, &'static str> {
        if let Some(why) = prefix_problem(prefix) {
            return Err(why);
        }
        Ok(Self {
            prefix: prefix.into(),
            identity: None,
            op: Op::Idle,
        })
    }

    /// The key of `tag`'s hash.
    pub fn tag_key(&self, tag: &str) -> String {
        format!("{}:tag:{{{tag}}}", self.prefix)
    }

    /// The key of the server's marks.
    pub fn server_key(&self) -> String {
        format!("{}:server", self.prefix)
    }

    /// Takes a segment of `size` numbers of `tag`.
    pub fn take(&mut self, tag: &str, size: u64) {
        self.op = Op::Take {
            tag: tag.into(),
            size,
        };
    }

    /// Gives `[first, end)` of `tag` back.
    pub fn give_back(&mut self, tag: &str, first: u64, end: u64) {
        self.op = Op::GiveBack {
            tag: tag.into(),
            first,
            end,
        };
    }

    /// Creates `tag` from `first` (past the server's fence); `explicit`: the caller chose
    /// `first`, so a server without shardid's marks is taken as new.
    pub fn create_tag(&mut self, tag: &str, first: u64, explicit: bool) {
        self.op = Op::Create {
            tag: tag.into(),
            first,
            explicit,
        };
    }

    /// The connection is open and its server's identity is `run_id`.
    pub fn connected(&mut self, run_id: &str) {
        self.identity = Some(run_id.into());
    }

    /// The connection was lost: the next operation connects (and reads the identity) again.
    pub fn lost(&mut self) {
        self.identity = None;
    }

    /// The executor's error for the step it ran: the operation failed with it, and the
    /// server's identity is read again before the next operation. The clients of the field
    /// (redis-py, ioredis) open a new connection by themselves after an error, perhaps to a
    /// server that restarted or was promoted meanwhile: a take sent with the identity read on
    /// the connection before would find its own `run_id` on the tag and skip nothing.
    pub fn failed(&mut self) {
        self.identity = None;
        if self.op != Op::Idle {
            self.op = Op::Done(Step::Failed(Failure::Driver));
        }
    }

    /// What to do next.
    pub fn next(&self) -> Step {
        let Some(id) = self.identity.clone() else {
            return match self.op {
                Op::Idle => Step::Idle,
                Op::Done(ref step) => step.clone(),
                _ => Step::Connect { server: 0 },
            };
        };
        let (source, keys, args) = match &self.op {
            Op::Idle => return Step::Idle,
            Op::Done(step) => return step.clone(),
            Op::Take { tag, size } => (
                scripts::TAKE,
                vec![self.tag_key(tag), self.server_key()],
                vec![id, size.to_string()],
            ),
            Op::GiveBack { tag, first, end } => (
                scripts::GIVE_BACK,
                vec![self.tag_key(tag)],
                vec![id, first.to_string(), end.to_string()],
            ),
            Op::Create {
                tag,
                first,
                explicit,
            } => (
                scripts::CREATE_TAG,
                vec![self.tag_key(tag), self.server_key()],
                vec![
                    id,
                    first.to_string(),
                    String::from(if *explicit { "1" } else { "0" }),
                ],
            ),
        };
        Step::Run {
            server: 0,
            command: Command::Script { source, keys, args },
        }
    }

    /// The reply of the script [`Step::Run`] named, flattened to its cells.
    pub fn answer(&mut self, reply: &[Cell<'_>]) {
        let status = int(reply.first());
        let refused = |kind, reason: String| Step::Failed(Failure::Refused { kind, reason });
        let unusable = |tag: &str| {
            refused(
                ErrorKind::Database,
                format!(
                    "the Redis server answered tag {tag}'s script with a reply no shardid script makes: {reply:?}"
                ),
            )
        };
        let done = match &self.op {
            Op::Idle | Op::Done(_) => return,
            Op::Take { tag, size } => match status {
                Some(1) => match (uint(reply.get(1)), uint(reply.get(2))) {
                    (Some(first), Some(count)) if count == *size => Step::Segment(Segment {
                        first,
                        count: *size,
                        stride: 1,
                    }),
                    _ => unusable(tag),
                },
                Some(-1) => refused(ErrorKind::UnknownTag, format!("no tag {tag}")),
                Some(-2) => refused(
                    ErrorKind::Database,
                    format!(
                        "TAG_EXHAUSTED: the numbers of tag {tag} would pass 2^53 (Redis's scripts count in doubles)"
                    ),
                ),
                _ => unusable(tag),
            },
            Op::GiveBack { tag, .. } => match status {
                Some(s @ (0 | 1)) => Step::GivenBack(s == 1),
                _ => unusable(tag),
            },
            Op::Create { tag, .. } => match (status, uint(reply.get(1))) {
                (Some(s @ (0 | 1)), Some(next)) => Step::Created { made: s == 1, next },
                (Some(-3), _) => refused(
                    ErrorKind::InvalidArgument,
                    format!(
                        "this Redis server holds no shardid data ({} is missing): it is new, or it \
                         restarted empty and lost what tag {tag} handed out; create the tag with \
                         create_tag_from and its first number (1 on a new server, past the last \
                         number handed out after a loss)",
                        self.server_key()
                    ),
                ),
                (Some(-2), _) => refused(
                    ErrorKind::Database,
                    format!("TAG_EXHAUSTED: tag {tag} would start past 2^53"),
                ),
                _ => unusable(tag),
            },
        };
        self.op = Op::Done(done);
    }

    /// Ends the operation (after its result was read), ready for the next.
    pub fn finish(&mut self) {
        self.op = Op::Idle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The script, keys and arguments the next step runs.
    fn run(protocol: &RedisSegments) -> (&'static str, Vec<String>, Vec<String>) {
        match protocol.next() {
            Step::Run {
                server: 0,
                command: Command::Script { source, keys, args },
            } => (source, keys, args),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_take_connects_runs_one_script_and_reads_the_segment() {
        let mut p = RedisSegments::new("app").unwrap();
        assert_eq!(p.next(), Step::Idle);
        p.take("orders", 100);
        assert_eq!(p.next(), Step::Connect { server: 0 });
        p.connected("abc");
        let (source, keys, args) = run(&p);
        assert_eq!(source, scripts::TAKE);
        assert_eq!(keys, ["app:tag:{orders}", "app:server"]);
        assert_eq!(args, ["abc", "100"]);
        p.answer(&[Cell::Int(1), Cell::Text("41"), Cell::Int(100)]);
        let segment = Segment {
            first: 41,
            count: 100,
            stride: 1,
        };
        assert_eq!(p.next(), Step::Segment(segment));
        p.finish();
        assert_eq!(p.next(), Step::Idle);
        // The identity is kept across operations, until the connection is lost.
        p.give_back("orders", 60, 141);
        let (source, keys, args) = run(&p);
        assert_eq!((source, keys.len()), (scripts::GIVE_BACK, 1));
        assert_eq!(args, ["abc", "60", "141"]);
        p.answer(&[Cell::Int(0)]);
        assert_eq!(p.next(), Step::GivenBack(false));
        p.finish();
        p.lost();
        p.take("orders", 100);
        assert_eq!(p.next(), Step::Connect { server: 0 });
    }

    #[test]
    fn refusals() {
        let mut p = RedisSegments::new("app").unwrap();
        p.connected("abc");
        let refused = |p: &RedisSegments| match p.next() {
            Step::Failed(Failure::Refused { kind, reason }) => (kind, reason),
            other => panic!("{other:?}"),
        };
        p.take("orders", 10);
        p.answer(&[Cell::Int(-1)]);
        assert_eq!(refused(&p).0, ErrorKind::UnknownTag);
        p.take("orders", 10);
        p.answer(&[Cell::Int(-2), Cell::Text("9007199254740990")]);
        assert!(refused(&p).1.starts_with("TAG_EXHAUSTED"));
        // A segment of another size, or a negative start, is no script's.
        for reply in [
            [Cell::Int(1), Cell::Int(1), Cell::Int(9)],
            [Cell::Int(1), Cell::Int(-5), Cell::Int(10)],
        ] {
            p.take("orders", 10);
            p.answer(&reply);
            assert_eq!(refused(&p).0, ErrorKind::Database);
        }
        p.create_tag("orders", 1, false);
        let (source, _, args) = run(&p);
        assert_eq!((source, args[2].as_str()), (scripts::CREATE_TAG, "0"));
        p.answer(&[Cell::Int(-3)]);
        let (kind, reason) = refused(&p);
        assert_eq!(kind, ErrorKind::InvalidArgument);
        assert!(reason.contains("create_tag_from"), "{reason}");
        p.create_tag("orders", 7, true);
        assert_eq!(run(&p).2, ["abc", "7", "1"]);
        p.answer(&[Cell::Int(1), Cell::Text("7")]);
        assert_eq!(
            p.next(),
            Step::Created {
                made: true,
                next: 7
            }
        );
        // The executor's error ends the operation.
        p.take("orders", 10);
        p.failed();
        assert_eq!(p.next(), Step::Failed(Failure::Driver));
        assert_eq!(Failure::Driver.sqlstate(), None);
    }

    #[test]
    fn sentinel_urls() {
        let url =
            sentinel_url("redis+sentinel://u:p%40ss@a:26380,b,[::1]:26381/mymaster/2").unwrap();
        assert_eq!(
            url.sentinels,
            [
                ("a".to_string(), 26380),
                ("b".to_string(), SENTINEL_PORT),
                ("::1".to_string(), 26381)
            ]
        );
        assert_eq!((url.master.as_str(), url.db), ("mymaster", 2));
        assert_eq!(url.username.as_deref(), Some("u"));
        assert_eq!(url.password.as_deref(), Some("p@ss"));
        let url = sentinel_url("redis+sentinel://:secret@h:1/m").unwrap();
        assert_eq!(
            (url.username, url.password.as_deref(), url.db),
            (None, Some("secret"), 0)
        );
        for bad in [
            "redis://h/m",
            "redis+sentinel://h:26379",
            "redis+sentinel://h:26379/",
            "redis+sentinel://h:0/m",
            "redis+sentinel://h:x/m",
            "redis+sentinel://,h/m",
            "redis+sentinel://h/m/x",
            "redis+sentinel://a:b%zz@h/m",
        ] {
            assert!(sentinel_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_error_reads_the_identity_again() {
        // An executor whose client reconnected by itself after an error (redis-py, ioredis)
        // may be on a restarted server: the next take must carry that server's run_id, or it
        // finds its own on the tag and skips nothing past the writes the restart lost.
        let mut p = RedisSegments::new("app").unwrap();
        p.take("orders", 10);
        p.connected("before");
        assert_eq!(run(&p).2[0], "before");
        p.failed();
        p.take("orders", 10);
        assert_eq!(p.next(), Step::Connect { server: 0 });
        p.connected("after");
        assert_eq!(run(&p).2[0], "after");
    }

    #[test]
    fn refusals_carry_the_sql_protocols_sqlstates() {
        let mut p = RedisSegments::new("app").unwrap();
        p.connected("abc");
        let mut sqlstate = |reply: &[Cell<'_>]| {
            p.take("orders", 10);
            p.answer(reply);
            match p.next() {
                Step::Failed(failure) => failure.sqlstate(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(sqlstate(&[Cell::Int(-1)]), Some(crate::sql::UNKNOWN_TAG));
        assert_eq!(
            sqlstate(&[Cell::Int(-2), Cell::Int(9)]),
            Some(crate::sql::TAG_EXHAUSTED)
        );
        assert_eq!(sqlstate(&[Cell::Int(7)]), Some("XX000"));
        p.create_tag("orders", 1, false);
        p.answer(&[Cell::Int(-3)]);
        assert!(matches!(p.next(), Step::Failed(f) if f.sqlstate() == Some("22023")));
    }

    #[test]
    fn urls_prefixes_and_identity() {
        for url in [
            "redis://h",
            "rediss://h:6380/1",
            "unix:///tmp/r.sock",
            "redis+sentinel://a:26379,b:26380/m",
        ] {
            assert!(is_redis_url(url), "{url}");
        }
        for url in ["postgresql://h/db", "http://h", "redis:h", "valkey://h"] {
            assert!(!is_redis_url(url), "{url}");
        }
        assert!(RedisSegments::new("shardid").is_ok());
        for prefix in ["", "a:b", "a{b}", "a b", &"x".repeat(64)] {
            assert!(RedisSegments::new(prefix).is_err(), "{prefix:?}");
        }
        let info = "# Server\r\nredis_version:7.0.15\r\nrun_id:0123abcd\r\ntcp_port:6379\r\n";
        assert_eq!(run_id(info), Some("0123abcd"));
        assert_eq!(run_id("# Server\r\nrun_id:\r\n"), None);
    }
}
