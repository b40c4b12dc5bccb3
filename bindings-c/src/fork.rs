//! `fork()`: the at-fork handler that tells the core a child began (its clock thread did not
//! survive, and leased generators take a new shard there).

/// Makes the clock aware of `fork()` children: the clock's helper thread does not survive a
/// fork, and the child's first burst should start its own instead of waiting to notice.
#[cfg(unix)]
pub(crate) fn register_fork_handler() {
    extern "C" fn child() {
        shardid::after_fork();
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `child` is a plain function that only stores to atomics, which is safe in a
        // forked child; the handler stays valid for the life of the process.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(child)) };
        // Without the handler the clock still notices the fork at its next check.
        debug_assert_eq!(rc, 0, "pthread_atfork");
    });
}

#[cfg(not(unix))]
pub(crate) fn register_fork_handler() {}
