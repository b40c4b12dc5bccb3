//! What a promoted standby that lost the last commits of its primary could hand out again, and
//! how every database-backed feature steps past it.
//!
//! An asynchronous standby lags its primary by some WAL. When the primary dies and the standby
//! is promoted (Patroni, RDS, Cloud SQL), that tail is lost: segments taken, strings numbered,
//! lease ceilings and `next_id()` counters written there are gone, though clients already use
//! what they were handed. Each row shardid writes records the *timeline* it was last written on
//! ([`TIMELINE`]); a promotion starts a new one, so the first write on the new timeline knows
//! the row may be behind what was handed out, and jumps past anything the lost tail could have
//! handed out:
//!
//! - by **rate** where numbers are counted (segments, serial periods, the dictionary; on the
//!   MySQL family segments and the dictionary, with the same constants): each tag and topic records when it last handed numbers out (the database's
//!   clock) and the highest rate it sustained over windows of at least [`RATE_WINDOW_MS`]. A
//!   row the state *stepped back* past — another timeline, another system identifier
//!   ([`SYSTEM_ID`]: a `pg_dump` restored into a fresh cluster; `pg_upgrade` too), or marked
//!   `restored` by an operator (`shardid restored`, for a restore nothing else can see) —
//!   first skips [`MARGIN`] times what that rate hands out from its last write to now plus
//!   [`SKEW_MS`], plus [`FLOOR_BATCHES`] of its largest handouts (segments of twice its last
//!   size, a topic's largest batch). The bound holds while the lost traffic stayed within
//!   [`MARGIN`] times the highest rate the row had seen; it covers point-in-time recovery and
//!   restored dumps, which no WAL-size bound does, and after a failover that lost a second of
//!   WAL it skips seconds of traffic, so a daily `{seq:6}` serial keeps issuing. A topic's
//!   skipped IDs are a hole in its dense IDs: what matters after a step back is that no ID ever
//!   names a second string. A row written before rates were recorded skips by **count**, once:
//!   every write costs WAL, at least [`MIN_WAL_PER_WRITE`] bytes (a take of a segment measured
//!   139 bytes, a new string 244 bytes or more on PostgreSQL 15), so [`LOST_WAL_BYTES`] of lost
//!   tail held at most [`LOST_WRITES`] writes of a row: that many IDs of a topic, that many
//!   segments of twice a tag's last size (a segment grows at most twice per [`LOST_WAL_BYTES`]
//!   of WAL, so no segment of the tail was larger);
//! - by **time** where IDs are dated (`next_id()`, lease ceilings): everything the old primary
//!   or a lease holder dated was dated by a clock at most [`SKEW_MS`] ahead of the new
//!   primary's, so the new timeline starts above the new primary's clock plus that skew.
//!
//! On the MySQL family there is no timeline: a row records the *server* that last wrote it
//! instead ([`MYSQL_SERVER`], [`MARIADB_SERVER`]), and the *origin* of its table's data
//! ([`MysqlOrigin`]). A replica promoted after its source died is another server (replication
//! needs distinct `server_id`s); a `mysqldump` restored into a fresh server (or the table
//! recreated by a dump's `DROP TABLE`/`CREATE TABLE`, or its files copied back from a backup)
//! is another origin: the second the server says the table was created, which a restart keeps.
//! The nodes of a Galera cluster are one server and one origin here (the cluster's name and its
//! state UUID, which every node shares): every commit is certified by the whole cluster before
//! it is acknowledged, so a row last written on another node lost nothing; a node bootstrapped
//! from an old backup keeps the cluster's state UUID and needs `shardid restored`. After any of
//! these steps back, or `shardid restored`, a row skips by rate exactly as on PostgreSQL (the
//! same [`MARGIN`], [`FLOOR_BATCHES`], [`RATE_WINDOW_MS`] and [`SKEW_MS`], the clock being the
//! server's [`MYSQL_NOW_MS`]); a row written before rates were recorded skips by count, "at most
//! [`LOST_WRITES`] writes lost" (the binary log has no position a statement can read the way
//! PostgreSQL's WAL has). An `ALTER TABLE` or `OPTIMIZE TABLE` of the table also gives it
//! another creation time: the next write of each row then skips once by rate (a hole, never a
//! duplicate).
//!
//! **What the restored state lacks** (issue 54): a tag, a serial's period or a topic created
//! after the backup has no row to skip from, and created again after the restore it would
//! start from 1 (or 0) and hand out what the lost state handed out. So each schema keeps a
//! *fence* beside its rows, in a one-row table of its own (`shardid_tag_fence`,
//! `shardid_topic_fence`: in every backup of the rows, marked by `shardid restored` with
//! them, and recording the timeline and system, or the server and origin, it was last set on,
//! as a row does). The first tag or topic created after a step back the fence has not yet
//! accounted for (on SQLite also the first take or batch after `shardid restored`) sets it to
//! the same bound a row's skip uses, taken over the whole schema: [`MARGIN`] times the
//! highest rate any row sustained, over the time from the last write the restored state
//! remembers (the rows still stepped back past, and the last write before the step back of
//! those rewritten since, which each row keeps: `back_at`, `back_ms`) to now plus [`SKEW_MS`],
//! plus [`FLOOR_BATCHES`] of the largest handouts (rows never measured: [`LOST_WRITES`]). Every
//! tag and topic created from then on starts past the fence (its numbers a hole, never a
//! repeat); the fence is never lowered. A serial's period that began after the fence was set
//! (its first instant, at the earliest [`ZONE_AHEAD_MS`] before midnight UTC of its first day,
//! more than [`SKEW_MS`] after) starts from 1: no lost state issued from it. So every period
//! after the backup's last one and up to the restore is covered, not only the one open at
//! it. Nothing of this is on the hot path: a take only records, when its row stepped back, that
//! row's last write before (two more columns in the statement it already sends); the fence is
//! read and set where a row is created.
//!
//! The defaults cover [`LOST_WAL_BYTES`] (1 MiB, Patroni's default `maximum_lag_on_failover`)
//! and 2 s of skew between the clocks of the hosts. Under synchronous replication nothing
//! committed is lost, and the jumps are rarely needed, but `next_id()` still needs its floor: a
//! `nextval()` served from a sequence's cache writes no WAL, so its commit does not wait for
//! the standby.

