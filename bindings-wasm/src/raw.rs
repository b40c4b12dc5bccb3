//! The module's exports: plain numbers in and out, no JavaScript objects.
//!
//! Every fallible export returns a status — 0, or the number of one of the core's error kinds
//! ([`shardid::ErrorKind::number`], the C binding's `shardid_status` too) — and leaves its
//! results (or the error's number fields) in [`OUT`], which `js/backend.js` reads through a
//! typed-array view of the module's memory; an error's text fields come from `errorText`. Arguments arrive already checked by `js/backend.js` (a `bigint` in
//! 0..2^64 for every `u64`), so the module needs none of js-sys' object glue: that keeps it
//! small and each call cheap.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;

use shardid::{
    Anchor, Error, ErrorKind, FieldOrder, FieldValue, Generator, Layout, Options, Registry,
};
use wasm_bindgen::prelude::*;

use crate::Local;

#[cfg(feature = "public")]
#[path = "public.rs"]
mod public;

/// Results and error fields of the last call, read by `js/backend.js`.
static OUT: Local<[u64; OUT_WORDS]> = Local(RefCell::new([0; OUT_WORDS]));
/// The most any call leaves in OUT: [`layout_info`]'s 18 words.
const OUT_WORDS: usize = 18;
static LAYOUTS: Local<Vec<Layout>> = Local(RefCell::new(Vec::new()));
static GENERATORS: Local<Vec<Entry>> = Local(RefCell::new(Vec::new()));
/// One state word per (ID space, shard), shared by every generator for it: the core's
/// registry, one per module instance (workers get their own instance and memory).
static STATES: Local<Registry> = Local(RefCell::new(Registry::new()));
static ANCHOR: Anchor = Anchor::new();

