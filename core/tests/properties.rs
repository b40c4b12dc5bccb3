//! Property tests: random layouts round-trip, random clock traces never break monotonicity.
use proptest::prelude::*;
use shardid::{Error, FieldOrder, Generator, Layout, Options};

prop_compose! {
    fn layout_specs()(
        time_bits in 2u8..=50,
        shard_bits in 0u8..=16,
        sequence_bits in 0u8..=16,
        unit_ms in prop_oneof![Just(1u64), Just(10), 1u64..1000],
        epoch_ms in 0u64..2_000_000_000_000,
        sonyflake_order in any::<bool>(),
        signed in any::<bool>(),
    ) -> Option<Layout> {
        Layout::builder()
            .epoch_ms(epoch_ms)
            .unit_ms(unit_ms)
            .bits(time_bits, shard_bits, sequence_bits)
            .order(if sonyflake_order { FieldOrder::TimeSequenceShard } else { FieldOrder::TimeShardSequence })
            .signed(signed)
            .build()
            .ok()
    }
}

/// Valid layouts only: the widths of random ones often add up to more than 64.
fn layouts() -> impl Strategy<Value = Layout> {
    layout_specs().prop_filter_map("fields wider than 64 bits", |layout| layout)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn compose_then_decode_round_trips(layout in layouts(), t in any::<u64>(), shard in any::<u64>(), seq in any::<u64>()) {
        let span = layout.expires_at_ms() - layout.epoch_ms() + 1;
        let t = layout.epoch_ms() + t % span;
        let shard = shard % (layout.max_shard() + 1);
        let seq = seq % (layout.max_sequence() + 1);
        let id = layout.compose(t, shard, seq).unwrap();
        prop_assert!(id <= layout.max_id());
        prop_assert!(layout.min_id_at(t).unwrap() <= id && id <= layout.max_id_at(t).unwrap());
        let parts = layout.decode(id).unwrap();
        prop_assert_eq!(parts.shard, shard);
        prop_assert_eq!(parts.sequence, seq);
        prop_assert_eq!(parts.timestamp_ms, t - (t - layout.epoch_ms()) % layout.unit_ms());
        prop_assert_eq!(layout.gather_bits(layout.scatter_bits(id).unwrap()), Ok(id));
        if let Ok(s) = layout.scatter_decimal(id) {
            prop_assert_eq!(layout.gather_decimal(s), Ok(id));
        }
    }

    #[test]
    fn decode_then_compose_round_trips(layout in layouts(), id in any::<u64>()) {
        match layout.decode(id) {
            Ok(p) => prop_assert_eq!(layout.compose(p.timestamp_ms, p.shard, p.sequence), Ok(id)),
            Err(e) => {
                prop_assert_eq!(e, Error::InvalidId { id });
                prop_assert!(id > layout.max_id());
            }
        }
    }

    #[test]
    fn random_clock_traces_give_strictly_increasing_ids(
        steps in prop::collection::vec((-30i64..40, 1usize..6), 1..200),
        tolerance in 0u64..20,
        borrow in 0u64..3,
        shard in 0u64..4,
    ) {
        let layout = Layout::builder().epoch_ms(1_000_000).bits(30, 2, 2).build().unwrap();
        let options = Options::new().backwards_tolerance_ms(tolerance).max_borrow_units(borrow);
        let g = Generator::with_options(layout, shard, options).unwrap();
        let mut now = 1_100_000i64;
        let mut last: Option<u64> = None;
        let mut buf = [0u64; 5];
        for (delta, n) in steps {
            now += delta;
            let now = now.cast_unsigned();
            let got: Result<Vec<u64>, Error> = if n == 1 {
                g.next_id_at(now).map(|id| vec![id])
            } else {
                g.next_ids_at(now, &mut buf[..n]).map(|k| buf[..k].to_vec())
            };
            match got {
                Ok(ids) => for id in ids {
                    if let Some(prev) = last { prop_assert!(id > prev, "{id} after {prev}"); }
                    let p = layout.decode(id).unwrap();
                    prop_assert_eq!(p.shard, shard);
                    // Never further ahead of the clock than the tolerance or the borrow allow.
                    let ahead = p.timestamp_ms.saturating_sub(now);
                    prop_assert!(ahead <= tolerance.max(borrow) + 1, "{ahead} ms ahead");
                    last = Some(id);
                },
                Err(Error::SequenceExhausted { retry_at_ms }) => prop_assert!(retry_at_ms > now),
                Err(Error::ClockMovedBackwards { behind_ms, tolerance_ms }) => {
                    prop_assert!(behind_ms > tolerance_ms);
                }
                Err(e) => prop_assert!(false, "unexpected {e:?}"),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn decimal_scatter_by_k_digits_round_trips(layout in layouts(), id in any::<u64>(), k in 1u64..=3) {
        let digits = shardid::ScatterDigits::new(k).unwrap();
        if let Ok(scattered) = layout.scatter_decimal_digits(id, digits) {
            prop_assert_eq!(scattered.to_string().len(), id.to_string().len());
            prop_assert_eq!(layout.gather_decimal_digits(scattered, digits), Ok(id));
        }
    }
}
