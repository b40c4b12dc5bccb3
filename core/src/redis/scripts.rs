//! The Lua scripts of dense IDs on Redis: a segment take, its give-back and a tag's creation,
//! each one `EVALSHA` (atomic on the server: Redis runs one script at a time). Their numbers are
//! the constants of [`crate::sql::failover`] and [`crate::sql::DEFAULT_SEGMENT`] (checked at
//! compile time below): the skip after a step back is the SQL rows' rule, written in Lua
//! because that is where Redis runs a rule atomically, not a second rule.
//!
//! Keys (`KEYS[1]`, `KEYS[2]`): the tag's hash `<prefix>:tag:{<tag>}` and the server's hash
//! `<prefix>:server`. A tag's hash holds `next` (the next number), `step` (the last segment's
//! size), `rate` (the highest rate, numbers a second, over windows of at least
//! [`RATE_WINDOW_MS`]), `window_ms`/`window_n` (the open window), `written_ms` (its last write
//! by the server's clock, `TIME`) and `server` (the identity of the server that wrote it: its
//! `run_id`, which every start of `redis-server` draws anew and a promoted replica has its
//! own). The server's hash holds the same marks over all its tags (`server`, `written_ms`,
//! `rate`: the highest of any tag, `step`: the largest) and `fence`: where tags created after a
//! step back start (never lowered).
//!
//! Replies: `{1, first, count}` a segment; `{-1}` no such tag; `{-2, next}` the tag's numbers
//! would pass 2^53 (a Lua number is a double: past it, numbers are not exact); give-back `{1}`
//! taken back or `{0}`; creation `{1, first}` made, `{0, next}` already there, `{-3}` the
//! server holds no shardid data and the creation was not explicit (see [`super`]).

use crate::sql::DEFAULT_SEGMENT;
use crate::sql::failover::{FLOOR_BATCHES, LOST_WRITES, MARGIN, RATE_WINDOW_MS, SKEW_MS};

// The numbers written into the Lua below are these constants.
const _: () = assert!(
    LOST_WRITES == 10_485
        && DEFAULT_SEGMENT == 1_000
        && MARGIN == 4
        && FLOOR_BATCHES == 4
        && RATE_WINDOW_MS == 1_000
        && SKEW_MS == 2_000
);

