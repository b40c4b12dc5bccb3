//! Fixtures shared by the generator test binaries.
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
