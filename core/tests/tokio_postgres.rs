//! The PostgreSQL clients inside tokio, on a real server (issue 56): the blocking clients never
//! panic inside a runtime, and the async client of dense IDs (`shardid::segment::tokio_postgres`)
//! hands out unique IDs across tasks, lets other tasks run during a fetch, and survives its
//! futures dropped at every `await`.
//!
//! Each test needs a PostgreSQL database in `SHARDID_TEST_POSTGRES_URL` where it may create
//! schemas: `tests/postgres/test_tokio.py` starts a throwaway server and runs them
//! (`cargo test -p shardid --features tokio-postgres,serial --test tokio_postgres -- --ignored`).
//! The runtimes are built as `#[tokio::test]` builds them (the macro is not a dependency).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shardid::Layout;
use shardid::segment::SizePolicy;
use shardid::segment::tokio_postgres::DenseIds;

const NEEDS: &str = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it";

fn url() -> String {
    std::env::var("SHARDID_TEST_POSTGRES_URL").expect("SHARDID_TEST_POSTGRES_URL: a database URL")
}

/// `url()` with `application_name`, to count this test's connections.
fn named_url(name: &str) -> String {
    format!("{} application_name={name}", url())
}

/// What `#[tokio::test(flavor = "current_thread")]` runs its test on.
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn admin() -> postgres::Client {
    postgres::Client::connect(&url(), postgres::NoTls).expect("the test server")
}

/// The segments' DDL in `schema` (made afresh), and `tags` created.
fn install(schema: &str, tags: &[&str]) {
    let mut c = admin();
    let ddl = shardid::sql::Segments::new(schema).unwrap().to_string();
    c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .unwrap();
    c.batch_execute(&ddl).unwrap();
    for tag in tags {
        c.execute(&format!("SELECT {schema}.create_tag($1)"), &[tag])
            .unwrap();
    }
}

/// Connections open with `application_name` `name`, other than the one asking.
fn connections(name: &str) -> i64 {
    admin()
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
            &[&name],
        )
        .unwrap()
        .get(0)
}

/// Waits (at most 5 s) until no connection named `name` is open: closing is a task's work.
fn assert_no_connection_left(name: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while connections(name) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(connections(name), 0, "connections of {name} left open");
}

fn assert_unique(ids: &[u64]) {
    let set: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(set.len(), ids.len(), "an ID handed out twice");
}

// The blocking clients inside a runtime: each panicked before ("Cannot start a runtime from
// within a runtime"), made inside the runtime or made before it and used or dropped there.

#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn blocking_dense_ids_inside_a_runtime() {
    let _ = NEEDS;
    install("tk_block_seg", &["b"]);
    let before = shardid::segment::postgres::DenseIds::connect(
        &url(),
        "b",
        "tk_block_seg",
        SizePolicy::new().bounds(3, 3),
    )
    .unwrap();
    let ids = current_thread().block_on(async {
        shardid::segment::create_tag(&url(), "b2", "tk_block_seg").unwrap();
        let inside = shardid::segment::postgres::DenseIds::connect(
            &url(),
            "b2",
            "tk_block_seg",
            SizePolicy::new().bounds(3, 3),
        )
        .unwrap();
        let mut ids = Vec::new();
        for _ in 0..10 {
            ids.push(before.next_id().unwrap());
            ids.push(inside.next_id().unwrap() + 1_000_000);
        }
        // Its rest given back from inside the runtime, by close and by drop.
        assert_eq!(inside.close(), 0);
        drop(inside);
        drop(before);
        // And inside spawn_blocking, as the book advises for blocking calls.
        let in_blocking = tokio::task::spawn_blocking(|| {
            let d = shardid::segment::postgres::DenseIds::connect(
                &url(),
                "b",
                "tk_block_seg",
                SizePolicy::new().bounds(3, 3),
            )
            .unwrap();
            d.next_id().unwrap()
        })
        .await
        .unwrap();
        ids.push(in_blocking);
        ids
    });
    assert_unique(&ids);
    // Both rests went back: the next numbers follow on.
    assert_eq!(ids[ids.len() - 1], 11, "{ids:?}");
}

