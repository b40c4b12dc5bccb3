//! The async shard lease over tokio-postgres (`shardid::lease::tokio_postgres`, issue 56) on a
//! real server: two holders never share a shard, an `acquire` dropped at its awaits leaves no
//! connection and nothing claimed past its time to live, a lease lost past its time to live
//! hands out nothing more (`LEASE_LOST`), and the synchronous `try_next_id` rarely finds its
//! ceiling unwritten, while IDs are taken and when they are taken seldom.
//!
//! Each test needs a PostgreSQL database in `SHARDID_TEST_POSTGRES_URL` where it may create
//! tables: `tests/postgres/test_tokio_lease.py` starts a throwaway server and runs them
//! (`cargo test -p shardid --features tokio-postgres --test tokio_lease -- --ignored`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shardid::Layout;
use shardid::lease::LeaseError;
use shardid::lease::tokio_postgres::{LeaseOptions, PostgresLease};
use shardid::sql::LeaseKind;

const NEEDS: &str = "needs a PostgreSQL: tests/postgres/test_tokio_lease.py runs it";

fn url() -> String {
    std::env::var("SHARDID_TEST_POSTGRES_URL").expect("SHARDID_TEST_POSTGRES_URL: a database URL")
}

/// `url()` with `application_name`, to count this test's connections.
fn named_url(name: &str) -> String {
    format!("{} application_name={name}", url())
}

/// What `#[tokio::test]` runs its test on (the macro is not a dependency; the multi-thread
/// runtime is not among tokio's features here): the keepers share the thread with the test.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn admin() -> postgres::Client {
    postgres::Client::connect(&url(), postgres::NoTls).expect("the test server")
}

/// Options for a lease in `table` (made afresh) with a time to live of `ttl_ms`.
fn options(table: &str, ttl_ms: u64) -> LeaseOptions {
    admin()
        .batch_execute(&format!("DROP TABLE IF EXISTS public.{table}"))
        .unwrap();
    LeaseOptions::new()
        .table(table)
        .schema("public")
        .kind(LeaseKind::Expiring { ttl_ms })
}

/// Connections open with `application_name` `name`, other than the one asking (on a thread
/// of its own: the blocking client cannot run on a runtime's).
fn connections(name: &str) -> i64 {
    let name = name.to_string();
    std::thread::spawn(move || {
        admin()
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
                &[&name],
            )
            .unwrap()
            .get(0)
    })
    .join()
    .unwrap()
}

/// Waits (at most 5 s) until no connection named `name` is open: closing is a task's work.
fn assert_no_connection_left(name: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while connections(name) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(connections(name), 0, "connections of {name} left open");
}

/// Takes IDs from `lease` for `for_ms` (across several ceilings), awaiting each.
async fn take_for(lease: &PostgresLease, for_ms: u64) -> Vec<u64> {
    let until = Instant::now() + Duration::from_millis(for_ms);
    let mut ids = Vec::new();
    while Instant::now() < until {
        ids.push(lease.next_id().await.expect("an ID"));
        if ids.len() % 64 == 0 {
            tokio::task::yield_now().await;
        }
    }
    ids
}

