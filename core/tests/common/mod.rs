//! Fixtures shared by the generator and segment test binaries (each compiles the module
//! whole and uses some of it).
#![allow(dead_code)]
use shardid::Layout;

/// A fixed "now": 2023-11-14T22:13:20Z.
pub const T0: u64 = 1_700_000_000_000;

/// A layout with a 2-bit sequence: 4 IDs per millisecond, so exhaustion takes four IDs.
pub fn tiny() -> Layout {
    Layout::builder()
        .epoch_ms(T0 - 1_000)
        .bits(41, 10, 2)
        .build()
        .unwrap()
}

/// A segment of one server's numbers: `count` from `first`.
pub fn seg(first: u64, count: u64) -> shardid::segment::Segment {
    shardid::segment::Segment {
        first,
        count,
        stride: 1,
    }
}
