//! The `pthread_atfork` child handler of shardid's native bindings, written once.
//!
//! A forked child inherits a copy of every generator's state, so a handle made before the fork
//! must not hand out IDs in the child: each binding compares the core's
//! [`shardid::fork_generation`] with the one its handle was made in (a plain generator refuses
//! with `FORKED_GENERATOR`, a lease takes a new shard, an allocator takes segments of its own).
//! That generation only moves when someone calls [`shardid::after_fork`] in the child, and the
//! only hook every `fork()` runs is the C library's: a host's own hooks can be skipped (uWSGI's
//! prefork and `ctypes`' `libc.fork()` fork without running Python's `os.register_at_fork`).
//!
//! This crate is that registration, for the C library and the Python module alike. It lives
//! here, not in the core, because the core forbids `unsafe` code and `pthread_atfork` is an
//! FFI call; not in one binding, because neither may link the other (the C library's exported
//! symbols would leak into the Python extension).

/// Registers (once per process and copy of this crate) a `pthread_atfork` child handler that
/// calls [`shardid::after_fork`]. Every `fork()` through the C library runs it, whoever calls
/// it: Python's `os.fork`, `multiprocessing`, uWSGI's and gunicorn's workers, `ctypes`.
///
/// `vfork()` and a raw `clone` syscall skip it; their children may only `exec`, which makes
/// no IDs.
#[cfg(unix)]
pub fn register() {
    extern "C" fn child() {
        shardid::after_fork();
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `child` is a plain function that only stores to atomics, which is
        // async-signal-safe and so allowed in a forked child; it is a static function of this
        // library, valid as long as the library is loaded (glibc drops the handlers of a
        // library it unloads).
        let rc = unsafe { libc::pthread_atfork(None, None, Some(child)) };
        // ENOMEM is the only failure: the clock then notices the fork at its next check, but
        // handles made before it would not refuse, so say so in debug builds.
        debug_assert_eq!(rc, 0, "pthread_atfork");
    });
}

/// No `fork()` off Unix: nothing to register.
#[cfg(not(unix))]
pub fn register() {}