/// What every script starts with: the server's clock, a hash's marks read in one `HMGET`, the
/// skip of a key that stepped back, and the server's accounting of a step back (its fence).
macro_rules! prelude {
    () => {
        r"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- A hash's marks (a missing field is nil; `server` is false when missing).
local function read(key)
  local v = redis.call('HMGET', key, 'next', 'step', 'rate', 'window_ms', 'window_n',
    'written_ms', 'server', 'fence')
  return {next = tonumber(v[1]), step = tonumber(v[2]), rate = tonumber(v[3]),
    window_ms = tonumber(v[4]), window_n = tonumber(v[5]), written_ms = tonumber(v[6]),
    server = v[7], fence = tonumber(v[8])}
end
-- A rate over the open window too (at least 1000 ms long), as the SQL rows' rule reads it.
local function rate_of(rate, window_ms, window_n, written_ms)
  if window_ms == nil or written_ms == nil then return rate end
  return math.max(rate, window_n * 1000 / math.max(written_ms - window_ms, 1000))
end
-- What a key last written by another server (or another life of this one) may lack: 4 times
-- what its highest rate hands out from its last write to now plus 2000 ms, plus 4 handouts of
-- twice its last size; never measured: 10485 handouts of twice its last size (or 1000).
local function skip(m, now)
  local step = m.step or 0
  if m.window_ms == nil or m.written_ms == nil then
    return 10485 * 2 * math.max(step, 1000)
  end
  local rate = rate_of(m.rate or 0, m.window_ms, m.window_n or 0, m.written_ms)
  return 4 * 2 * math.max(step, 1) + math.ceil(4 * rate * (math.max(now - m.written_ms, 0) + 2000) / 1000)
end
-- The server's marks `m`: a step back not yet accounted for raises the fence tags created from
-- now on start past, by the same rule over the whole server (its rate is the highest of its
-- tags', open windows included, so its own window stays empty). Returns the fence.
local function account(server_key, m, id, now)
  if m.server and m.server ~= id then
    local fence = (m.fence or 0) + skip(m, now)
    redis.call('HSET', server_key, 'fence', string.format('%.0f', fence), 'server', id,
      'window_ms', now, 'window_n', 0, 'written_ms', now)
    return fence
  elseif not m.server then
    redis.call('HSET', server_key, 'server', id, 'fence', 0, 'step', 0, 'rate', 0,
      'window_ms', now, 'window_n', 0, 'written_ms', now)
    return 0
  end
  return m.fence or 0
end
local LIMIT = 9007199254740992
"
    };
}

/// A segment take. `KEYS`: the tag's hash, the server's; `ARGV`: the server's identity (its
/// `run_id`), the size.
pub const TAKE: &str = concat!(
    prelude!(),
    r"
local tag, server_key, id, size = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
local t = read(tag)
if t.next == nil then return {-1} end
local now = now_ms()
local m = read(server_key)
account(server_key, m, id, now)
local next = t.next
local rate = t.rate or 0
local window_ms = t.window_ms
local window_n = t.window_n or 0
local back = t.server ~= id
if back then
  -- Written elsewhere: past what the lost writes could have handed out, and a new window
  -- (the open one's rate kept).
  next = next + skip(t, now)
  rate = rate_of(rate, window_ms, window_n, t.written_ms)
end
if next + size > LIMIT then return {-2, string.format('%.0f', next)} end
if back or window_ms == nil then
  window_n = size
  window_ms = now
elseif now - window_ms >= 1000 then
  rate = math.max(rate, (window_n + size) * 1000 / (now - window_ms))
  window_n = 0
  window_ms = now
else
  window_n = window_n + size
end
redis.call('HSET', tag, 'next', string.format('%.0f', next + size), 'step', size,
  'rate', rate, 'window_ms', window_ms, 'window_n', window_n, 'written_ms', now, 'server', id)
redis.call('HSET', server_key, 'written_ms', now,
  'rate', math.max(m.rate or 0, rate_of(rate, window_ms, window_n, now)),
  'step', math.max(m.step or 0, size))
return {1, string.format('%.0f', next), size}
"
);

/// A give-back of `[first, end)`: taken back only when nothing was taken since (`next` is
/// still `end`) on this same server (a key written elsewhere may have stepped back).
/// `KEYS`: the tag's hash; `ARGV`: the identity, `first`, `end`.
pub const GIVE_BACK: &str = r"
local tag, id, first, stop = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', tag, 'next') == stop and redis.call('HGET', tag, 'server') == id then
  redis.call('HSET', tag, 'next', first)
  return {1}
end
return {0}
";

/// A tag's creation from `first` (past the server's fence). `KEYS`: the tag's hash, the
/// server's; `ARGV`: the identity, `first`, `1` when the caller chose `first` explicitly (a
/// server without shardid's marks is then taken as new) or `0` (such a server is refused:
/// `{-3}`).
pub const CREATE_TAG: &str = concat!(
    prelude!(),
    r"
local tag, server_key, id, first, explicit = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local next = redis.call('HGET', tag, 'next')
if next then return {0, next} end
local m = read(server_key)
if not m.server and explicit ~= '1' then return {-3} end
local now = now_ms()
local start = first + account(server_key, m, id, now)
if start >= LIMIT then return {-2, string.format('%.0f', start)} end
redis.call('HSET', tag, 'next', string.format('%.0f', start), 'step', 0, 'rate', 0,
  'window_ms', now, 'window_n', 0, 'written_ms', now, 'server', id)
return {1, string.format('%.0f', start)}
"
);

/// What every lease script starts with: the server's clock, and the ceiling of a shard after
/// a step back. `KEYS[1]` is the lease hash of one layout (`<prefix>:lease:{<signature>}`),
/// whose fields per shard are `<shard>:token`, `:holder`, `:expires` (Unix ms by the
/// server's clock), `:ceiling` (time units of the layout), `:server` (the `run_id` that last
/// wrote it) and `:fence` (the fencing token: one more at every claim).
macro_rules! lease_prelude {
    () => {
        r"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local key = KEYS[1]
-- The ceiling to write on this server: on a shard last written by another server (or another
-- life of this one), or never written here, at least the time unit of the server's clock plus
-- 2000 ms: a holder whose last writes were lost dated its IDs by a clock at most that far
-- ahead, and stops at its first ceiling write, which finds no token.
local function jump(shard, now, id, epoch, unit)
  local c = tonumber(redis.call('HGET', key, shard .. ':ceiling') or '-1')
  if redis.call('HGET', key, shard .. ':server') ~= id then
    c = math.max(c, math.floor((now + 2000 - epoch) / unit))
  end
  return c
end
local function held_by(shard, token)
  return redis.call('HGET', key, shard .. ':token') == token
end
"
    };
}

/// Claims the first free shard of `[first, end)`. `ARGV`: the identity, the token, the
/// holder, the time to live (ms), first, end, the layout's epoch (Unix ms) and unit (ms).
/// Reply: `{shard, ceiling (-1: none), fencing token, held, now}`, or `{-1, held, now}` when
/// every shard is held.
pub const LEASE_CLAIM: &str = concat!(
    lease_prelude!(),
    r"
local id, token, holder, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local first, stop, epoch, unit = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local now = now_ms()
local held, taken = 0, nil
for s = first, stop - 1 do
  local expires = tonumber(redis.call('HGET', key, s .. ':expires') or '0')
  if redis.call('HEXISTS', key, s .. ':token') == 1 and expires > now then
    held = held + 1
  elseif taken == nil then
    taken = s
  end
end
if taken == nil then return {-1, held, now} end
local ceiling = jump(taken, now, id, epoch, unit)
local fence = redis.call('HINCRBY', key, taken .. ':fence', 1)
redis.call('HSET', key, taken .. ':token', token, taken .. ':holder', holder,
  taken .. ':expires', now + ttl, taken .. ':ceiling', ceiling, taken .. ':server', id)
return {taken, ceiling, fence, held, now}
"
);

/// Renews a lease while the shard holds its token. `ARGV`: the identity, the token, the time to
/// live, the shard, the epoch, the unit. Reply `{1, now}`, or `{0}` when the lease was taken
/// over (or the server lost it).
pub const LEASE_RENEW: &str = concat!(
    lease_prelude!(),
    r"
local id, token, ttl, s, epoch, unit = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
if not held_by(s, token) then return {0} end
local now = now_ms()
redis.call('HSET', key, s .. ':expires', now + ttl, s .. ':ceiling', jump(s, now, id, epoch, unit),
  s .. ':server', id)
return {1, now}
"
);

/// Raises the ceiling to `units` (and renews) while the shard holds the token. `ARGV`: as
/// [`LEASE_RENEW`], then the units. Reply `{1}`, or `{0}`.
pub const LEASE_RECORD: &str = concat!(
    lease_prelude!(),
    r"
local id, token, ttl, s, epoch, unit = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
if not held_by(s, token) then return {0} end
local now = now_ms()
local ceiling = math.max(jump(s, now, id, epoch, unit), tonumber(ARGV[7]))
redis.call('HSET', key, s .. ':expires', now + ttl, s .. ':ceiling', string.format('%.0f', ceiling),
  s .. ':server', id)
return {1}
"
);

/// Frees the shard at once while it holds the token (its ceiling kept). `ARGV`: as
/// [`LEASE_RENEW`]. Reply `{1}`, or `{0}`.
pub const LEASE_RELEASE: &str = concat!(
    lease_prelude!(),
    r"
local id, token, s, epoch, unit = ARGV[1], ARGV[2], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
if not held_by(s, token) then return {0} end
local now = now_ms()
redis.call('HSET', key, s .. ':ceiling', jump(s, now, id, epoch, unit), s .. ':server', id)
redis.call('HDEL', key, s .. ':token', s .. ':holder', s .. ':expires')
return {1}
"
);
