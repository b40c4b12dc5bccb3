//! The check that keeps session leases (advisory locks) from working through a transaction
//! pooler: no two lease connections of one process may see the same server session.
//!
//! A session advisory lock belongs to the server session that ran it. Behind a pooler in
//! transaction mode, two clients' statements run on the same server session, where the lock is
//! re-entrant: both would be granted the same shard. Each session lease records the server
//! session that granted its lock (address, port, start time and process ID of the server); a
//! second lease connection of this process that sees one already recorded is refused.

use std::string::String;
use std::sync::{Mutex, PoisonError};
use std::vec::Vec;

use super::LeaseError;

static SESSIONS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A server session a session lease of this process holds its lock on; forgotten when
/// dropped (the lease is closed).
#[derive(Debug)]
pub struct BackendClaim(String);

impl Drop for BackendClaim {
    fn drop(&mut self) {
        let mut sessions = SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = sessions.iter().position(|s| *s == self.0) {
            sessions.swap_remove(i);
        }
    }
}

/// Records that a session lease of this process holds its lock on the server session
/// `identity` (as the lease protocol's `Taken` reports it).
///
/// # Errors
/// [`LeaseError::SessionPooled`] when another session lease of this process already does: the
/// two connections reach one server session, so a pooler is in between.
pub fn claim_backend(identity: &str) -> Result<BackendClaim, LeaseError> {
    let mut sessions = SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
    if sessions.iter().any(|s| s == identity) {
        return Err(LeaseError::SessionPooled {
            reason: std::format!(
                "two lease connections of this process reach the same server session ({identity})"
            ),
        });
    }
    sessions.push(identity.into());
    Ok(BackendClaim(identity.into()))
}