/// Three tasks take a lease of 0..2 at once (on the application's client, on connections a
/// pool lends, on a URL): two hold a shard each, the third finds none free; their IDs, taken at
/// once across many ceiling writes, are unique; a lease taken after one is closed continues
/// above its IDs.
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio_lease.py runs it"]
fn two_holders_never_share_a_shard() {
    let _ = NEEDS;
    let o = options("tokio_lease_two", 10_000);
    runtime().block_on(async {
        let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let client = Arc::new(client);
        let tasks: Vec<_> = (0..3)
            .map(|i| {
                let (o, client) = (o.clone(), Arc::clone(&client));
                tokio::spawn(async move {
                    if i == 0 {
                        PostgresLease::with_client(client, Layout::TWITTER, 0..2, &o).await
                    } else if i == 1 {
                        // A "pool" that opens a connection for each statement.
                        let lend = || async {
                            let (client, connection) =
                                tokio_postgres::connect(&url(), tokio_postgres::NoTls).await?;
                            tokio::spawn(connection);
                            Ok::<_, tokio_postgres::Error>(Arc::new(client))
                        };
                        PostgresLease::with_pool(lend, Layout::TWITTER, 0..2, &o).await
                    } else {
                        PostgresLease::acquire(&url(), Layout::TWITTER, 0..2, &o).await
                    }
                })
            })
            .collect();
        let mut held = Vec::new();
        let mut refused = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(lease) => held.push(Arc::new(lease)),
                Err(LeaseError::NoFreeShard { shards, .. }) => {
                    assert_eq!(shards, 0..2);
                    refused += 1;
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!((held.len(), refused), (2, 1));
        assert_ne!(held[0].shard(), held[1].shard());
        let takers: Vec<_> = held
            .iter()
            .map(|lease| {
                let lease = Arc::clone(lease);
                tokio::spawn(async move { take_for(&lease, 400).await })
            })
            .collect();
        let mut all = Vec::new();
        for taker in takers {
            all.extend(taker.await.unwrap());
        }
        let n = all.len();
        assert_eq!(
            all.iter().copied().collect::<HashSet<_>>().len(),
            n,
            "an ID twice"
        );
        let writes = held[0].stats().ceiling_writes + held[1].stats().ceiling_writes;
        assert!(writes >= 4, "{writes} ceiling writes in 400 ms of IDs");
        // Closed, its shard is free at once; the next holder starts above its last ID.
        let first = held.remove(0);
        let (shard, last) = (
            first.shard(),
            all.iter()
                .copied()
                .filter(|&id| Layout::TWITTER.decode(id).unwrap().shard == first.shard())
                .max()
                .unwrap(),
        );
        first.close().await;
        assert!(matches!(
            first.next_id().await,
            Err(LeaseError::Closed { .. })
        ));
        let next = PostgresLease::acquire(&url(), Layout::TWITTER, 0..2, &o)
            .await
            .expect("the closed lease's shard");
        assert_eq!(next.shard(), shard);
        assert!(next.next_id().await.unwrap() > last);
        next.close().await;
        held[0].close().await;
    });
}

/// `acquire` dropped at each of its awaits (timeouts of 0 to 30 ms, on a lease's own
/// connection): no connection stays open, and once the time to live has passed after the last
/// drop, the one shard is free again.
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio_lease.py runs it"]
fn a_dropped_acquire_leaves_nothing_claimed_past_its_ttl() {
    let name = "tokio_lease_dropped";
    let o = options("tokio_lease_dropped", 1_000);
    let url = named_url(name);
    runtime().block_on(async {
        // The table made, so later claims are the short path.
        PostgresLease::acquire(&url, Layout::TWITTER, 0..1, &o)
            .await
            .unwrap()
            .close()
            .await;
        let mut dropped = 0;
        let mut last_drop = Instant::now();
        for budget_us in (0..30_000).step_by(500) {
            let acquire = PostgresLease::acquire(&url, Layout::TWITTER, 0..1, &o);
            match tokio::time::timeout(Duration::from_micros(budget_us), acquire).await {
                Err(_) => {
                    dropped += 1;
                    last_drop = Instant::now();
                }
                // Taken in time: closed, which releases at once.
                Ok(Ok(lease)) => lease.close().await,
                // Held by a claim dropped earlier, until its time to live.
                Ok(Err(LeaseError::NoFreeShard { .. })) => {}
                Ok(Err(e)) => panic!("{e}"),
            }
        }
        assert!(dropped >= 5, "only {dropped} acquires dropped");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_no_connection_left(name);
        tokio::time::sleep(Duration::from_millis(1_100).saturating_sub(last_drop.elapsed())).await;
        let lease = PostgresLease::acquire(&url, Layout::TWITTER, 0..1, &o)
            .await
            .expect("nothing claimed past the time to live");
        lease.close().await;
        assert_no_connection_left(name);
    });
}

/// A lease whose renewals a row lock holds up (a holder cut off from its database) stops once
/// its time to live has passed: `next_id` and `try_next_id` fail with `LEASE_LOST` from then
/// on, even after the database answers again; the next holder starts above its IDs.
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio_lease.py runs it"]
fn a_lease_lost_past_its_ttl_stops_ids() {
    let o = options("tokio_lease_lost", 1_000);
    runtime().block_on(async {
        let lease = PostgresLease::acquire(&url(), Layout::TWITTER, 0..1, &o)
            .await
            .unwrap();
        let mut ids = take_for(&lease, 50).await;
        // The lease's row locked by another transaction: no renewal or ceiling write returns.
        let (lock_taken, row_locked) = std::sync::mpsc::channel();
        let locker = std::thread::spawn(move || {
            let mut c = admin();
            let mut tx = c.transaction().unwrap();
            tx.batch_execute("SELECT * FROM public.tokio_lease_lost FOR UPDATE")
                .unwrap();
            lock_taken.send(()).unwrap();
            std::thread::sleep(Duration::from_secs(2));
            tx.rollback().unwrap();
        });
        row_locked.recv().unwrap();
        let since = Instant::now();
        let lost = loop {
            // Waiting for a ceiling the keeper cannot write ends by the time to live at most.
            let Ok(answer) =
                tokio::time::timeout(Duration::from_millis(1_500), lease.next_id()).await
            else {
                panic!("next_id waited 1.5 s, past the time to live");
            };
            match answer {
                Ok(id) => ids.push(id),
                Err(e) => break e,
            }
            assert!(
                since.elapsed() < Duration::from_millis(1_800),
                "still handing out IDs"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        assert!(matches!(lost, LeaseError::Lost { shard: 0 }), "{lost}");
        assert_eq!(lost.kind(), shardid::ErrorKind::LeaseLost);
        assert!(!lease.is_held());
        locker.join().unwrap();
        // The database answers again: the lease stays lost.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(matches!(lease.try_next_id(), Err(LeaseError::Lost { .. })));
        assert!(matches!(
            lease.next_id().await,
            Err(LeaseError::Lost { .. })
        ));
        assert_eq!(lease.stats().losses, 1);
        let next = PostgresLease::acquire(&url(), Layout::TWITTER, 0..1, &o)
            .await
            .expect("the lost lease's shard, expired");
        assert!(next.next_id().await.unwrap() > *ids.iter().max().unwrap());
        next.close().await;
        lease.close().await;
    });
}

/// While IDs are taken, the keeper writes each ceiling before the clock reaches the last, so
/// the synchronous `try_next_id` (a column default's) almost never finds none: at most the
/// first call after the lease was taken, and a few under load, over 600 ms of one ID a
/// millisecond. Every ID it handed out is unique.
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio_lease.py runs it"]
fn try_next_id_rarely_waits_while_ids_are_taken() {
    let o = options("tokio_lease_sync", 10_000);
    runtime().block_on(async {
        let lease = PostgresLease::acquire(&url(), Layout::TWITTER, 0..1, &o)
            .await
            .unwrap();
        let (mut ids, mut pending) = (Vec::new(), 0);
        let until = Instant::now() + Duration::from_millis(600);
        while Instant::now() < until {
            match lease.try_next_id() {
                Ok(id) => ids.push(id),
                Err(LeaseError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    pending += 1;
                }
                Err(e) => panic!("{e}"),
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert!(
            pending <= 5,
            "{pending} of {} calls found no ceiling",
            ids.len()
        );
        assert!(ids.len() >= 100, "{} IDs", ids.len());
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID twice");
        lease.close().await;
    });
}

/// A synchronous caller that takes an ID now and then (a column default at each request, here
/// one every 1.2 s, past the second the writes ahead last after an ID) finds its ceiling
/// written: from the first `try_next_id` on, the keeper keeps one a second ahead of the clock,
/// idle or not, at a write about every half second. (Without that lead every such call
/// refused: the ceiling stood where the last ID had left it.)
#[test]
#[ignore = "needs a PostgreSQL: tests/postgres/test_tokio_lease.py runs it"]
fn try_next_id_finds_a_ceiling_when_called_seldom() {
    let o = options("tokio_lease_seldom", 10_000);
    runtime().block_on(async {
        let lease = PostgresLease::acquire(&url(), Layout::TWITTER, 0..1, &o)
            .await
            .unwrap();
        // As the book says: one awaited ID after taking the lease, then synchronous calls.
        let mut ids = vec![lease.next_id().await.unwrap()];
        ids.push(lease.try_next_id().expect("the ceiling next_id just wrote"));
        for call in 0..2 {
            tokio::time::sleep(Duration::from_millis(1_200)).await;
            match lease.try_next_id() {
                Ok(id) => ids.push(id),
                Err(e) => panic!("call {call}, 1.2 s after the last: {e}"),
            }
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        // The recorded ceiling is ahead of the clock, by at most the lead and a half (what a
        // successor after a close waits at most): read on a thread, the blocking client's.
        let ahead_ms = std::thread::spawn(|| {
            let ceiling: i64 = admin()
                .query_one(
                    "SELECT max(ceiling) FROM public.tokio_lease_seldom WHERE shard = 0",
                    &[],
                )
                .unwrap()
                .get(0);
            ceiling.cast_unsigned() + Layout::TWITTER.epoch_ms()
        })
        .join()
        .unwrap()
        .cast_signed()
            - i64::try_from(shardid::now_ms()).unwrap();
        assert!(
            (1..=1_600).contains(&ahead_ms),
            "ceiling {ahead_ms} ms ahead"
        );
        lease.close().await;
    });
}
