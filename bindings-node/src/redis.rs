//! Dense IDs on Redis (issue 57): the core's steps of a take, a give-back and a tag's creation
//! (`shardid::redis::RedisSegments`: its Lua scripts, keys and the reading of their replies),
//! for `redis.js` to run over ioredis; and a shard lease's steps (`RedisLeaseSteps`:
//! `shardid::redis::lease_steps`), which `redis.js`'s `lease()` runs the same way.

use napi::bindgen_prelude::{Either, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use shardid::redis::lease_steps::{Claimed, LeaseSteps};
use shardid::redis::{Command, Failure, RedisSegments as Steps, Step};
use shardid::sql::Cell;

use crate::args::{Arg, u64_arg};
use crate::errors::{Class, guard, invalid_argument};

/// Whether `url` names a Redis server (`redis://`, `rediss://`, `unix://`,
/// `redis+sentinel://`): the core's rule (`shardid::redis::is_redis_url`), asked before the SQL
/// databases' (`databaseOfUrl`).
#[napi]
pub fn is_redis_url(env: &Env, url: String) -> Result<bool> {
    guard(env, || Ok(shardid::redis::is_redis_url(&url)))
}

/// The server's `run_id` in the text of `INFO server` (`null`: none), by the core's reading.
#[napi]
pub fn redis_run_id(env: &Env, info: String) -> Result<Option<String>> {
    guard(env, || Ok(shardid::redis::run_id(&info).map(str::to_owned)))
}

/// A sentinel of a Sentinel URL.
#[napi(object)]
pub struct SentinelHost {
    pub host: String,
    pub port: u32,
}

/// What a `redis+sentinel://` URL names, in the shape ioredis's options take it.
#[napi(object)]
pub struct SentinelUrl {
    pub sentinels: Vec<SentinelHost>,
    pub name: String,
    pub db: u32,
    pub username: Option<String>,
    pub password: Option<String>,
}

/// A `redis+sentinel://` URL read by the core's rule (`shardid::redis::sentinel_url`), or
/// `INVALID_ARGUMENT` on `argument`.
#[napi]
pub fn redis_sentinel_url(env: &Env, url: String, argument: String) -> Result<SentinelUrl> {
    guard(env, || {
        let u = shardid::redis::sentinel_url(&url)
            .map_err(|reason| invalid_argument(env, Class::Range, &argument, reason))?;
        Ok(SentinelUrl {
            sentinels: u
                .sentinels
                .into_iter()
                .map(|(host, port)| SentinelHost {
                    host,
                    port: u32::from(port),
                })
                .collect(),
            name: u.master,
            db: u.db,
            username: u.username,
            password: u.password,
        })
    })
}

/// What a Redis executor does next (`RedisSegments.next()`), in the vocabulary of
/// `SegmentStep`: `step` is `'connect'` (read the connection's `INFO server`, then
/// `connected(runId)`), `'run'` (`EVALSHA` of `sql`'s SHA-1, `EVAL` of `sql` on `NOSCRIPT`,
/// with `values`: the number of keys, the keys, the arguments; then `answer(reply)` or
/// `failed()`), `'segment'` (`segment`: `[first, count, stride]` as decimal strings),
/// `'givenBack'` (`returned`), `'created'` (`made`, `next`), `'failed'` (`driver`: throw the
/// last error fed; else the core's refusal: `kind`, `sqlstate`, `reason`) or `'idle'`.
#[napi(object)]
pub struct RedisStep {
    pub step: String,
    pub server: Option<u32>,
    pub sql: Option<String>,
    pub values: Option<Vec<String>>,
    pub segment: Option<Vec<String>>,
    pub returned: Option<bool>,
    pub made: Option<bool>,
    pub next: Option<String>,
    pub driver: Option<bool>,
    pub kind: Option<String>,
    pub sqlstate: Option<String>,
    pub reason: Option<String>,
}

impl RedisStep {
    fn of(step: &str) -> Self {
        Self {
            step: step.into(),
            server: None,
            sql: None,
            values: None,
            segment: None,
            returned: None,
            made: None,
            next: None,
            driver: None,
            kind: None,
            sqlstate: None,
            reason: None,
        }
    }
}

/// A decimal string as a `u64` (`INVALID_ARGUMENT` on `argument`).
fn decimal(env: &Env, text: &str, argument: &str) -> Result<u64> {
    shardid::parse_decimal(text.as_bytes())
        .ok_or_else(|| invalid_argument(env, Class::Range, argument, "must be a decimal integer"))
}

/// The core's take, give-back and creation of one tag's segments on a Redis server
/// (`shardid::redis::RedisSegments`), run by `redis.js` over ioredis as `segments.js` runs
/// `SegmentProtocol` over the SQL drivers.
#[napi]
pub struct RedisSegments {
    inner: Steps,
}

#[napi]
impl RedisSegments {
    /// The steps for the keys under `prefix` (a plain identifier: `INVALID_ARGUMENT` on
    /// `schema`).
    #[napi(constructor)]
    pub fn new(env: &Env, prefix: String) -> Result<Self> {
        guard(env, || {
            let inner = Steps::new(&prefix)
                .map_err(|reason| invalid_argument(env, Class::Range, "schema", reason))?;
            Ok(Self { inner })
        })
    }

    /// Starts a take of `size` (a decimal string) numbers of `tag`.
    #[napi]
    pub fn take(&mut self, env: &Env, tag: String, size: String) -> Result<()> {
        guard(env, || {
            let size = decimal(env, &size, "size")?;
            self.inner.take(&tag, size);
            Ok(())
        })
    }

    /// Starts giving `first..end` (decimal strings) of `tag` back.
    #[napi]
    pub fn give_back(&mut self, env: &Env, tag: String, first: String, end: String) -> Result<()> {
        guard(env, || {
            let first = decimal(env, &first, "first")?;
            let end = decimal(env, &end, "end")?;
            self.inner.give_back(&tag, first, end);
            Ok(())
        })
    }

    /// Starts creating `tag` from `first` (a decimal string); `explicit`: the caller chose
    /// `first`, so a server without shardid's marks is taken as new (else refused).
    #[napi]
    pub fn create_tag(
        &mut self,
        env: &Env,
        tag: String,
        first: String,
        explicit: bool,
    ) -> Result<()> {
        guard(env, || {
            let first = decimal(env, &first, "first")?;
            self.inner.create_tag(&tag, first, explicit);
            Ok(())
        })
    }

    /// What to do next.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<RedisStep> {
        guard(env, || {
            Ok(match self.inner.next() {
                Step::Connect { server } => RedisStep {
                    server: Some(u32::try_from(server).unwrap_or(u32::MAX)),
                    ..RedisStep::of("connect")
                },
                Step::Run {
                    server,
                    command: Command::Script { source, keys, args },
                } => {
                    let mut values = Vec::with_capacity(1 + keys.len() + args.len());
                    values.push(keys.len().to_string());
                    values.extend(keys);
                    values.extend(args);
                    RedisStep {
                        server: Some(u32::try_from(server).unwrap_or(u32::MAX)),
                        sql: Some(source.into()),
                        values: Some(values),
                        ..RedisStep::of("run")
                    }
                }
                Step::Segment(s) => RedisStep {
                    segment: Some([s.first, s.count, s.stride].map(|n| n.to_string()).to_vec()),
                    ..RedisStep::of("segment")
                },
                Step::GivenBack(returned) => RedisStep {
                    returned: Some(returned),
                    ..RedisStep::of("givenBack")
                },
                Step::Created { made, next } => RedisStep {
                    made: Some(made),
                    next: Some(next.to_string()),
                    ..RedisStep::of("created")
                },
                Step::Failed(failure) => match (&failure, failure.sqlstate()) {
                    (Failure::Refused { kind, reason }, Some(sqlstate)) => RedisStep {
                        driver: Some(false),
                        kind: Some(kind.code().into()),
                        sqlstate: Some(sqlstate.into()),
                        reason: Some(reason.clone()),
                        ..RedisStep::of("failed")
                    },
                    _ => RedisStep {
                        driver: Some(true),
                        ..RedisStep::of("failed")
                    },
                },
                _ => RedisStep::of("idle"),
            })
        })
    }

    /// The connection of `'connect'` is open and its server's `run_id` is `runId`.
    #[napi]
    pub fn connected(&mut self, env: &Env, run_id: String) -> Result<()> {
        guard(env, || {
            self.inner.connected(&run_id);
            Ok(())
        })
    }

    /// The connection was lost: the next operation reads the identity again.
    #[napi]
    pub fn lost(&mut self, env: &Env) -> Result<()> {
        guard(env, || {
            self.inner.lost();
            Ok(())
        })
    }

    /// The reply of `'run'`'s script, flattened (integers and strings as strings, `null`).
    #[napi]
    pub fn answer(&mut self, env: &Env, reply: Vec<Option<Either<String, bool>>>) -> Result<()> {
        guard(env, || {
            let cells: Vec<Cell<'_>> = reply
                .iter()
                .map(|cell| match cell {
                    None => Cell::Null,
                    Some(Either::A(text)) => Cell::Text(text),
                    Some(Either::B(b)) => Cell::Bool(*b),
                })
                .collect();
            self.inner.answer(&cells);
            Ok(())
        })
    }

    /// The last step failed with the driver's error (`code`: none on Redis, taken as
    /// `SegmentProtocol.failed` takes it): the operation fails with it, and the identity is read
    /// again before the next one (the core's rule).
    #[napi]
    pub fn failed(&mut self, env: &Env, code: Option<String>) -> Result<()> {
        guard(env, || {
            let _ = code;
            self.inner.failed();
            Ok(())
        })
    }
}

