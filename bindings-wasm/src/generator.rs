//! The generator functions (the same names and behaviour as the Node addon's), with the
//! page's clock.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;

use js_sys::BigUint64Array;
use shardid::{Anchor, Error, Generator, Layout, Options};
use wasm_bindgen::prelude::*;

use crate::Local;
use crate::args::{Arg, Class, OrThrow, error, u64_arg};
use crate::layout::{layout, number};

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: monotonic ms since the page (or worker) started.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

static ANCHOR: Anchor = Anchor::new();

/// The page's clock as the generators read it: `performance.now()` anchored to `Date.now()`,
/// Unix ms that never go backwards.
fn clock_ms() -> u64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // non-negative ms
    let ms = |v: f64| v.max(0.0) as u64;
    ANCHOR.now_ms(ms(performance_now()), || ms(js_sys::Date::now()))
}

/// The clock the generators read: Unix ms, monotonic, anchored to the wall clock.
#[wasm_bindgen(js_name = nowMs)]
pub fn now_ms() -> f64 {
    number(clock_ms())
}

struct Entry {
    /// The ID space: the layout with `signed` cleared (signedness only bounds the space).
    space: Layout,
    layout: Layout,
    shard: u64,
    options: Options,
    generator: &'static Generator,
}

/// One generator per (ID space, shard) in this module instance, addressed by index.
static GENERATORS: Local<Vec<Entry>> = Local(RefCell::new(Vec::new()));

fn space(l: Layout) -> Layout {
    Layout::builder()
        .epoch_ms(l.epoch_ms())
        .unit_ms(l.unit_ms())
        .bits(l.time_bits(), l.shard_bits(), l.sequence_bits())
        .order(l.order())
        .signed(false)
        .build()
        .unwrap_or(l)
}

fn generator(index: u32) -> Result<&'static Generator, JsValue> {
    GENERATORS
        .0
        .borrow()
        .get(index as usize)
        .map(|e| e.generator)
        .ok_or_else(|| error(Class::Type, "INVALID_ARGUMENT", "not a shardid Generator"))
}

/// Makes (or finds) the generator for a layout, shard and options. A second generator for the
/// same shard shares the first one's state; with other options it is refused (one state, one
/// policy).
#[wasm_bindgen(js_name = generatorNew)]
pub fn generator_new(
    layout_index: u32,
    shard: &JsValue,
    backwards_tolerance_ms: &JsValue,
    max_borrow_units: &JsValue,
) -> Result<u32, JsValue> {
    let layout = layout(layout_index)?;
    let shard = u64_arg(shard, "shard", Arg::Shard)?;
    let mut options = Options::new();
    if !backwards_tolerance_ms.is_undefined() && !backwards_tolerance_ms.is_null() {
        options = options.backwards_tolerance_ms(u64_arg(
            backwards_tolerance_ms,
            "backwardsToleranceMs",
            Arg::Other,
        )?);
    }
    if !max_borrow_units.is_undefined() && !max_borrow_units.is_null() {
        options =
            options.max_borrow_units(u64_arg(max_borrow_units, "maxBorrowUnits", Arg::Other)?);
    }
    let space = space(layout);
    {
        let mut all = GENERATORS.0.borrow_mut();
        for (index, e) in all.iter().enumerate() {
            if e.space == space && e.shard == shard {
                if e.layout == layout && e.options == options {
                    return u32::try_from(index).map_err(|_| {
                        error(Class::Range, "INVALID_ARGUMENT", "too many generators")
                    });
                }
                return Err(error(
                    Class::Range,
                    "INVALID_ARGUMENT",
                    "a generator for this layout and shard already exists with other options: reuse it",
                ));
            }
        }
        let generator: &'static Generator = Box::leak(Box::new(
            Generator::with_options(layout, shard, options).or_throw()?,
        ));
        all.push(Entry {
            space,
            layout,
            shard,
            options,
            generator,
        });
        u32::try_from(all.len() - 1)
            .map_err(|_| error(Class::Range, "INVALID_ARGUMENT", "too many generators"))
    }
}

/// Waits (spinning: a page has no sleep) until the clock reads `target_ms`: at most one
/// time unit, when a unit's sequence is used up.
fn wait_until(target_ms: u64) {
    while clock_ms() < target_ms {
        core::hint::spin_loop();
    }
}

/// One ID now, waiting for the next time unit when this one is used up.
#[wasm_bindgen(js_name = nextId)]
pub fn next_id(generator_index: u32) -> Result<u64, JsValue> {
    let g = generator(generator_index)?;
    loop {
        match g.next_id_at(clock_ms()) {
            Err(Error::SequenceExhausted { retry_at_ms }) => wait_until(retry_at_ms),
            result => return result.or_throw(),
        }
    }
}

/// One ID now, as a decimal string.
#[wasm_bindgen(js_name = nextIdString)]
pub fn next_id_string(generator_index: u32) -> Result<js_sys::JsString, JsValue> {
    // JavaScript formats the number: Rust's formatting would double the module's size.
    Ok(js_sys::BigInt::from(next_id(generator_index)?).to_string(10)?)
}

/// One ID as if the clock read `now`.
#[wasm_bindgen(js_name = nextIdAt)]
pub fn next_id_at(generator_index: u32, now: &JsValue) -> Result<u64, JsValue> {
    let g = generator(generator_index)?;
    g.next_id_at(u64_arg(now, "now", Arg::Timestamp)?)
        .or_throw()
}

fn count(n: &JsValue) -> Result<usize, JsValue> {
    let n = u64_arg(n, "n", Arg::Other)?;
    usize::try_from(n).map_err(|_| error(Class::Range, "INVALID_ARGUMENT", "n is too large"))
}

/// `n` IDs now.
#[wasm_bindgen(js_name = nextIds)]
pub fn next_ids(generator_index: u32, n: &JsValue) -> Result<BigUint64Array, JsValue> {
    let g = generator(generator_index)?;
    let mut ids = vec![0u64; count(n)?];
    let mut filled = 0;
    while filled < ids.len() {
        match g.next_ids_at(clock_ms(), &mut ids[filled..]) {
            Ok(k) => filled += k,
            Err(Error::SequenceExhausted { retry_at_ms }) => wait_until(retry_at_ms),
            Err(e) => return Err(crate::args::core_error(e)),
        }
    }
    Ok(BigUint64Array::from(ids.as_slice()))
}

/// Up to `n` IDs as if the clock read `now`, in one step.
#[wasm_bindgen(js_name = nextIdsAt)]
pub fn next_ids_at(
    generator_index: u32,
    now: &JsValue,
    n: &JsValue,
) -> Result<BigUint64Array, JsValue> {
    let g = generator(generator_index)?;
    let now = u64_arg(now, "now", Arg::Timestamp)?;
    let mut ids = vec![0u64; count(n)?];
    let written = g.next_ids_at(now, &mut ids).or_throw()?;
    Ok(BigUint64Array::from(&ids[..written]))
}
