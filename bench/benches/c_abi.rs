//! What the C ABI costs: the core called from Rust against the same operation through
//! `libshardid.so`'s exported functions, in one run.
//!
//! Build the library first: `cargo build --release -p shardid-c` (or point `SHARDID_C_LIB` at
//! a `libshardid.so`). The library carries its own copy of the core, so both sides do the
//! same work; the difference is the call through a C function pointer, the null checks and
//! the panic boundary.
use std::ffi::c_void;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shardid::{Generator, Layout, Options};
use shardid_bench::{burst, burst_of};

/// `shardid_layout` of include/shardid.h.
#[repr(C)]
#[derive(Clone, Copy)]
struct CLayout {
    epoch_ms: u64,
    unit_ms: u64,
    time_bits: u8,
    shard_bits: u8,
    sequence_bits: u8,
    order: u8,
    is_signed: bool,
}

/// `shardid_parts` of include/shardid.h.
#[repr(C)]
#[derive(Default)]
struct CParts {
    timestamp_ms: u64,
    shard: u64,
    sequence: u64,
}

type LayoutFn = unsafe extern "C" fn() -> CLayout;
type NewFn = unsafe extern "C" fn(*const CLayout, u64, *mut *mut c_void) -> u32;
type NextFn = unsafe extern "C" fn(*const c_void, *mut u64) -> u32;
type BatchFn = unsafe extern "C" fn(*const c_void, *mut u64, usize) -> u32;
type DecodeFn = unsafe extern "C" fn(*const CLayout, u64, *mut CParts) -> u32;

fn library_path() -> PathBuf {
    std::env::var_os("SHARDID_C_LIB").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/libshardid.so"),
        PathBuf::from,
    )
}

/// A Rust caller that keeps its generator behind a function boundary (a field of a service's
/// state, called from many places).
#[inline(never)]
fn next_id_call(g: &Generator<&'static shardid::State>) -> u64 {
    g.next_id().unwrap()
}

fn bench_c_abi(c: &mut Criterion) {
    let path = library_path();
    // SAFETY: libshardid's initialisers only set up Rust's runtime; the symbols below are
    // declared with the signatures of include/shardid.h.
    let lib = unsafe { libloading::Library::new(&path) }.unwrap_or_else(|e| {
        panic!(
            "{}: {e}; build it with `cargo build --release -p shardid-c`",
            path.display()
        )
    });
    // SAFETY: as above: the types match the header's declarations.
    let (twitter, new, next, batch, decode) = unsafe {
        (
            *lib.get::<LayoutFn>(b"shardid_layout_twitter").unwrap(),
            *lib.get::<NewFn>(b"shardid_generator_new").unwrap(),
            *lib.get::<NextFn>(b"shardid_generator_next").unwrap(),
            *lib.get::<BatchFn>(b"shardid_generator_next_batch").unwrap(),
            *lib.get::<DecodeFn>(b"shardid_decode").unwrap(),
        )
    };
    // SAFETY: a plain function returning a struct.
    let layout = unsafe { twitter() };
    let mut c_gen: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid pointers to a layout and an output pointer.
    assert_eq!(unsafe { new(&raw const layout, 1, &raw mut c_gen) }, 0);
    // Like the C side, the Rust side gets its layout at run time (a binding's or a service's
    // configuration); a compile-time constant layout lets the compiler fold the shifts.
    let rust_gen = Generator::shared(black_box(Layout::TWITTER), 1, Options::new()).unwrap();

    let mut group = c.benchmark_group("c_abi_next_id");
    group.throughput(Throughput::Elements(1));
    // Inlined into the timing loop, where the compiler hoists the layout's shifts and masks
    // out of the loop: the best case for Rust, which no call from another language gets.
    group.bench_function("rust-inlined", |b| {
        b.iter_custom(|n| burst(n, || rust_gen.next_id().unwrap()));
    });
    // One Rust call per ID, like one C call per ID: what the C ABI adds on top is the
    // difference between this and `c`.
    group.bench_function("rust-call", |b| {
        b.iter_custom(|n| burst(n, || next_id_call(&rust_gen)));
    });
    group.bench_function("c", |b| {
        b.iter_custom(|n| {
            burst(n, || {
                let mut id = 0;
                // SAFETY: a live generator and a valid output.
                let status = unsafe { next(c_gen, &raw mut id) };
                debug_assert_eq!(status, 0);
                id
            })
        });
    });
    group.finish();

    let mut group = c.benchmark_group("c_abi_next_ids_1024");
    group.throughput(Throughput::Elements(1024));
    let mut buf = vec![0u64; 1024];
    group.bench_function("rust", |b| {
        b.iter_custom(|n| {
            burst_of(n, 1, || {
                rust_gen.next_ids(&mut buf).unwrap();
                buf[1023]
            })
        });
    });
    group.bench_function("c", |b| {
        b.iter_custom(|n| {
            burst_of(n, 1, || {
                // SAFETY: a live generator and a buffer of 1024 u64s.
                let status = unsafe { batch(c_gen, buf.as_mut_ptr(), buf.len()) };
                debug_assert_eq!(status, 0);
                buf[1023]
            })
        });
    });
    group.finish();

    let mut group = c.benchmark_group("c_abi_decode");
    group.throughput(Throughput::Elements(1));
    let id = 1_050_118_621_198_921_728u64;
    // The C caller passes its layout at run time: so does this side, or the compiler would
    // fold the constant layout into the decoding.
    group.bench_function("rust", |b| {
        b.iter(|| {
            let p = black_box(Layout::TWITTER).decode(black_box(id)).unwrap();
            p.timestamp_ms ^ p.shard ^ p.sequence
        });
    });
    group.bench_function("c", |b| {
        b.iter(|| {
            let mut p = CParts::default();
            // SAFETY: a valid layout and output.
            let status = unsafe { decode(&raw const layout, black_box(id), &raw mut p) };
            debug_assert_eq!(status, 0);
            p.timestamp_ms ^ p.shard ^ p.sequence
        });
    });
    group.finish();
}

criterion_group!(benches, bench_c_abi);
criterion_main!(benches);
