//! The wall clock in Unix milliseconds, as the tests that script an example's time read it
//! (`serials`, `sqlite_stress`): not the crate's `now_ms`, which never goes back.
use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in Unix milliseconds.
pub fn wall_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}
