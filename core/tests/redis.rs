//! Dense IDs on real Redis servers (feature `redis`; Debian's `redis-server`, which
//! `scripts/setup.sh` installs): each test starts its own throwaway servers on 127.0.0.1 and a
//! free port ([`Server`], killed and its directory removed when dropped), so the tests run in
//! parallel. Uniqueness under threads and processes, the errors (server down, bad URL, unknown
//! tag), and the lost writes: a server restarted from a snapshot older than its last takes, and
//! a replica promoted after it missed them, must never hand a number out twice; a server that
//! restarts empty must not start its tags again at 1.

use std::collections::HashSet;
use std::io::BufRead as _;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shardid::redis::{DenseIds, Lease, create_tag, create_tag_from};
use shardid::segment::SizePolicy;
use shardid::{ErrorKind, Layout};

/// A throwaway `redis-server` (the Rust twin of tests/redis/server.py).
struct Server {
    dir: PathBuf,
    port: u16,
    flags: Vec<String>,
    child: Option<Child>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Server {
    /// Starts a server with `flags` (no RDB snapshots unless the flags ask).
    fn start(flags: &[&str]) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "shardid-redis-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let mut server = Self {
            dir,
            port: free_port(),
            flags: flags.iter().map(|f| (*f).to_string()).collect(),
            child: None,
        };
        server.restart();
        server
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts it (again) on the same port and directory, and waits until it answers.
    fn restart(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--dir", self.dir.to_str().expect("a UTF-8 path")])
            .args([
                "--save",
                "",
                "--protected-mode",
                "no",
                "--logfile",
                "redis.log",
            ])
            .args(&self.flags)
            .stdin(Stdio::null())
            .spawn()
            .expect("redis-server: run scripts/setup.sh");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.cli(&["PING"]).as_deref() != Some("PONG") {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One command by redis-cli; its reply, `None` when the server does not answer.
    fn cli(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !text.starts_with("Could not connect")).then_some(text)
    }

    /// A signal to the server's process.
    fn signal(&self, signal: &str) {
        if let Some(child) = &self.child {
            Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status()
                .expect("kill");
        }
    }

    /// SIGKILL, as a crash: what no snapshot or append-only file holds is lost.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal("-CONT");
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Segments of exactly `n`: many takes, each a chance to repeat a number.
fn small(n: u64) -> SizePolicy {
    SizePolicy::new().bounds(n, n)
}

#[test]
fn unique_under_threads() {
    let server = Server::start(&[]);
    let url = server.url();
    assert_eq!(create_tag_from(&url, "orders", "shardid", 1).unwrap(), 1);
    let mut handles = Vec::new();
    for _ in 0..4 {
        let url = url.clone();
        handles.push(std::thread::spawn(move || {
            // Two clients per thread's pair, one shared: takes race on the server.
            let ids = Arc::new(DenseIds::connect(&url, "orders", "shardid", small(7)).unwrap());
            let inner = Arc::clone(&ids);
            let other = std::thread::spawn(move || {
                (0..1_000)
                    .map(|_| inner.next_id().unwrap())
                    .collect::<Vec<_>>()
            });
            let mut mine: Vec<u64> = (0..1_000).map(|_| ids.next_id().unwrap()).collect();
            mine.extend(other.join().unwrap());
            ids.close();
            mine
        }));
    }
    let mut seen = HashSet::new();
    for handle in handles {
        for id in handle.join().unwrap() {
            assert!(id >= 1);
            assert!(seen.insert(id), "{id} handed out twice");
        }
    }
    assert_eq!(seen.len(), 8_000);
}

/// A child process's part of [`unique_under_processes`] (does nothing when run by itself).
#[test]
fn child_takes() {
    let Ok(url) = std::env::var("SHARDID_REDIS_CHILD_URL") else {
        return;
    };
    let ids = DenseIds::connect(&url, "orders", "shardid", small(13)).unwrap();
    for _ in 0..2_000 {
        println!("shardid-id={}", ids.next_id().unwrap());
    }
    ids.close();
}

#[test]
fn unique_under_processes() {
    let server = Server::start(&[]);
    let url = server.url();
    create_tag_from(&url, "orders", "shardid", 1).unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<Child> = (0..3)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "child_takes",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env("SHARDID_REDIS_CHILD_URL", &url)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut seen = HashSet::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        for line in out.stdout.lines() {
            // libtest's "test child_takes ... " may start the first line.
            let line = line.unwrap();
            if let Some((_, id)) = line.split_once("shardid-id=") {
                let id: u64 = id.parse().unwrap();
                assert!(seen.insert(id), "{id} handed out twice");
            }
        }
    }
    assert_eq!(seen.len(), 6_000);
}

#[test]
fn errors() {
    // Server down: nothing listens on a port just freed.
    let down = format!("redis://127.0.0.1:{}", free_port());
    let e = DenseIds::connect(&down, "orders", "shardid", SizePolicy::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable, "{e}");
    let e = create_tag(&down, "orders", "shardid").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable, "{e}");
    // Bad URLs, before any connection.
    for url in [
        "http://h",
        "redis://h:notaport",
        "rediss://127.0.0.1",
        "redis+sentinel://h:26379/m",
    ] {
        let e = DenseIds::connect(url, "orders", "shardid", SizePolicy::new()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{url}: {e}");
    }
    let server = Server::start(&[]);
    let url = server.url();
    // A prefix that is not a plain name, an empty tag.
    let e = DenseIds::connect(&url, "orders", "a:b", SizePolicy::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = create_tag_from(&url, "", "shardid", 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // Unknown tag: the message names the call that creates it.
    let e = DenseIds::connect(&url, "nope", "shardid", SizePolicy::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownTag, "{e}");
    assert!(e.to_string().contains("create_tag"), "{e}");
    // After close.
    create_tag_from(&url, "orders", "shardid", 1).unwrap();
    let ids = DenseIds::connect(&url, "orders", "shardid", small(10)).unwrap();
    assert_eq!(ids.next_id().unwrap(), 1);
    ids.close();
    assert_eq!(ids.next_id().unwrap_err().kind(), ErrorKind::Closed);
    // Given back on close: the next client continues at 2.
    let ids = DenseIds::connect(&url, "orders", "shardid", small(10)).unwrap();
    assert_eq!(ids.next_id().unwrap(), 2);
    ids.close();
    // The shared entry point takes a Redis URL.
    shardid::segment::create_tag(&url, "invoices", "shardid").unwrap();
    let ids = DenseIds::connect(&url, "invoices", "shardid", small(10)).unwrap();
    assert_eq!(ids.next_id().unwrap(), 1);
    ids.close();
}

/// A server that restarts empty (no persistence): the running client stops, creating the tag
/// again from 1 by the shared entry point is refused, and the explicit creation starts where
/// the operator says.
#[test]
fn empty_restart_refuses_to_start_again() {
    let mut server = Server::start(&[]);
    let url = server.url();
    // A new server: the shared entry point refuses it too (new or emptied: only the operator
    // knows), the explicit creation makes it.
    let e = shardid::segment::create_tag(&url, "orders", "shardid").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("create_tag_from"), "{e}");
    create_tag_from(&url, "orders", "shardid", 1).unwrap();
    let ids = DenseIds::connect(&url, "orders", "shardid", small(5)).unwrap();
    let before: Vec<u64> = (0..20).map(|_| ids.next_id().unwrap()).collect();
    server.kill();
    server.restart();
    // What it held is used up; then its takes find no tag.
    let after: Vec<_> = (0..20).map(|_| ids.next_id()).collect();
    assert!(after.iter().any(Result::is_err));
    for id in after.iter().flatten() {
        assert!(!before.contains(id));
    }
    drop(ids);
    let e = shardid::segment::create_tag(&url, "orders", "shardid").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = DenseIds::connect(&url, "orders", "shardid", small(5)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownTag, "{e}");
}

/// Takes IDs in segments of `size` for `ms` milliseconds, about one a millisecond: the pace
/// the failover rule's premise asks of lost traffic (within its `MARGIN` times the highest
/// rate the tag had shown, measured over windows of at least a second). The client is not
/// closed: a crashed process gives nothing back.
fn take(url: &str, tag: &str, ms: u64, size: u64) -> Vec<u64> {
    let ids = DenseIds::connect(url, tag, "shardid", small(size)).unwrap();
    let end = Instant::now() + Duration::from_millis(ms);
    let mut out = Vec::new();
    while Instant::now() < end {
        out.push(ids.next_id().unwrap());
        std::thread::sleep(Duration::from_millis(1));
    }
    std::mem::forget(ids);
    out
}

fn assert_disjoint(before: &[u64], after: &[u64]) {
    let before: HashSet<_> = before.iter().collect();
    let twice: Vec<_> = after.iter().filter(|id| before.contains(id)).collect();
    assert!(
        twice.is_empty(),
        "{} IDs handed out twice: {:?}...",
        twice.len(),
        &twice[..twice.len().min(5)]
    );
}

/// A server that restarts from a snapshot older than its last acknowledged takes (as after a
/// crash with `appendfsync everysec`, or a lost AOF tail): the takes it lost were handed out,
/// and the next take must skip past them. Twice: the skip holds after a second loss too.
#[test]
fn lost_writes_after_a_crash() {
    let mut server = Server::start(&["--appendonly", "no"]);
    let url = server.url();
    create_tag_from(&url, "orders", "shardid", 1).unwrap();
    let mut handed_out = Vec::new();
    for _ in 0..2 {
        // A rate measured (a window of a second closed), then a snapshot.
        handed_out.extend(take(&url, "orders", 1_100, 20));
        assert_eq!(server.cli(&["SAVE"]).as_deref(), Some("OK"));
        // Acknowledged at the same pace, then lost: past the snapshot.
        handed_out.extend(take(&url, "orders", 600, 20));
        server.kill();
        server.restart();
        let after = take(&url, "orders", 200, 20);
        assert!(!after.is_empty());
        assert_disjoint(&handed_out, &after);
        handed_out.extend(after);
    }
    // A tag created after the snapshot is lost with it: created again by the shared entry
    // point, it starts past the server's fence, not at 1.
    assert_eq!(server.cli(&["SAVE"]).as_deref(), Some("OK"));
    create_tag(&url, "late", "shardid").unwrap();
    let late = take(&url, "late", 300, 20);
    server.kill();
    server.restart();
    create_tag(&url, "late", "shardid").unwrap();
    let again = take(&url, "late", 100, 20);
    assert_disjoint(&late, &again);
}

/// A replica promoted (`REPLICAOF NO ONE`) after it missed the primary's last takes: its
/// link stopped (pointed at a port nothing listens on: it keeps its data and receives nothing
/// more; a replica stopped by `SIGSTOP` would still find the stream in its socket's buffer when
/// resumed), the primary's takes go on at the same pace, the primary is killed (`SIGKILL`), and the
/// replica is promoted.
#[test]
fn lost_writes_after_a_promotion() {
    let mut primary = Server::start(&[]);
    let replica = Server::start(&["--replicaof", "127.0.0.1", &primary.port.to_string()]);
    let url = primary.url();
    create_tag_from(&url, "orders", "shardid", 1).unwrap();
    let mut handed_out = take(&url, "orders", 1_100, 20);
    assert_eq!(primary.cli(&["WAIT", "1", "5000"]).as_deref(), Some("1"));
    let nowhere = free_port().to_string();
    assert_eq!(
        replica
            .cli(&["REPLICAOF", "127.0.0.1", &nowhere])
            .as_deref(),
        Some("OK")
    );
    handed_out.extend(take(&url, "orders", 600, 20));
    primary.kill();
    assert_eq!(
        replica.cli(&["REPLICAOF", "NO", "ONE"]).as_deref(),
        Some("OK")
    );
    let after = take(&replica.url(), "orders", 200, 20);
    assert!(!after.is_empty());
    assert_disjoint(&handed_out, &after);
}

/// A child process's lease (does nothing when run by itself): claims a shard of `0..1`, prints
/// it, then an ID a millisecond until its lease fails (at most 20 s), and the error's code.
#[test]
fn child_lease() {
    let Ok(url) = std::env::var("SHARDID_REDIS_LEASE_URL") else {
        return;
    };
    let lease = Lease::acquire(&url, Layout::INSTAGRAM, 0..1, "shardid", 1_000).unwrap();
    println!("\nshardid-shard={}", lease.shard());
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        match lease.next_id() {
            Ok(id) => println!("shardid-id={id}"),
            Err(e) => {
                println!("shardid-error={}", e.kind().code());
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Starts [`child_lease`] on `url`; its stdout's lines arrive on the receiver.
fn lease_child(url: &str) -> (Child, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_lease",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("SHARDID_REDIS_LEASE_URL", url)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if let Some((_, value)) = line.split_once("shardid-")
                && send.send(value.to_string()).is_err()
            {
                return;
            }
        }
    });
    (child, receive)
}

/// Waits for `n` IDs from a lease child (at most 10 s); its other lines too.
fn child_ids(lines: &std::sync::mpsc::Receiver<String>, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while out
        .iter()
        .filter(|l: &&String| l.starts_with("id="))
        .count()
        < n
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => out.push(line),
            Err(e) => panic!("the lease child printed {out:?} in 10 s ({e})"),
        }
    }
    out
}

