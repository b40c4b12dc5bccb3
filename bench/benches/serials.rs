//! Business serial numbers in Rust, against the same binding's dense IDs: what
//! `Serials::next_serial` and `DenseIds::next_id` (`shardid::serial::postgres`,
//! `shardid::segment::postgres`) do per call once their segments are in memory — the core's
//! allocators, each with one segment that never runs out, so no database is on the path.
//!
//! - `next/dense-next_id`: `SegmentAllocator::next_id_with(now_ms)`, as `DenseIds::next_id`
//!   (the clock read only when a fetch may be due);
//! - `next/serial-next_serial`: `SerialAllocator::next_now()`, as `Serials::next_serial`: the
//!   clock read (as a burst reads it: the ticker's), the period chosen, a number taken, the
//!   serial (`ORD-20261125-000000000123`) formatted;
//! - `parse/serial`: `SerialFormat::parse` of one serial (with a check digit: `parse/check`).
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shardid::segment::{Empty, Segment, SegmentAllocator, SizePolicy};
use shardid::serial::{Blocked, SerialAllocator, SerialFormat, VolumeHiding};

/// One segment of 2^40 - 1 numbers: no fetch in a run.
const HUGE: Segment = Segment {
    first: 1,
    count: (1 << 40) - 1,
    stride: 1,
};

fn dense() -> SegmentAllocator {
    let a = SegmentAllocator::new(SizePolicy::new());
    let Err(Empty::Fetch(_)) = a.next_id(0) else {
        unreachable!("a new allocator asks for a fetch")
    };
    a.fill(HUGE, 0).unwrap();
    a
}

fn serials(format: &str) -> SerialAllocator {
    let f = SerialFormat::new(format, "Asia/Shanghai").unwrap();
    let a = SerialAllocator::new(f, "orders", SizePolicy::new(), VolumeHiding::NONE);
    let now = shardid::now_ms();
    let Err(Blocked::Fetch(fetch)) = a.next_at(now, || now) else {
        unreachable!("a new period asks for a fetch")
    };
    a.fill(fetch, HUGE, now).unwrap();
    a
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("serials");
    group.throughput(Throughput::Elements(1));
    let d = dense();
    group.bench_function("next/dense-next_id", |b| {
        b.iter(|| black_box(d.next_id_with(shardid::now_ms)));
    });
    // 12 digits: a run of criterion never passes the width.
    let s = serials("ORD-{yyyy}{MM}{dd}-{seq:12}");
    group.bench_function("next/serial-next_serial", |b| {
        b.iter(|| black_box(s.next_now().map(|i| i.serial)));
    });
    let f = SerialFormat::new("ORD-{yyyy}{MM}{dd}-{seq:12}", "Asia/Shanghai").unwrap();
    let text = f.render(123_456, shardid::now_ms()).unwrap().to_string();
    group.bench_function("parse/serial", |b| {
        b.iter(|| black_box(f.parse(black_box(&text))));
    });
    let checked = SerialFormat::new("ORD-{yyyy}{MM}{dd}-{seq:12}{check}", "Asia/Shanghai").unwrap();
    let text = checked
        .render(123_456, shardid::now_ms())
        .unwrap()
        .to_string();
    group.bench_function("parse/check", |b| {
        b.iter(|| black_box(checked.parse(black_box(&text))));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
