//! The real clock at the cap. Its own test binary, so no other test's threads compete for the
//! two cores while it measures whether every unit is used to its end.
mod common;

use common::tiny;
use shardid::Generator;

#[test]
fn next_id_waits_for_the_next_unit_and_reaches_the_cap() {
    // 2-bit sequence: 4 IDs per ms. Ask for 400 from the clock: they need about 100 ms.
    let g = Generator::new(tiny(), 3).unwrap();
    let mut out = vec![0u64; 400];
    g.next_ids(&mut out).unwrap();
    let single: Vec<u64> = (0..400).map(|_| g.next_id().unwrap()).collect();
    let all: Vec<u64> = out.into_iter().chain(single).collect();
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    // Every unit that was entered is used to its end: no sequence space is skipped while busy.
    let mut per_unit = std::collections::BTreeMap::<u64, u64>::new();
    for id in &all {
        *per_unit
            .entry(tiny().decode(*id).unwrap().timestamp_ms)
            .or_default() += 1;
    }
    let full = per_unit.values().filter(|&&n| n == 4).count();
    assert!(full >= per_unit.len() - 2, "units: {per_unit:?}");
}
