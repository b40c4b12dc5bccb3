//! The native module `shardid._shardid`, re-exported by the `shardid` package.
//!
//! A thin adapter: argument checks (`args`), the core's errors as Python exceptions
//! (`errors`), `fork()` handling (`fork`), the value and generator classes (`layout`,
//! `generator`, `lease`) and the SQL the core renders (`sql`).

mod args;
mod cli;
mod dictionary;
mod errors;
mod fork;
mod generator;
mod layout;
mod lease;
mod mysql;
mod ordinal;
mod public;
mod redis;
mod segment;
mod serial;
mod sql;
mod sqlite;
mod stats;
mod status;
mod step;
mod uuid;

use pyo3::prelude::*;

/// The clock the generators read: Unix milliseconds from a monotonic clock anchored to the
/// wall clock (it never moves back).
#[pyfunction]
fn now_ms() -> u64 {
    shardid::now_ms()
}

/// The generator is lock-free and holds no Python state, so the module is ready for
/// free-threaded Python.
#[pymodule(gil_used = false)]
fn _shardid(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Before any handle is made: a child made by any fork() (in C too) moves the core's fork
    // generation on, so every handle made here refuses there or takes a shard of its own.
    shardid_fork::register();
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<layout::PyParts>()?;
    m.add_class::<generator::PyGenerator>()?;
    m.add_class::<public::PyPublicIds>()?;
    m.add_function(wrap_pyfunction!(public::check_public_id, m)?)?;
    m.add_function(wrap_pyfunction!(uuid::from_uuid_fn, m)?)?;
    m.add_function(wrap_pyfunction!(ordinal::shard_from_ordinal, m)?)?;
    m.add_function(wrap_pyfunction!(public::_public_id_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(stats::_stats_table, m)?)?;
    m.add_function(wrap_pyfunction!(stats::_collect, m)?)?;
    m.add_class::<lease::PyLeasedGenerator>()?;
    m.add_function(wrap_pyfunction!(lease::lease, m)?)?;
    m.add_class::<lease::PyCeilingGenerator>()?;
    m.add_class::<lease::PyHold>()?;
    m.add_class::<lease::PyLeaseTally>()?;
    m.add_class::<lease::PyBackendClaim>()?;
    m.add_function(wrap_pyfunction!(lease::_claim_backend, m)?)?;
    m.add_function(wrap_pyfunction!(now_ms, m)?)?;
    m.add_function(wrap_pyfunction!(sql::postgres, m)?)?;
    m.add_function(wrap_pyfunction!(sql::postgres_uninstall, m)?)?;
    m.add_function(wrap_pyfunction!(sql::public_ids_sql, m)?)?;
    m.add_function(wrap_pyfunction!(sql::public_ids_sql_uninstall, m)?)?;
    m.add_class::<sql::PyLeaseProtocol>()?;
    m.add_function(wrap_pyfunction!(sql::_check_lease, m)?)?;
    m.add_class::<segment::PyDenseIds>()?;
    m.add_class::<segment::PySegmentProtocol>()?;
    m.add_class::<redis::PyRedisSegments>()?;
    m.add_class::<redis::PyRedisLeaseSteps>()?;
    m.add_function(wrap_pyfunction!(redis::_is_redis_url, m)?)?;
    m.add_function(wrap_pyfunction!(redis::_redis_sentinel_url, m)?)?;
    m.add("_UNKNOWN_TAG_SQLSTATE", shardid::sql::UNKNOWN_TAG)?;
    m.add_function(wrap_pyfunction!(segment::segments, m)?)?;
    m.add_function(wrap_pyfunction!(segment::segments_uninstall, m)?)?;
    m.add_function(wrap_pyfunction!(segment::_segment_statements, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_error, m)?)?;
    m.add_function(wrap_pyfunction!(cli::_cli_run, m)?)?;
    m.add_function(wrap_pyfunction!(cli::_cli_wants_stdin, m)?)?;
    m.add_class::<status::PyStatusRun>()?;
    m.add_function(wrap_pyfunction!(status::_cli_status, m)?)?;
    m.add_class::<serial::PySerialFormat>()?;
    m.add_class::<serial::PyParsedSerial>()?;
    m.add_class::<serial::PySerials>()?;
    m.add_class::<serial::PyPeriodFetch>()?;
    m.add_function(wrap_pyfunction!(serial::_serial_statements, m)?)?;
    m.add_function(wrap_pyfunction!(serial::_check_serial_tag, m)?)?;
    m.add_function(wrap_pyfunction!(serial::_mismatch_reason, m)?)?;
    m.add_function(wrap_pyfunction!(serial::_serial_step, m)?)?;
    m.add_function(wrap_pyfunction!(serial::create_serial_sql, m)?)?;
    m.add("_SERIAL_MISMATCH_SQLSTATE", shardid::sql::SERIAL_MISMATCH)?;
    m.add(
        "_UNKNOWN_TIME_ZONE_SQLSTATE",
        shardid::sql::UNKNOWN_TIME_ZONE,
    )?;
    m.add("_SERIAL_OVERFLOW_SQLSTATE", shardid::sql::SERIAL_OVERFLOW)?;
    m.add("TZDB_VERSION", shardid::serial::TZDB_VERSION)?;
    m.add_class::<dictionary::PyDictCache>()?;
    m.add_function(wrap_pyfunction!(dictionary::dictionary, m)?)?;
    m.add_function(wrap_pyfunction!(dictionary::dictionary_uninstall, m)?)?;
    m.add_function(wrap_pyfunction!(dictionary::_dictionary_statements, m)?)?;
    m.add_function(wrap_pyfunction!(dictionary::server_for, m)?)?;
    m.add_function(wrap_pyfunction!(dictionary::_check_topic, m)?)?;
    m.add("_UNKNOWN_TOPIC_SQLSTATE", shardid::sql::UNKNOWN_TOPIC)?;
    m.add("_TOPIC_DROPPED_SQLSTATE", shardid::sql::TOPIC_DROPPED)?;
    m.add("DEFAULT_CACHE", shardid::dictionary::DEFAULT_CACHE)?;
    m.add("MAX_VALUE_LEN", shardid::dictionary::MAX_VALUE_LEN)?;
    m.add("MAX_BATCH", shardid::dictionary::MAX_BATCH)?;
    m.add_class::<sqlite::PySqliteSql>()?;
    m.add_class::<sqlite::PySqliteTake>()?;
    m.add_class::<sqlite::PySqliteAssign>()?;
    m.add_function(wrap_pyfunction!(sqlite::_sqlite_path, m)?)?;
    m.add_function(wrap_pyfunction!(sqlite::_sqlite_period_tag, m)?)?;
    m.add_function(wrap_pyfunction!(sqlite::_sqlite_period_fits, m)?)?;
    m.add("_SQLITE_MAX_LIST", shardid::sql::sqlite::MAX_LIST)?;
    m.add(
        "_SQLITE_BUSY_TIMEOUT_MS",
        shardid::sql::sqlite::DEFAULT_BUSY_TIMEOUT_MS,
    )?;
    m.add_function(wrap_pyfunction!(mysql::mysql, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::mysql_statements, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::_mysql_segment_statements, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::mysql_serials, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::_mysql_serial_statements, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::_mysql_registration_problem, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::_mysql_detected, m)?)?;
    m.add("_MYSQL_DETECT_DIALECT", shardid::sql::mysql::DETECT_DIALECT)?;
    m.add_function(wrap_pyfunction!(mysql::_mysql_url, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::_database_of_url, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::_url_shown, m)?)?;
    m.add_function(wrap_pyfunction!(mysql::_redacted, m)?)?;
    m.add_class::<mysql::PyMysqlDictSql>()?;
    m.add_class::<mysql::PyMysqlAssign>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "DEFAULT_BACKWARDS_TOLERANCE_MS",
        shardid::DEFAULT_BACKWARDS_TOLERANCE_MS,
    )?;
    Ok(())
}
