//! Dense IDs once a segment is held: the async client over tokio-postgres
//! (`shardid::segment::tokio_postgres`, `next_id().await` on a current-thread runtime) against
//! the blocking client (`shardid::segment::postgres`), in the same run (issue 56: within 1.1×).
//! Both take one segment of 100,000,000 IDs and hand them out from memory; the prefetch at a
//! tenth runs in the background on both. Needs a PostgreSQL database where it may create the
//! schema `bench_async` in `SHARDID_BENCH_POSTGRES_URL` (tests/postgres/cluster.py starts one):
//!
//! `SHARDID_BENCH_POSTGRES_URL='host=127.0.0.1 port=P user=postgres dbname=postgres'
//! cargo bench -p shardid-bench --features tokio-postgres --bench dense_async`
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shardid::segment::SizePolicy;

const SCHEMA: &str = "bench_async";

fn bench(c: &mut Criterion) {
    let url = std::env::var("SHARDID_BENCH_POSTGRES_URL")
        .expect("SHARDID_BENCH_POSTGRES_URL: a PostgreSQL database to take segments from");
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).expect("the server");
    admin
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
        .unwrap();
    admin
        .batch_execute(&shardid::sql::Segments::new(SCHEMA).unwrap().to_string())
        .unwrap();
    for tag in ["blocking", "async"] {
        admin
            .execute(&format!("SELECT {SCHEMA}.create_tag($1)"), &[&tag])
            .unwrap();
    }
    let policy = SizePolicy::new().bounds(100_000_000, 100_000_000);
    let blocking =
        shardid::segment::postgres::DenseIds::connect(&url, "blocking", SCHEMA, policy).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let async_ids = runtime
        .block_on(shardid::segment::tokio_postgres::DenseIds::connect(
            &url, "async", SCHEMA, policy,
        ))
        .unwrap();

    let mut group = c.benchmark_group("dense_next_id");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("blocking", |b| {
        b.iter(|| black_box(blocking.next_id().unwrap()));
    });
    group.bench_function("async", |b| {
        // The loop inside one `block_on`, as a task awaits in a service: the runtime's entry is
        // not the client's cost.
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(async_ids.next_id().await.unwrap());
                }
                start.elapsed()
            })
        });
    });
    group.finish();
    blocking.close();
    runtime.block_on(async_ids.close());
}

criterion_group!(benches, bench);
criterion_main!(benches);