/// A script call of a lease step as `redis.js` sends it: `EVALSHA` of `script`'s SHA-1 (`EVAL`
/// on `NOSCRIPT`) with `values`, the number of keys, the keys, the arguments.
#[napi(object)]
pub struct RedisCall {
    pub script: String,
    pub values: Vec<String>,
}

impl RedisCall {
    fn of(command: Command) -> Self {
        // The only command of the core's Redis steps (`Command` may grow: nothing to send then).
        let Command::Script { source, keys, args } = command else {
            return Self {
                script: String::new(),
                values: Vec::new(),
            };
        };
        let mut values = Vec::with_capacity(1 + keys.len() + args.len());
        values.push(keys.len().to_string());
        values.extend(keys);
        values.extend(args);
        Self {
            script: source.into(),
            values,
        }
    }
}

/// What a claim's reply says (`RedisLeaseSteps.claimed`): `claimed` is `'shard'` (with
/// `shard`, `ceiling`: the ceiling recorded, in time units, as a decimal string, `null`: none,
/// and `fencingToken`, a decimal string), `'none'` (every shard of the range is held),
/// `'clockSkew'` (with `shard`, to release before throwing `CLOCK_SKEW` with `aheadMs` and
/// `maxMs`: this host's clock was too far ahead of the server's) or `'unusable'` (a reply no
/// lease script makes).
#[napi(object)]
pub struct RedisClaim {
    pub claimed: String,
    pub shard: Option<u32>,
    pub ceiling: Option<String>,
    pub fencing_token: Option<String>,
    pub ahead_ms: Option<f64>,
    pub max_ms: Option<f64>,
}