fn ids_of(lines: &[String]) -> HashSet<u64> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("id="))
        .map(|id| id.parse().unwrap())
        .collect()
}

#[test]
fn lease_claims_and_errors() {
    let server = Server::start(&[]);
    let url = server.url();
    let a = Lease::acquire(&url, Layout::INSTAGRAM, 0..2, "shardid", 10_000).unwrap();
    let b = Lease::acquire(&url, Layout::INSTAGRAM, 0..2, "shardid", 10_000).unwrap();
    assert_ne!(a.shard(), b.shard());
    let e = Lease::acquire(&url, Layout::INSTAGRAM, 0..2, "shardid", 10_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoFreeShard, "{e}");
    let (ida, idb) = (a.next_id().unwrap(), b.next_id().unwrap());
    assert_ne!(ida, idb);
    // Released at close: claimed again at once, with a larger fencing token, above its ceiling.
    let (shard, token) = (a.shard(), a.fencing_token());
    a.close();
    assert_eq!(a.next_id().unwrap_err().kind(), ErrorKind::Closed);
    let c = Lease::acquire(&url, Layout::INSTAGRAM, 0..2, "shardid", 10_000).unwrap();
    assert_eq!(c.shard(), shard);
    assert!(c.fencing_token() > token);
    assert!(c.next_id().unwrap() > ida);
    // Server down, bad URLs, a bad time to live.
    let down = format!("redis://127.0.0.1:{}", free_port());
    let e = Lease::acquire(&down, Layout::INSTAGRAM, 0..2, "shardid", 10_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable, "{e}");
    for bad in ["http://h", "rediss://127.0.0.1"] {
        let e = Lease::acquire(bad, Layout::INSTAGRAM, 0..2, "shardid", 10_000).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}: {e}");
    }
    let e = Lease::acquire(&url, Layout::INSTAGRAM, 0..2, "shardid", 10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// A holder killed (`SIGKILL`): its shard is free once its time to live has passed (not before), and the
/// next holder's IDs are above every ID it handed out.
#[test]
fn lease_of_a_killed_holder_expires() {
    let server = Server::start(&[]);
    let url = server.url();
    let (mut child, lines) = lease_child(&url);
    let printed = child_ids(&lines, 50);
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    let mut theirs = ids_of(&printed);
    theirs.extend(
        lines
            .try_iter()
            .filter_map(|l| l.strip_prefix("id=").map(|i| i.parse::<u64>().unwrap())),
    );
    let e = Lease::acquire(&url, Layout::INSTAGRAM, 0..1, "shardid", 1_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoFreeShard, "{e}");
    let lease = loop {
        match Lease::acquire(&url, Layout::INSTAGRAM, 0..1, "shardid", 1_000) {
            Ok(lease) => break lease,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::NoFreeShard, "{e}");
                assert!(
                    killed.elapsed() < Duration::from_secs(5),
                    "still held 5 s after"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    };
    assert!(killed.elapsed() >= Duration::from_millis(500));
    let max = theirs.iter().max().copied().unwrap();
    for _ in 0..1_000 {
        assert!(lease.next_id().unwrap() > max);
    }
}

/// A holder stopped (`SIGSTOP`) past its time to live: its shard is taken over, and once resumed it
/// makes no more IDs (`LEASE_LOST`); no ID of the two holders is the same.
#[test]
fn lease_of_a_stopped_holder_is_lost() {
    let server = Server::start(&[]);
    let url = server.url();
    let (mut child, lines) = lease_child(&url);
    let mut printed = child_ids(&lines, 50);
    Command::new("kill")
        .args(["-STOP", &child.id().to_string()])
        .status()
        .unwrap();
    let stopped = Instant::now();
    printed.extend(lines.try_iter());
    let lease = loop {
        match Lease::acquire(&url, Layout::INSTAGRAM, 0..1, "shardid", 1_000) {
            Ok(lease) => break lease,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::NoFreeShard, "{e}");
                assert!(
                    stopped.elapsed() < Duration::from_secs(5),
                    "still held 5 s after"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    };
    Command::new("kill")
        .args(["-CONT", &child.id().to_string()])
        .status()
        .unwrap();
    let mine: Vec<u64> = (0..300)
        .map(|_| {
            std::thread::sleep(Duration::from_micros(500));
            lease.next_id().unwrap()
        })
        .collect();
    assert!(child.wait().unwrap().success());
    printed.extend(lines.try_iter());
    assert_eq!(
        printed.last().map(String::as_str),
        Some("error=LEASE_LOST"),
        "{:?}",
        &printed[printed.len().saturating_sub(5)..]
    );
    let theirs = ids_of(&printed);
    assert!(mine.iter().all(|id| !theirs.contains(id)));
}

/// What a segment take costs against a bare `INCRBY` round trip on the same connection (the
/// issue's bound: at most 1.5 times). Ignored: a figure, not a check, since a shared machine's
/// timings vary; run with `cargo test --release -p shardid --features redis --test redis --
/// --ignored take_cost --nocapture`.
#[test]
#[ignore = "a measurement"]
fn take_cost() {
    let server = Server::start(&[]);
    let url = server.url();
    create_tag_from(&url, "bench", "shardid", 1).unwrap();
    let mut conn = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let info: String = redis::cmd("INFO").arg("server").query(&mut conn).unwrap();
    let run_id = shardid::redis::run_id(&info).unwrap().to_string();
    let take = redis::Script::new(shardid::redis::scripts::TAKE);
    let n = 20_000;
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let started = Instant::now();
        for _ in 0..n {
            let _: i64 = redis::cmd("INCRBY")
                .arg("counter")
                .arg(1_000)
                .query(&mut conn)
                .unwrap();
        }
        let incrby = started.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        let started = Instant::now();
        for _ in 0..n {
            let _: redis::Value = take
                .key("shardid:tag:{bench}")
                .key("shardid:server")
                .arg(&run_id)
                .arg(1_000)
                .invoke(&mut conn)
                .unwrap();
        }
        let script = started.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        best = (best.0.min(incrby), best.1.min(script));
    }
    println!(
        "INCRBY {:.1} us, take {:.1} us: {:.2} x",
        best.0,
        best.1,
        best.1 / best.0
    );
}