/// The text fields of the last error, by field position (`reason`, `argument`, ...).
static TEXT_FIELDS: Local<[&'static str; 2]> = Local(RefCell::new(["", ""]));

struct Entry {
    key: (Layout, u64, Options),
    generator: &'static Generator<&'static shardid::State>,
}

/// The module's `WebAssembly.Memory`, for the typed-array view over [`OUT`].
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// The address of [`OUT`] in the module's memory.
#[wasm_bindgen(js_name = outPtr)]
pub fn out_ptr() -> *const u64 {
    OUT.0.as_ptr().cast()
}

fn put(values: &[u64]) {
    OUT.0.borrow_mut()[..values.len()].copy_from_slice(values);
}

/// The status of a core error, its number fields left in [`OUT`] and its text fields in
/// [`TEXT_FIELDS`], each at its position in [`ErrorKind::fields`].
fn fail(e: Error) -> u32 {
    let mut out = OUT.0.borrow_mut();
    let mut texts = TEXT_FIELDS.0.borrow_mut();
    for (i, (_, value)) in e.fields().enumerate().take(2) {
        match value {
            FieldValue::Int(v) => out[i] = v,
            FieldValue::Text(t) => texts[i] = t,
        }
    }
    e.kind().number()
}

/// `INVALID_ARGUMENT` for a layout or generator index that does not exist (a bug of the JS
/// side, or a forged handle).
fn bad_handle() -> u32 {
    *TEXT_FIELDS.0.borrow_mut() = ["handle", "is not a shardid Layout or Generator"];
    ErrorKind::InvalidArgument.number()
}

/// Text field `index` of the last error (see [`fail`]).
#[wasm_bindgen(js_name = errorText)]
pub fn error_text(index: u32) -> alloc::string::String {
    let texts = TEXT_FIELDS.0.borrow();
    texts.get(index as usize).copied().unwrap_or("").into()
}

fn status(result: Result<u64, Error>) -> u32 {
    match result {
        Ok(v) => {
            put(&[v]);
            0
        }
        Err(e) => fail(e),
    }
}

fn layout(index: u32) -> Option<Layout> {
    LAYOUTS.0.borrow().get(index as usize).copied()
}

fn register(layout: Layout) -> u32 {
    if let Err(e) = shardid::js::check_layout(&layout) {
        return fail(e);
    }
    let mut all = LAYOUTS.0.borrow_mut();
    let index = all.iter().position(|l| *l == layout).unwrap_or_else(|| {
        all.push(layout);
        all.len() - 1
    });
    put(&[index as u64]);
    0
}

/// Registers preset `index` of `Layout::PRESETS` (`PRESETS` in core.generated.js, whose
/// names the JS side looks up: no strings cross into the module); its index in OUT.
#[wasm_bindgen(js_name = layoutPreset)]
pub fn layout_preset(index: u32) -> u32 {
    Layout::PRESETS
        .get(index as usize)
        .map_or_else(bad_handle, |(_, layout)| register(*layout))
}

/// Validates and registers a custom layout (`order`: an index of `FieldOrder::ALL`, `ORDERS`
/// in core.generated.js, whose names the JS side looks up); its index in OUT.
#[wasm_bindgen(js_name = layoutNew)]
pub fn layout_new(
    epoch_ms: u64,
    unit_ms: u64,
    time_bits: u32,
    shard_bits: u32,
    sequence_bits: u32,
    order: u32,
    signed: bool,
) -> u32 {
    let width = |bits: u32| u8::try_from(bits).unwrap_or(u8::MAX);
    let Some(&order) = FieldOrder::ALL.get(order as usize) else {
        return bad_handle();
    };
    match Layout::builder()
        .epoch_ms(epoch_ms)
        .unit_ms(unit_ms)
        .bits(width(time_bits), width(shard_bits), width(sequence_bits))
        .order(order)
        .signed(signed)
        .build()
    {
        Ok(layout) => register(layout),
        Err(e) => fail(e),
    }
}

/// A layout's fields and limits, in OUT: epoch, unit, time/shard/sequence bits, order (its
/// index in `FieldOrder::ALL`), signed, max shard, max sequence, max ID, expiry; then from
/// OUT[11] where the fields lie (`shardid::js::field_positions`), with which `js/backend.js`
/// decodes single IDs.
#[wasm_bindgen(js_name = layoutInfo)]
pub fn layout_info(index: u32) -> u32 {
    let Some(l) = layout(index) else {
        return bad_handle();
    };
    put(&[
        l.epoch_ms(),
        l.unit_ms(),
        u64::from(l.time_bits()),
        u64::from(l.shard_bits()),
        u64::from(l.sequence_bits()),
        // The order's index in `FieldOrder::ALL` (`ORDERS` in core.generated.js).
        FieldOrder::ALL
            .iter()
            .position(|o| *o == l.order())
            .map_or(0, |i| i as u64),
        u64::from(l.signed()),
        l.max_shard(),
        l.max_sequence(),
        l.max_id(),
        l.expires_at_ms(),
    ]);
    OUT.0.borrow_mut()[11..].copy_from_slice(&shardid::js::field_positions(&l));
    0
}

/// The operations from an ID to a value: 0 validate, 1/2 scatter/gather decimal, 3/4
/// scatter/gather bits. The value in OUT.
#[wasm_bindgen(js_name = idOp)]
pub fn id_op(index: u32, op: u32, id: u64) -> u32 {
    let Some(l) = layout(index) else {
        return bad_handle();
    };
    // The decimal scatters' count of digits is the op's second byte (checked by the JS side).
    let digits =
        shardid::ScatterDigits::new(u64::from(op >> 8)).unwrap_or(shardid::ScatterDigits::ONE);
    status(match op & 0xff {
        0 => l.validate_id(id),
        1 => l.scatter_decimal_digits(id, digits),
        2 => l.gather_decimal_digits(id, digits),
        3 => l.scatter_bits(id),
        _ => l.gather_bits(id),
    })
}

/// The ID for a time, a shard and a sequence, in OUT.
#[wasm_bindgen]
pub fn compose(index: u32, timestamp_ms: u64, shard: u64, sequence: u64) -> u32 {
    let Some(l) = layout(index) else {
        return bad_handle();
    };
    status(l.compose(timestamp_ms, shard, sequence))
}

/// The smallest (`max` false) or largest ID of the unit holding `timestamp_ms`, in OUT.
#[wasm_bindgen(js_name = idAt)]
pub fn id_at(index: u32, timestamp_ms: u64, max: bool) -> u32 {
    let Some(l) = layout(index) else {
        return bad_handle();
    };
    status(if max {
        l.max_id_at(timestamp_ms)
    } else {
        l.min_id_at(timestamp_ms)
    })
}

/// `key % logical_shards`, checked against the layout, in OUT.
#[wasm_bindgen(js_name = shardForKey)]
pub fn shard_for_key(index: u32, key: u64, logical_shards: u64) -> u32 {
    let Some(l) = layout(index) else {
        return bad_handle();
    };
    status(l.shard_for_key(key, logical_shards))
}

/// Batch decoding's scratch memory. JavaScript writes the IDs straight into it and reads
/// the three result columns out of it through typed-array views, so a batch costs no
/// allocation and no copy by the glue: `WORDS` holds the columns (`f64` bits) followed by
/// binary IDs, `TEXT` the comma-separated decimal IDs.
static WORDS: Local<Vec<u64>> = Local(RefCell::new(Vec::new()));
static TEXT: Local<Vec<u8>> = Local(RefCell::new(Vec::new()));

/// Grows [`WORDS`] to at least `words` words and returns its address. The memory may grow,
/// which detaches every view of it: make views after this call.
#[wasm_bindgen(js_name = scratchWords)]
pub fn scratch_words(words: u32) -> *mut u64 {
    let mut scratch = WORDS.0.borrow_mut();
    if scratch.len() < words as usize {
        scratch.resize(words as usize, 0);
    }
    scratch.as_mut_ptr()
}

/// Grows [`TEXT`] to at least `bytes` bytes and returns its address, as [`scratch_words`].
#[wasm_bindgen(js_name = scratchText)]
pub fn scratch_text(bytes: u32) -> *mut u8 {
    let mut scratch = TEXT.0.borrow_mut();
    if scratch.len() < bytes as usize {
        scratch.resize(bytes as usize, 0);
    }
    scratch.as_mut_ptr()
}

/// Decodes the `count` IDs that follow the columns in [`WORDS`] (words `3 * count` on) into
/// its columns: timestamps in words `0..count`, shards, then sequences. Returns a status.
#[wasm_bindgen(js_name = decodeColumns)]
pub fn decode_columns(index: u32, count: u32) -> u32 {
    let n = count as usize;
    let mut words = WORDS.0.borrow_mut();
    let Some((columns, ids)) = words.get_mut(..4 * n).map(|w| w.split_at_mut(3 * n)) else {
        return bad_handle();
    };
    let ids = ids.iter().map(|&id| Some(id));
    decode_into(index, columns, ids)
}

/// As [`decode_columns`] for `count` IDs written in [`TEXT`]'s first `len` bytes as ASCII
/// digits separated by commas (a wrong count is an error).
#[wasm_bindgen(js_name = decodeColumnsText)]
pub fn decode_columns_text(index: u32, count: u32, len: u32) -> u32 {
    let n = count as usize;
    let text = TEXT.0.borrow();
    let mut words = WORDS.0.borrow_mut();
    let (Some(text), Some(columns)) = (text.get(..len as usize), words.get_mut(..3 * n)) else {
        return bad_handle();
    };
    let mut ids = shardid::DecimalList::new(text);
    let status = decode_into(index, columns, ids.by_ref());
    if status == 0 && ids.next().is_some() {
        return unparsed_id(n.saturating_sub(1)); // more IDs than `count`: one held a comma
    }
    status
}

/// The status of a text batch whose `OUT[0]`th ID did not parse (or held a comma): not an
/// error kind but a request to `js/backend.js`, which reports `INVALID_ID` with the text the
/// caller gave (the module never sees it as a string of its own).
const UNPARSED_ID: u32 = u32::MAX;

fn unparsed_id(index: usize) -> u32 {
    OUT.0.borrow_mut()[0] = index as u64;
    UNPARSED_ID
}

/// Decodes `ids` into the three columns of `out` (`3 * n` words for `n` IDs); `None` is an ID
/// that did not parse, and too few IDs is an error (see [`unparsed_id`]).
#[allow(clippy::cast_precision_loss)] // exact: registered layouts keep these below 2^53
fn decode_into(index: u32, out: &mut [u64], mut ids: impl Iterator<Item = Option<u64>>) -> u32 {
    let Some(l) = layout(index) else {
        return bad_handle();
    };
    let n = out.len() / 3;
    let (timestamps, rest) = out.split_at_mut(n);
    let (shards, sequences) = rest.split_at_mut(n);
    for (i, ((t, s), q)) in timestamps.iter_mut().zip(shards).zip(sequences).enumerate() {
        match ids.next().flatten().map(|id| l.decode(id)) {
            Some(Ok(p)) => {
                *t = (p.timestamp_ms as f64).to_bits();
                *s = (p.shard as f64).to_bits();
                *q = (p.sequence as f64).to_bits();
            }
            Some(Err(e)) => return fail(e),
            None => return unparsed_id(i),
        }
    }
    0
}

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: monotonic ms since the page (or worker) started.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
    /// `Date.now()`: the wall clock, Unix ms.
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    fn date_now() -> f64;
}