/// A reply's cells as `redis.js`'s `flatten` makes them.
fn reply_cells(reply: &[Option<String>]) -> Vec<Cell<'_>> {
    reply
        .iter()
        .map(|cell| cell.as_deref().map_or(Cell::Null, Cell::Text))
        .collect()
}

/// A shard lease on Redis as the core's steps (`shardid::redis::lease_steps::LeaseSteps`): the
/// script of a claim, a renewal, a ceiling's record and a release with their keys and
/// arguments, and the reading of their replies, for `redis.js` to run over ioredis (as
/// Python's `_RedisLeaseSteps` for redis-py). Each call names the `run_id` of the connection
/// it is sent on; the token is the core's, one per object (one claim).
#[napi]
pub struct RedisLeaseSteps {
    inner: LeaseSteps,
}

#[napi]
impl RedisLeaseSteps {
    /// The steps of a lease of a shard of `first..end` for the layout at `layoutIndex`, its key
    /// under `prefix`, expiring `ttlMs` after each renewal by the server's clock, claimed by
    /// `holder` (a description of the process); `INVALID_ARGUMENT` on `schema`, `ttlMs` or
    /// `shards` for the one the core refuses.
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        prefix: String,
        layout_index: u32,
        first: Unknown<'_>,
        end: Unknown<'_>,
        ttl_ms: Unknown<'_>,
        holder: String,
    ) -> Result<Self> {
        guard(env, || {
            let layout = crate::layout::layout(env, layout_index)?;
            let first = u64_arg(env, &first, "shards", Arg::Other)?;
            let end = u64_arg(env, &end, "shards", Arg::Other)?;
            let ttl_ms = u64_arg(env, &ttl_ms, "ttlMs", Arg::Other)?;
            let token = shardid::lease::new_token();
            let inner = LeaseSteps::new(&prefix, &layout, first..end, ttl_ms, &token, &holder)
                .map_err(|(argument, reason)| {
                    // The core's names are Rust's and Python's; Node's option is `ttlMs`.
                    let argument = if argument == "ttl_ms" {
                        "ttlMs"
                    } else {
                        argument
                    };
                    invalid_argument(env, Class::Range, argument, reason)
                })?;
            Ok(Self { inner })
        })
    }

    /// The lease hash's key.
    #[napi(getter)]
    pub fn key(&self, env: &Env) -> Result<String> {
        guard(env, || Ok(self.inner.key().to_owned()))
    }

    /// The claim of the first free shard, on the server whose identity is `runId`.
    #[napi]
    pub fn claim(&self, env: &Env, run_id: String) -> Result<RedisCall> {
        guard(env, || Ok(RedisCall::of(self.inner.claim(&run_id))))
    }

    /// What the last claim's reply (flattened: strings and `null`) says.
    #[napi]
    pub fn claimed(&self, env: &Env, reply: Vec<Option<String>>) -> Result<RedisClaim> {
        guard(env, || {
            let none = |claimed: &str| RedisClaim {
                claimed: claimed.into(),
                shard: None,
                ceiling: None,
                fencing_token: None,
                ahead_ms: None,
                max_ms: None,
            };
            Ok(match self.inner.claimed(&reply_cells(&reply)) {
                Claimed::Shard {
                    shard,
                    ceiling,
                    fencing_token,
                } => RedisClaim {
                    claimed: "shard".into(),
                    // A shard of a range the constructor took as u64 from a JS number: the
                    // layout's shards are far fewer than 2^32.
                    shard: Some(u32::try_from(shard).unwrap_or(u32::MAX)),
                    ceiling: ceiling.map(|c| c.to_string()),
                    fencing_token: Some(fencing_token.to_string()),
                    ahead_ms: None,
                    max_ms: None,
                },
                Claimed::ClockSkew {
                    shard,
                    ahead_ms,
                    max_ms,
                } => {
                    // Milliseconds: exact as a JS number far beyond any clock's lead.
                    #[allow(clippy::cast_precision_loss)]
                    let (ahead_ms, max_ms) = (ahead_ms as f64, max_ms as f64);
                    RedisClaim {
                        shard: Some(u32::try_from(shard).unwrap_or(u32::MAX)),
                        ahead_ms: Some(ahead_ms),
                        max_ms: Some(max_ms),
                        ..none("clockSkew")
                    }
                }
                Claimed::NoFreeShard => none("none"),
                _ => none("unusable"),
            })
        })
    }

    /// How far this host's clock, read when the last renewal was made, was ahead of the
    /// server's clock its reply (flattened) carries, when too far (the lease must stop:
    /// `CLOCK_SKEW`); `null` within the skew or when the lease is lost.
    #[napi]
    pub fn clock_ahead(&self, env: &Env, reply: Vec<Option<String>>) -> Result<Option<f64>> {
        guard(env, || {
            // Milliseconds: exact as a JS number far beyond any clock's lead.
            #[allow(clippy::cast_precision_loss)]
            Ok(self
                .inner
                .clock_ahead(&reply_cells(&reply))
                .map(|ms| ms as f64))
        })
    }

    /// A renewal of `shard`'s lease, on the server whose identity is `runId`.
    #[napi]
    pub fn renew(&self, env: &Env, run_id: String, shard: u32) -> Result<RedisCall> {
        guard(env, || {
            Ok(RedisCall::of(self.inner.renew(&run_id, u64::from(shard))))
        })
    }

    /// A ceiling of `units` (time units of the layout) recorded for `shard`, and a renewal.
    #[napi]
    pub fn record(
        &self,
        env: &Env,
        run_id: String,
        shard: u32,
        units: Unknown<'_>,
    ) -> Result<RedisCall> {
        guard(env, || {
            let units = u64_arg(env, &units, "units", Arg::Other)?;
            Ok(RedisCall::of(self.inner.record(
                &run_id,
                u64::from(shard),
                units,
            )))
        })
    }

    /// The release of `shard`.
    #[napi]
    pub fn release(&self, env: &Env, run_id: String, shard: u32) -> Result<RedisCall> {
        guard(env, || {
            Ok(RedisCall::of(self.inner.release(&run_id, u64::from(shard))))
        })
    }

    /// Whether a renewal's, record's or release's reply says the lease still held (`false`:
    /// another claim took the shard, or the server lost it: the lease is lost for good).
    #[napi]
    pub fn held(env: &Env, reply: Vec<Option<String>>) -> Result<bool> {
        guard(env, || Ok(LeaseSteps::held(&reply_cells(&reply))))
    }
}