#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn blocking_dictionary_inside_a_runtime() {
    let schema = "tk_block_dict";
    let mut c = admin();
    c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .unwrap();
    c.batch_execute(&shardid::sql::Dictionary::new(schema).unwrap().to_string())
        .unwrap();
    let before =
        shardid::dictionary::postgres::Dictionary::connect(&[url()], "t", schema, 10).unwrap();
    before.create().unwrap();
    let runtime = current_thread();
    let (a, b, again) = runtime.block_on(async {
        let inside =
            shardid::dictionary::postgres::Dictionary::connect(&[url()], "t", schema, 10).unwrap();
        // In a task, as in an axum handler.
        let handler = tokio::spawn(async move { before.id("FR").unwrap() });
        let a = handler.await.unwrap();
        let b = inside.id("DE").unwrap();
        (a, b, inside.id("FR").unwrap())
    });
    assert_eq!((a, b, again), (0, 1, 0));
}

#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn blocking_lease_inside_a_runtime() {
    use shardid::lease::postgres::{LeaseOptions, PostgresLease};
    let options = LeaseOptions::new().table("tk_block_lease");
    let ids = current_thread().block_on(async {
        let lease = PostgresLease::acquire(&url(), Layout::TWITTER, 0..2, &options).unwrap();
        let mut ids = [0u64; 100];
        lease.next_ids(&mut ids).unwrap();
        lease.close(); // releases the shard from inside the runtime
        // Released: the same shard again.
        let again = PostgresLease::acquire(&url(), Layout::TWITTER, 0..1, &options).unwrap();
        let id = again.next_id().unwrap();
        drop(again); // dropping releases too
        (ids, id)
    });
    assert!(ids.0.windows(2).all(|w| w[0] < w[1]));
    assert!(ids.1 > ids.0[99]);
}

#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn blocking_serials_inside_a_runtime() {
    use shardid::serial::postgres::{Serials, create_serial};
    install("tk_block_ser", &[]);
    let format = "S-{yyyy}-{seq:6}";
    let serials = current_thread().block_on(async {
        create_serial(&url(), "s", format, "UTC", "tk_block_ser", 1).unwrap();
        let s = Serials::connect(
            &url(),
            "s",
            format,
            "UTC",
            "tk_block_ser",
            SizePolicy::new().bounds(2, 2),
        )
        .unwrap();
        let got: Vec<String> = (0..5)
            .map(|_| s.next_serial().unwrap().to_string())
            .collect();
        s.close();
        got
    });
    assert!(serials[4].ends_with("-000005"), "{serials:?}");
}

#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn blocking_clients_refusing_inside_a_runtime_do_not_panic() {
    use shardid::segment::postgres::SegmentError;
    use shardid::serial::postgres::{Serials, SerialsError};
    install("tk_block_refuse", &[]);
    current_thread().block_on(async {
        // Connected, then refused: the connection is let go inside the runtime.
        let dense = shardid::segment::postgres::DenseIds::connect(
            &url(),
            "missing",
            "tk_block_refuse",
            SizePolicy::new(),
        );
        assert!(
            matches!(dense, Err(SegmentError::UnknownTag { .. })),
            "{dense:?}"
        );
        let serials = Serials::connect(
            &url(),
            "missing",
            "S-{yyyy}-{seq:6}",
            "UTC",
            "tk_block_refuse",
            SizePolicy::new(),
        );
        assert!(
            matches!(serials, Err(SerialsError::UnknownTag { .. })),
            "{serials:?}"
        );
    });
}

// The async client.

/// A pool of one connection that counts what it has lent: a lent connection is given back when
/// dropped.
struct Pool {
    client: Arc<tokio_postgres::Client>,
    lent: Arc<AtomicUsize>,
    /// Each lending waits this long first (a slow pool).
    delay: Duration,
}

struct Lent {
    client: Arc<tokio_postgres::Client>,
    lent: Arc<AtomicUsize>,
}

impl std::ops::Deref for Lent {
    type Target = tokio_postgres::Client;
    fn deref(&self) -> &tokio_postgres::Client {
        &self.client
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        self.lent.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Pool {
    async fn new(name: &str, delay: Duration) -> Self {
        let (client, connection) = tokio_postgres::connect(&named_url(name), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        Self {
            client: Arc::new(client),
            lent: Arc::new(AtomicUsize::new(0)),
            delay,
        }
    }

    fn lender(
        &self,
    ) -> impl Fn() -> std::pin::Pin<Box<dyn Future<Output = Result<Lent, String>> + Send>>
    + Send
    + Sync
    + 'static {
        let (client, lent, delay) = (Arc::clone(&self.client), Arc::clone(&self.lent), self.delay);
        move || {
            let (client, lent) = (Arc::clone(&client), Arc::clone(&lent));
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                lent.fetch_add(1, Ordering::SeqCst);
                Ok(Lent { client, lent })
            })
        }
    }
}