/// The WAL a promoted standby may lack, in bytes: Patroni's default `maximum_lag_on_failover`.
pub const LOST_WAL_BYTES: u64 = 1 << 20;

/// The least WAL one write of a segment take or of a new string costs, in bytes (measured: 139
/// and 244; a heap update and a commit record alone are more than this).
pub const MIN_WAL_PER_WRITE: u64 = 100;

/// How many writes of one row [`LOST_WAL_BYTES`] of lost WAL can hold.
pub const LOST_WRITES: u64 = LOST_WAL_BYTES / MIN_WAL_PER_WRITE;

/// How far the clocks of the hosts may be apart: the new primary's, the old one's, and the
/// lease holders'.
pub const SKEW_MS: u64 = 2_000;

/// After a step back (a new timeline, another system identifier, or rows marked restored), a
/// tag or topic skips [`MARGIN`] times what its highest sustained rate could have handed out
/// between its last remembered write and now (plus [`SKEW_MS`]), and at least [`FLOOR_BATCHES`]
/// of its largest handouts (segments of twice its last size, a topic's largest batch).
pub const MARGIN: u64 = 4;

/// The floor of a skip after a step back, in handouts: segments of twice a tag's last size, or
/// a topic's largest batch of new strings (what concurrent clients could take at one instant,
/// which a rate measured over [`RATE_WINDOW_MS`] does not show).
pub const FLOOR_BATCHES: u64 = 4;

/// The shortest window a rate is measured over: the numbers handed out from the window's start
/// to a handout at least this long after it, divided by that time.
pub const RATE_WINDOW_MS: u64 = 1_000;

