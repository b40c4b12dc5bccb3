//! Layouts from arbitrary numbers: building never panics, and a layout that builds decodes
//! every ID it accepts back to the same ID (decode ∘ compose and compose ∘ decode), keeps its
//! bounds ordered, and refuses what it cannot hold instead of wrapping.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shardid::{FieldOrder, Layout};

#[derive(Arbitrary, Debug)]
struct Input {
    epoch_ms: u64,
    unit_ms: u64,
    bits: (u8, u8, u8),
    time_sequence_shard: bool,
    signed: bool,
    id: u64,
    timestamp_ms: u64,
    shard: u64,
    sequence: u64,
}

fuzz_target!(|input: Input| {
    let order = if input.time_sequence_shard {
        FieldOrder::TimeSequenceShard
    } else {
        FieldOrder::TimeShardSequence
    };
    let (time, shard_bits, sequence_bits) = input.bits;
    let Ok(layout) = Layout::builder()
        .epoch_ms(input.epoch_ms)
        .unit_ms(input.unit_ms)
        .bits(time, shard_bits, sequence_bits)
        .order(order)
        .signed(input.signed)
        .build()
    else {
        return;
    };
    let top = if layout.signed() {
        i64::MAX as u64
    } else {
        u64::MAX
    };
    assert!(layout.max_id() <= top);
    // Any ID: decodes only if the layout can hold it, and composes back to itself.
    match layout.decode(input.id) {
        Ok(parts) => {
            assert!(input.id <= layout.max_id());
            let again = layout.compose(parts.timestamp_ms, parts.shard, parts.sequence);
            assert_eq!(again, Ok(input.id), "{layout:?} {parts:?}");
        }
        Err(_) => assert!(layout.validate_id(input.id).is_err()),
    }
    // Any parts: compose only what fits, and decode gives them back (time floored to its unit).
    if let Ok(id) = layout.compose(input.timestamp_ms, input.shard, input.sequence) {
        let parts = layout.decode(id).expect("a composed ID decodes");
        assert_eq!((parts.shard, parts.sequence), (input.shard, input.sequence));
        assert!(parts.timestamp_ms <= input.timestamp_ms);
        assert!(input.timestamp_ms - parts.timestamp_ms < layout.unit_ms());
        let (min, max) = (
            layout.min_id_at(input.timestamp_ms),
            layout.max_id_at(input.timestamp_ms),
        );
        assert!(min.unwrap() <= id && id <= max.unwrap());
    }
});