/// Three clients (a URL, the application's connection, a pool) on two runtimes on two threads,
/// each with 4 tasks, all on one tag with segments of 5 to 20 IDs: no ID twice, and after every
/// close the tag continues right after the last ID handed out, with no connection left.
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn async_ids_are_unique_across_tasks_and_runtimes() {
    install("tk_unique", &["u"]);
    let policy = SizePolicy::new().bounds(5, 20).target_ms(1);
    let all = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let all = Arc::clone(&all);
            std::thread::spawn(move || {
                current_thread().block_on(async move {
                    let name = format!("tk_unique_{t}");
                    let pool = Pool::new(&format!("{name}_pool"), Duration::ZERO).await;
                    let app = {
                        let (client, connection) = tokio_postgres::connect(
                            &named_url(&format!("{name}_app")),
                            tokio_postgres::NoTls,
                        )
                        .await
                        .unwrap();
                        tokio::spawn(connection);
                        Arc::new(client)
                    };
                    let clients = [
                        DenseIds::connect(&named_url(&name), "u", "tk_unique", policy)
                            .await
                            .unwrap(),
                        DenseIds::with_client(Arc::clone(&app), "u", "tk_unique", policy)
                            .await
                            .unwrap(),
                        DenseIds::with_pool(pool.lender(), "u", "tk_unique", policy)
                            .await
                            .unwrap(),
                    ]
                    .map(Arc::new);
                    let tasks: Vec<_> = (0..12)
                        .map(|i| {
                            let ids = Arc::clone(&clients[i % 3]);
                            tokio::spawn(async move {
                                let mut got = Vec::new();
                                for n in 0..200 {
                                    if n % 50 == 0 {
                                        let mut batch = [0; 7];
                                        ids.next_ids(&mut batch).await.unwrap();
                                        got.extend(batch);
                                    } else {
                                        got.push(ids.next_id().await.unwrap());
                                    }
                                    if n % 10 == 0 {
                                        tokio::task::yield_now().await;
                                    }
                                }
                                got
                            })
                        })
                        .collect();
                    let mut got = Vec::new();
                    for task in tasks {
                        got.extend(task.await.unwrap());
                    }
                    for ids in &clients {
                        ids.close().await;
                    }
                    assert_eq!(
                        pool.lent.load(Ordering::SeqCst),
                        0,
                        "a pool connection not given back"
                    );
                    drop(clients);
                    all.lock().unwrap().extend(got);
                    name
                })
            })
        })
        .collect();
    let names: Vec<String> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let all = all.lock().unwrap().clone();
    assert_eq!(all.len(), 2 * 12 * (196 + 4 * 7));
    assert_unique(&all);
    for name in &names {
        assert_no_connection_left(name);
    }
    // Every rest went back or was counted lost; a new client continues past every ID.
    let next = current_thread().block_on(async {
        let ids = DenseIds::connect(&url(), "u", "tk_unique", SizePolicy::new().bounds(1, 1))
            .await
            .unwrap();
        let id = ids.next_id().await.unwrap();
        ids.close().await;
        id
    });
    assert!(
        all.iter().all(|&id| id < next),
        "{next} was handed out before"
    );
}

