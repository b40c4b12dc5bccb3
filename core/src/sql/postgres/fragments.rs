//! Pieces of PL/pgSQL the templates share, each written once with the layout's constants.

use core::fmt::{self, Display, Formatter};

use super::LOCK_CLASS;

/// `(<expr> - epoch) / unit` with the division left out for millisecond units. With `floored`,
/// a time before the epoch gives a negative unit (SQL's division truncates towards zero, which
/// would put the last unit before the epoch at 0).
pub(super) struct Units<'a> {
    pub(super) ms: &'a str,
    pub(super) epoch_ms: u64,
    pub(super) unit_ms: u64,
    pub(super) floored: bool,
}

impl Display for Units<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (ms, epoch) = (self.ms, self.epoch_ms);
        match self.unit_ms {
            1 => write!(f, "({ms} - {epoch})"),
            unit if self.floored => {
                write!(f, "(({ms} - {epoch}) / {unit} - ({ms} < {epoch})::int)")
            }
            unit => write!(f, "(({ms} - {epoch}) / {unit})"),
        }
    }
}

/// The advisory lock around a counter's move to a new unit, released by an error or a cancel too
/// (the exception block): `{lock}` before the statements, `{unlock}` after them.
pub(super) struct Locked<'a> {
    pub(super) key: i32,
    pub(super) body: &'a dyn Display,
    pub(super) indent: &'a str,
}

impl Display for Locked<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (key, i) = (self.key, self.indent);
        write!(
            f,
            "\
{i}BEGIN
{i}    PERFORM pg_advisory_lock({LOCK_CLASS}, {key});
{body}\
{i}    PERFORM pg_advisory_unlock({LOCK_CLASS}, {key});
{i}EXCEPTION WHEN OTHERS OR query_canceled THEN
{i}    IF EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory'
{i}            AND pid = pg_backend_pid() AND classid = {LOCK_CLASS}::int::oid
{i}            AND objid = ({key})::int::oid AND objsubid = 2) THEN
{i}        PERFORM pg_advisory_unlock({LOCK_CLASS}, {key});
{i}    END IF;
{i}    RAISE;
{i}END;
",
            body = self.body,
        )
    }
}

/// The counter sequence of the time unit held in the PL/pgSQL variable `var`.
pub(super) struct CounterOf<'a> {
    pub(super) schema: &'a str,
    pub(super) var: &'a str,
}

impl Display for CounterOf<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (s, var) = (self.schema, self.var);
        write!(
            f,
            "CASE WHEN {var} & 1 = 0 THEN '{s}.shardid_counter_even'::regclass \
             ELSE '{s}.shardid_counter_odd'::regclass END"
        )
    }
}

/// The SQL expression for the ID of the counter value in the PL/pgSQL variable `v`.
pub(super) struct IdOf {
    pub(super) stride: u32,
    pub(super) time_shift: u32,
    pub(super) shard_value: u64,
    pub(super) seq_mask: u64,
    pub(super) sequence_shift: u32,
}

impl Display for IdOf {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "((v >> {}) << {})", self.stride, self.time_shift)?;
        if self.shard_value != 0 {
            write!(f, " | {}", self.shard_value)?;
        }
        match self.sequence_shift {
            0 => write!(f, " | (v & {})", self.seq_mask),
            n => write!(f, " | ((v & {}) << {n})", self.seq_mask),
        }
    }
}