/// How far ahead of UTC a zone's clock may be (UTC+14, Kiribati): a serial period's first
/// instant is at the earliest this long before midnight UTC of its first day. A serial period
/// that began after a schema's fence was set (more than [`SKEW_MS`] after) skips nothing: no
/// state lost before the fence issued from it (issue 54).
pub const ZONE_AHEAD_MS: u64 = 14 * 3_600_000;

/// The system identifier of the PostgreSQL cluster this SQL runs on (`initdb` makes a new one;
/// a base backup, a promoted standby and point-in-time recovery keep it): a `pg_dump` restored
/// into another cluster reads another one.
/// (A field of the function's row, not a sub-select: a SQL function holding a sub-select is
/// never inlined into the statement that calls it.)
pub const SYSTEM_ID: &str = "(pg_control_system()).system_identifier";

/// The timeline of the server this SQL runs on (PostgreSQL): the first 8 hex digits of the
/// current WAL file's name. A promoted standby is on a higher one than its old primary.
pub const TIMELINE: &str = "('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::int";

/// Unix milliseconds by the server's clock (MySQL, MariaDB), independent of the session's time
/// zone.
pub const MYSQL_NOW_MS: &str =
    "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";

/// The server a statement runs on, on MySQL (and MariaDB without Galera's variables): its
/// `server_id`, which the servers of a replication topology must keep distinct.
pub const MYSQL_SERVER: &str = "CONCAT('server ', @@global.server_id)";

/// The server a statement runs on, on MariaDB: a Galera cluster's name when the server is a
/// node of one (`wsrep_on`), else its `server_id` as on MySQL.
pub const MARIADB_SERVER: &str = "IF(@@global.wsrep_on, CONCAT('galera ', @@global.wsrep_cluster_name), \
     CONCAT('server ', @@global.server_id))";

/// The origin of a table's data on the MySQL family, rendered as a SQL expression
/// ([`Display`](core::fmt::Display)): the second the server says the table was created
/// (`information_schema.tables.CREATE_TIME`, which a restart keeps and a dump restored into
/// another server, a table recreated or its files copied back from a backup changes); on a
/// Galera node (MariaDB, `wsrep_on`), the cluster's state UUID instead, which every node shares
/// (a node's files, copied by a state transfer, have their own creation times).
///
/// Not `mysql.*`'s creation times, which also tell servers apart but which a client's account
/// cannot see (`information_schema` shows only the tables a user has privileges on), nor MySQL's
/// `@@server_uuid`, which MariaDB lacks and which a DDL rendered for MySQL but run on MariaDB
/// would then fail on.
#[derive(Clone, Copy, Debug)]
pub struct MysqlOrigin<'a> {
    /// The database of the table; `None`: the connection's own (`DATABASE()`), for a table
    /// named without one (a lease's table).
    pub schema: Option<&'a str>,
    /// The table (`shardid_tags`, `shardid_topics`).
    pub table: &'a str,
    /// Whether the server may be a Galera node (the MariaDB dialect).
    pub galera: bool,
}

impl core::fmt::Display for MysqlOrigin<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        struct Schema<'a>(Option<&'a str>);
        impl core::fmt::Display for Schema<'_> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.0 {
                    Some(schema) => write!(f, "'{schema}'"),
                    None => f.write_str("DATABASE()"),
                }
            }
        }
        let table = format_args!(
            "(SELECT CAST(UNIX_TIMESTAMP(create_time) AS CHAR) FROM information_schema.tables \
             WHERE table_schema = {} AND table_name = '{}')",
            Schema(self.schema),
            self.table
        );
        if self.galera {
            write!(
                f,
                "IF(@@global.wsrep_on, (SELECT variable_value FROM information_schema.global_status \
                 WHERE variable_name = 'WSREP_CLUSTER_STATE_UUID'), {table})"
            )
        } else {
            write!(f, "{table}")
        }
    }
}