/// On a current-thread runtime, a task keeps running while another waits for a fetch that the
/// server holds up (the tag's row locked by another transaction for 300 ms): the fetch is a
/// task of its own and the waiting caller's future yields. The blocking client would hold the
/// runtime's one thread for those 300 ms.
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn current_thread_another_task_runs_during_a_fetch() {
    install("tk_yield", &["y"]);
    let runtime = current_thread();
    runtime.block_on(async {
        // Segments of 1 ID: the second ID needs a fetch (the prefetch at the first is in
        // flight or done; the third certainly fetches).
        let ids = Arc::new(
            DenseIds::connect(&url(), "y", "tk_yield", SizePolicy::new().bounds(1, 1))
                .await
                .unwrap(),
        );
        ids.next_id().await.unwrap();
        ids.next_id().await.unwrap();
        // Hold the row: the next take waits for this transaction.
        let locked = Arc::new(AtomicBool::new(false));
        let holder = {
            let locked = Arc::clone(&locked);
            std::thread::spawn(move || {
                let mut c = admin();
                let mut tx = c.transaction().unwrap();
                tx.execute(
                    "SELECT 1 FROM tk_yield.shardid_tags WHERE tag = 'y' FOR UPDATE",
                    &[],
                )
                .unwrap();
                locked.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(300));
                tx.commit().unwrap();
            })
        };
        while !locked.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let ticks = Arc::new(AtomicU64::new(0));
        let ticker = {
            let ticks = Arc::clone(&ticks);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    ticks.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let started = Instant::now();
        // Drain what is held, then wait for the held-up fetch.
        let mut waited = Duration::ZERO;
        for _ in 0..3 {
            let before = Instant::now();
            ids.next_id().await.unwrap();
            waited = waited.max(before.elapsed());
        }
        let during = ticks.load(Ordering::SeqCst);
        ticker.abort();
        holder.join().unwrap();
        assert!(
            waited >= Duration::from_millis(100),
            "no ID waited for the held-up fetch ({waited:?}): the test proves nothing"
        );
        // 5 ms ticks over the wait: at least a third of them ran.
        let expected = u64::try_from(waited.as_millis() / 5).unwrap() / 3;
        assert!(
            during >= expected,
            "{during} ticks in {:?} (waited {waited:?}): the fetch blocked the runtime",
            started.elapsed()
        );
        ids.close().await;
    });
}

/// Every future of the client dropped at each point it can be: `connect`, `next_id`,
/// `next_ids` and `close` polled under timeouts of 0 (a single poll) to 30 ms, on segments of 1
/// to 2 IDs so nearly every call waits for a fetch, through a slow pool and a connection of its
/// own. No ID twice, every pool connection given back, no connection of its own left open.
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio.py runs it"]
fn futures_dropped_at_every_await_hand_out_nothing_twice() {
    install("tk_cancel", &["c"]);
    let name = "tk_cancel_own";
    let runtime = current_thread();
    let (ids, lent) = runtime.block_on(async {
        let pool = Pool::new("tk_cancel_pool", Duration::from_millis(3)).await;
        let policy = SizePolicy::new().bounds(1, 2).target_ms(1);
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        for round in 0u64..40 {
            if Instant::now() > deadline {
                break; // bounded in time as in count
            }
            let limit = Duration::from_micros(round * 750);
            // connect dropped: its first fetch's segment becomes a hole.
            let cut = tokio::time::timeout(
                limit,
                DenseIds::connect(&named_url(name), "c", "tk_cancel", policy),
            )
            .await;
            let ids = match cut {
                Ok(ids) => ids.unwrap(),
                Err(_) => DenseIds::with_pool(pool.lender(), "c", "tk_cancel", policy)
                    .await
                    .unwrap(),
            };
            for _ in 0..5 {
                if let Ok(id) = tokio::time::timeout(limit, ids.next_id()).await {
                    got.push(id.unwrap());
                }
                let mut batch = [0u64; 3];
                if let Ok(done) = tokio::time::timeout(limit, ids.next_ids(&mut batch)).await {
                    done.unwrap();
                    got.extend(batch);
                }
            }
            // close dropped: it still gives back, in its own task.
            if round % 2 == 0 {
                let _ = tokio::time::timeout(limit, ids.close()).await;
            }
            drop(ids);
        }
        // The tasks of the last closes and drops finish.
        tokio::time::sleep(Duration::from_millis(200)).await;
        // A last client continues past everything.
        let last = DenseIds::connect(&url(), "c", "tk_cancel", policy)
            .await
            .unwrap();
        let next = last.next_id().await.unwrap();
        last.close().await;
        assert!(
            got.iter().all(|&id| id < next),
            "{next} was handed out before"
        );
        got.push(next);
        (got, pool.lent.load(Ordering::SeqCst))
    });
    drop(runtime);
    assert!(
        ids.len() > 40,
        "too few IDs to show anything: {}",
        ids.len()
    );
    assert_unique(&ids);
    assert_eq!(lent, 0, "a pool connection not given back");
    assert_no_connection_left(name);
}
