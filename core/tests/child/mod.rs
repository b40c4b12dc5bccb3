//! Runs a check in a forked child, for the test binaries about `fork()` (each its own binary:
//! forking a process with other test threads running is best avoided).

/// Forks; the child runs `check` and exits at once with its verdict (an error printed), and
/// the parent waits and fails unless the child passed. `check` must only make IDs, sleep and
/// return: it never returns into the harness.
pub fn in_child(check: impl FnOnce() -> Result<(), String>) {
    // SAFETY: the child runs `check` and `_exit`s; it does not return into the harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let result = check();
        if let Err(e) = &result {
            eprintln!("child: {e}");
        }
        // SAFETY: leaves the child at once, without running the parent's atexit handlers.
        unsafe { libc::_exit(i32::from(result.is_err())) };
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &raw mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: {status}"
    );
}