/// The page's clock: `performance.now()` anchored to `Date.now()`, never going backwards.
fn clock_ms() -> u64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // non-negative ms
    let ms = |v: f64| if v > 0.0 { v as u64 } else { 0 };
    ANCHOR.now_ms(ms(performance_now()), || ms(date_now()))
}

/// The clock the generators read, Unix ms.
#[wasm_bindgen(js_name = nowMs)]
#[allow(clippy::cast_precision_loss)] // Unix ms are far below 2^53
pub fn now_ms() -> f64 {
    clock_ms() as f64
}

/// Makes (or finds) the generator for a layout, shard and options; its index in OUT. Like
/// the core's `Generator::shared` (which needs `std`): every generator for one shard of one
/// ID space in this instance shares one state word, whatever its options.
#[wasm_bindgen(js_name = generatorNew)]
pub fn generator_new(
    index: u32,
    shard: u64,
    backwards_tolerance_ms: u64,
    max_borrow_units: u64,
) -> u32 {
    let Some(layout) = layout(index) else {
        return bad_handle();
    };
    let options = Options::new()
        .backwards_tolerance_ms(backwards_tolerance_ms)
        .max_borrow_units(max_borrow_units);
    let key = (layout, shard, options);
    let mut all = GENERATORS.0.borrow_mut();
    if let Some(i) = all.iter().position(|e| e.key == key) {
        put(&[i as u64]);
        return 0;
    }
    // A shard out of range gets no state: the core refuses it first.
    if shard > layout.max_shard() {
        return fail(Error::ShardOutOfRange {
            shard,
            max: layout.max_shard(),
        });
    }
    let state = STATES.0.borrow_mut().state(layout, shard);
    match Generator::with_state(state, layout, shard, options) {
        Ok(generator) => {
            all.push(Entry {
                key,
                generator: Box::leak(Box::new(generator)),
            });
            put(&[(all.len() - 1) as u64]);
            0
        }
        Err(e) => fail(e),
    }
}

