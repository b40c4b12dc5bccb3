//! Leases across processes: a child killed with SIGKILL frees its shard for the next holder,
//! which continues above the child's IDs; a forked child takes a shard of its own. One test
//! function, so no other test thread runs while this binary forks.
use std::io::{Read, Write};
use std::os::fd::FromRawFd;

use shardid::Layout;
use shardid::Options;
use shardid::lease::LeasedGenerator;

fn lease(dir: &std::path::Path, shards: std::ops::Range<u64>) -> LeasedGenerator {
    LeasedGenerator::acquire(dir, shards, Layout::TWITTER, Options::new()).unwrap()
}

/// Forks; the child runs `child` with the write end of a pipe and exits without unwinding.
fn fork_with_pipe(child: impl FnOnce(&mut std::fs::File)) -> (libc::pid_t, std::fs::File) {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe() to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child only makes IDs, writes to the pipe and exits with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        shardid::after_fork(); // what the bindings' at-fork hooks do
        // SAFETY: fds[1] is the pipe's write end, owned by this process from here on.
        let mut out = unsafe { std::fs::File::from_raw_fd(fds[1]) };
        child(&mut out);
        let _ = out.flush();
        // SAFETY: leaves the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: closes the parent's copy of the write end; fds[0] is the read end we own.
    unsafe { libc::close(fds[1]) };
    // SAFETY: fds[0] is the pipe's read end, owned by this process from here on.
    (pid, unsafe { std::fs::File::from_raw_fd(fds[0]) })
}

fn read_ids(pipe: &mut std::fs::File) -> Vec<u64> {
    let mut bytes = Vec::new();
    pipe.read_to_end(&mut bytes).unwrap();
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn leases_across_processes() {
    let dir = std::env::temp_dir().join(format!("shardid-lease-fork-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    // A child holding the only shard is killed mid-run; the next holder continues above it.
    let (pid, mut pipe) = fork_with_pipe(|out| {
        let g = lease(&dir, 0..1);
        loop {
            let id = g.next_id().unwrap();
            if out.write_all(&id.to_le_bytes()).is_err() {
                break;
            }
        }
    });
    let mut first = [0u8; 8 * 1000];
    pipe.read_exact(&mut first).unwrap();
    // SAFETY: pid is our child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let mut status = 0;
    // SAFETY: pid is our child; status is a valid int.
    unsafe { libc::waitpid(pid, &raw mut status, 0) };
    let killed = read_ids_after(&first, &mut pipe);
    let successor = lease(&dir, 0..1); // would fail if the dead child still held the shard
    let next = successor.next_id().unwrap();
    assert!(
        killed.iter().all(|&id| id < next),
        "a successor repeated or went below a killed holder's IDs"
    );
    drop(successor);

    // A generator leased before fork() takes another shard in each child.
    let parent = lease(&dir, 0..8);
    let parent_shard = parent.shard().unwrap();
    let mut children = Vec::new();
    for _ in 0..4 {
        children.push(fork_with_pipe(|out| {
            let shard = parent.shard().unwrap();
            for _ in 0..50_000 {
                out.write_all(&parent.next_id().unwrap().to_le_bytes())
                    .unwrap();
            }
            out.write_all(&shard.to_le_bytes()).unwrap();
        }));
    }
    let mut all: Vec<u64> = (0..50_000).map(|_| parent.next_id().unwrap()).collect();
    let mut shards = vec![parent_shard];
    for (pid, mut pipe) in children {
        let mut ids = read_ids(&mut pipe);
        shards.push(ids.pop().unwrap());
        let mut status = 0;
        // SAFETY: pid is our child; status is a valid int.
        unsafe { libc::waitpid(pid, &raw mut status, 0) };
        assert_eq!(ids.len(), 50_000);
        all.extend(ids);
    }
    shards.sort_unstable();
    shards.dedup();
    assert_eq!(
        shards.len(),
        5,
        "parent and four children must hold five shards"
    );
    let unique: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(unique.len(), 250_000);
    let _ = std::fs::remove_dir_all(&dir);
}

fn read_ids_after(first: &[u8], pipe: &mut std::fs::File) -> Vec<u64> {
    let mut ids: Vec<u64> = first
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    ids.extend(read_ids(pipe));
    ids
}
