//! The registry of generator states: one state word per ID space and shard.
#![cfg(feature = "alloc")]

use shardid::{Generator, Layout, Options, Registry};

#[test]
fn one_state_per_id_space_and_shard() {
    let mut registry = Registry::new();
    let a = registry.state(Layout::TWITTER, 1);
    assert!(core::ptr::eq(a, registry.state(Layout::TWITTER, 1)));
    assert!(!core::ptr::eq(a, registry.state(Layout::TWITTER, 2)));
    // Signedness only bounds the space: the same IDs, so the same state.
    let unsigned = Layout::builder()
        .epoch_ms(Layout::TWITTER.epoch_ms())
        .bits(41, 10, 12)
        .signed(false)
        .build()
        .unwrap();
    assert!(core::ptr::eq(a, registry.state(unsigned, 1)));
    // Two generators on the registry's word never repeat each other's IDs.
    let g1 = Generator::with_state(a, Layout::TWITTER, 1, Options::new()).unwrap();
    let g2 =
        Generator::with_state(registry.state(unsigned, 1), unsigned, 1, Options::new()).unwrap();
    let t = 1_700_000_000_000;
    let (x, y) = (g1.next_id_at(t).unwrap(), g2.next_id_at(t).unwrap());
    assert!(y > x);
}