/// Parses the ID written as the first `len` bytes of [`TEXT`] by the core's rule
/// ([`shardid::parse_decimal`]): 1 if it is not one, else 0 and its value in `OUT[0]`.
#[wasm_bindgen(js_name = parseId)]
pub fn parse_id(len: u32) -> u32 {
    let text = TEXT.0.borrow();
    match text.get(..len as usize).and_then(shardid::parse_decimal) {
        Some(id) => {
            OUT.0.borrow_mut()[0] = id;
            0
        }
        None => 1,
    }
}

/// Why a JavaScript `number` is not a 64-bit argument, by the core's rule
/// (`shardid::js::u64_from_number`): the index of the problem in `shardid::args::Problem::ALL`
/// (`PROBLEMS` in `core.generated.js`), or `u32::MAX` if it is one. Called on the error path:
/// the JS side takes safe integers without asking.
#[wasm_bindgen(js_name = numberProblem)]
pub fn number_problem(value: f64) -> u32 {
    match shardid::js::u64_from_number(value) {
        Ok(_) => u32::MAX,
        Err(problem) => shardid::args::Problem::ALL
            .iter()
            .position(|p| *p == problem)
            .and_then(|i| u32::try_from(i).ok())
            .unwrap_or(u32::MAX),
    }
}

/// The default backwards tolerance, for `js/backend.js`.
#[wasm_bindgen(js_name = defaultBackwardsToleranceMs)]
pub fn default_backwards_tolerance_ms() -> u64 {
    shardid::DEFAULT_BACKWARDS_TOLERANCE_MS
}

fn generator(index: u32) -> Option<&'static Generator<&'static shardid::State>> {
    GENERATORS
        .0
        .borrow()
        .get(index as usize)
        .map(|e| e.generator)
}

/// Spins until the clock reads `target_ms` (a page cannot sleep): at most one time unit.
fn wait_until(target_ms: u64) {
    while clock_ms() < target_ms {
        core::hint::spin_loop();
    }
}

/// One ID now (waiting for the next unit when this one is used up), in OUT.
#[wasm_bindgen(js_name = nextId)]
pub fn next_id(index: u32) -> u32 {
    let Some(g) = generator(index) else {
        return bad_handle();
    };
    status(g.next_id_with(clock_ms, wait_until))
}

/// One ID as if the clock read `now_ms`, in OUT.
#[wasm_bindgen(js_name = nextIdAt)]
pub fn next_id_at(index: u32, now_ms: u64) -> u32 {
    let Some(g) = generator(index) else {
        return bad_handle();
    };
    status(g.next_id_at(now_ms))
}

/// `n` IDs now; on an error an empty array, the status in OUT[11].
#[wasm_bindgen(js_name = nextIds)]
pub fn next_ids(index: u32, n: u32) -> Vec<u64> {
    let mut ids = vec![0u64; n as usize];
    let mut result = 0;
    match generator(index) {
        None => result = bad_handle(),
        Some(g) => {
            if let Err(e) = g.next_ids_with(&mut ids, clock_ms, wait_until) {
                result = fail(e);
            }
        }
    }
    OUT.0.borrow_mut()[11] = u64::from(result);
    if result != 0 {
        ids.clear();
    }
    ids
}

/// Up to `n` IDs as if the clock read `now_ms`; on an error an empty array, the status in
/// OUT[11].
#[wasm_bindgen(js_name = nextIdsAt)]
pub fn next_ids_at(index: u32, now_ms: u64, n: u32) -> Vec<u64> {
    let mut ids = vec![0u64; n as usize];
    let result = match generator(index) {
        None => bad_handle(),
        Some(g) => match g.next_ids_at(now_ms, &mut ids) {
            Ok(written) => {
                ids.truncate(written);
                0
            }
            Err(e) => fail(e),
        },
    };
    OUT.0.borrow_mut()[11] = u64::from(result);
    if result != 0 {
        ids.clear();
    }
    ids
}
