//! Layouts: presets, published IDs, compose/decode, range bounds, scattering, bad input.
use shardid::{Error, FieldOrder, Layout, Parts};

/// 2016-04-30T11:18:25.796Z: Discord's documented example snowflake.
const DISCORD_DOC_ID: u64 = 175_928_847_299_117_063;

#[test]
fn discord_documented_example_decodes() {
    let parts = Layout::DISCORD.decode(DISCORD_DOC_ID).unwrap();
    assert_eq!(
        parts,
        Parts {
            timestamp_ms: 1_462_015_105_796,
            shard: (1 << 5),
            sequence: 7
        }
    );
    assert_eq!(
        Layout::DISCORD.compose(1_462_015_105_796, 32, 7),
        Ok(DISCORD_DOC_ID)
    );
}

#[test]
fn twitter_documented_tweet_decodes() {
    // Tweet 1050118621198921728, created "Wed Oct 10 20:19:24 +0000 2018" (Twitter API docs).
    let parts = Layout::TWITTER.decode(1_050_118_621_198_921_728).unwrap();
    assert_eq!(parts.timestamp_ms / 1000, 1_539_202_764);
}

#[test]
fn instagram_formula_matches_the_published_sql() {
    // next_id(): result := (now_millis - our_epoch) << 23; result := result | (shard_id << 10);
    // result := result | (seq_id % 1024)
    let now_ms = 1_700_000_000_123u64;
    let expected = ((now_ms - 1_314_220_021_721) << 23) | (5 << 10) | (5001 % 1024);
    assert_eq!(
        Layout::INSTAGRAM.compose(now_ms, 5, 5001 % 1024),
        Ok(expected)
    );
}

#[test]
fn preset_expiry_dates() {
    assert_eq!(Layout::INSTAGRAM.expires_at_ms(), 2_413_731_649_496); // 2046-06-27T17:00:49.496Z
    assert_eq!(Layout::TWITTER.expires_at_ms(), 3_487_858_230_208); // 2080-07-10
    assert_eq!(Layout::DISCORD.expires_at_ms(), 5_818_116_911_103); // 2154-05-15
    assert_eq!(Layout::SONYFLAKE.expires_at_ms(), 6_907_087_738_879); // 2188-11-16
}

#[test]
fn instagram_never_makes_a_negative_bigint() {
    let l = Layout::INSTAGRAM;
    let last = l.max_id_at(l.expires_at_ms()).unwrap();
    assert_eq!(last, i64::MAX.cast_unsigned());
    assert_eq!(
        l.compose(l.expires_at_ms() + 1, 0, 0),
        Err(Error::TimestampPastExpiry {
            timestamp_ms: l.expires_at_ms() + 1,
            expires_at_ms: l.expires_at_ms()
        })
    );
    assert_eq!(l.decode(1 << 63), Err(Error::InvalidId { id: 1 << 63 }));
}

#[test]
fn sonyflake_keeps_the_machine_in_the_low_bits_and_counts_10ms() {
    let l = Layout::SONYFLAKE;
    let id = l.compose(1_409_529_600_000 + 12_345, 0xABCD, 0x12).unwrap();
    assert_eq!(id & 0xFFFF, 0xABCD);
    assert_eq!((id >> 16) & 0xFF, 0x12);
    assert_eq!(id >> 24, 1234); // 12_345 ms is 1234 whole 10 ms units
    let parts = l.decode(id).unwrap();
    assert_eq!(parts.timestamp_ms, 1_409_529_600_000 + 12_340);
}

#[test]
fn range_bounds_enclose_every_id_of_the_unit() {
    let l = Layout::TWITTER;
    let t = 1_600_000_000_000;
    let (min, max) = (l.min_id_at(t).unwrap(), l.max_id_at(t).unwrap());
    assert_eq!(min, l.compose(t, 0, 0).unwrap());
    assert_eq!(max, l.compose(t, 1023, 4095).unwrap());
    assert_eq!(l.max_id_at(t - 1).unwrap() + 1, min);
    assert_eq!(l.min_id_at(t + 1).unwrap(), max + 1);
}

#[test]
fn compose_rejects_each_out_of_range_field() {
    let l = Layout::INSTAGRAM;
    let t = 1_700_000_000_000;
    assert_eq!(
        l.compose(t, 8192, 0),
        Err(Error::ShardOutOfRange {
            shard: 8192,
            max: 8191
        })
    );
    assert_eq!(
        l.compose(t, 0, 1024),
        Err(Error::SequenceOutOfRange {
            sequence: 1024,
            max: 1023
        })
    );
    assert_eq!(
        l.compose(1_000, 0, 0),
        Err(Error::TimestampBeforeEpoch {
            timestamp_ms: 1_000,
            epoch_ms: 1_314_220_021_721
        })
    );
}

#[test]
fn custom_layouts_are_validated() {
    let invalid = |b: shardid::LayoutBuilder| match b.build() {
        Err(Error::InvalidLayout { reason }) => reason,
        other => panic!("expected InvalidLayout, got {other:?}"),
    };
    assert!(invalid(Layout::builder().bits(0, 10, 10)).contains("time field"));
    assert!(invalid(Layout::builder().bits(42, 12, 12)).contains("more than 64"));
    assert!(invalid(Layout::builder().bits(1, 53, 10)).contains("sign"));
    assert!(invalid(Layout::builder().bits(41, 10, 12).unit_ms(0)).contains("time unit"));
    assert!(
        invalid(
            Layout::builder()
                .bits(63, 0, 0)
                .signed(false)
                .epoch_ms(u64::MAX - 10)
        )
        .contains("overflows")
    );
    let ok = Layout::builder()
        .epoch_ms(1_600_000_000_000)
        .unit_ms(100)
        .bits(40, 4, 19)
        .order(FieldOrder::TimeSequenceShard)
        .build()
        .unwrap();
    assert_eq!((ok.max_shard(), ok.max_sequence()), (15, (1 << 19) - 1));
}

#[test]
fn shard_for_key_is_instagrams_modulo() {
    let l = Layout::INSTAGRAM;
    assert_eq!(l.shard_for_key(31_341, 2_000), Ok(1_341)); // the blog post's example
    assert_eq!(
        l.shard_for_key(7, 0),
        Err(Error::InvalidShardCount {
            count: 0,
            max: 8192
        })
    );
    assert_eq!(
        l.shard_for_key(7, 8193),
        Err(Error::InvalidShardCount {
            count: 8193,
            max: 8192
        })
    );
    assert_eq!(l.shard_for_key(u64::MAX, 8192), Ok(8191));
}

#[test]
fn decimal_scatter_moves_the_last_digit_second() {
    let l = Layout::TWITTER;
    assert_eq!(l.scatter_decimal(1_234_567), Ok(1_723_456));
    assert_eq!(l.gather_decimal(1_723_456), Ok(1_234_567));
    assert_eq!(l.scatter_decimal(42), Ok(42));
    assert_eq!(l.scatter_decimal(100), Ok(100));
    assert_eq!(l.scatter_decimal(109), Ok(190));
    // 19 digits whose scattered form exceeds i64::MAX.
    let id = 9_223_372_036_854_775_807; // i64::MAX becomes 9722337203685477580
    assert_eq!(l.scatter_decimal(id), Err(Error::ScatterOverflow { id }));
    assert_eq!(
        l.scatter_decimal(1 << 63),
        Err(Error::InvalidId { id: 1 << 63 })
    );
    let id = 9_000_000_000_000_000_009;
    assert_eq!(l.scatter_decimal(id), Err(Error::ScatterOverflow { id }));
    // Unsigned 64-bit: 20-digit values overflow u64.
    let d = Layout::DISCORD;
    assert_eq!(
        d.scatter_decimal(18_446_744_073_709_551_609),
        Err(Error::ScatterOverflow {
            id: 18_446_744_073_709_551_609
        })
    );
    assert_eq!(
        d.gather_decimal(17_999_999_999_999_999_999),
        Err(Error::InvalidId {
            id: 17_999_999_999_999_999_999
        })
    );
}

#[test]
fn decimal_scatter_spreads_consecutive_ids() {
    let l = Layout::TWITTER;
    let first = l.compose(1_700_000_000_000, 1, 0).unwrap();
    let leading: std::collections::BTreeSet<u64> = (first..first + 10)
        .map(|id| l.scatter_decimal(id).unwrap() / 10u64.pow(17))
        .collect();
    assert_eq!(
        leading.len(),
        10,
        "ten consecutive IDs start with ten different prefixes"
    );
}

#[test]
fn bit_scatter_stays_in_range_and_spreads() {
    for l in [
        Layout::INSTAGRAM,
        Layout::TWITTER,
        Layout::DISCORD,
        Layout::SONYFLAKE,
    ] {
        let id_bits = 64 - l.max_id().leading_zeros();
        let top = |id: u64| id >> (id_bits - 8);
        let ids: Vec<u64> = (0..256)
            .map(|ms| {
                l.compose(1_700_000_000_000 + ms * l.unit_ms(), 3, 0)
                    .unwrap()
            })
            .collect();
        let tops: std::collections::BTreeSet<u64> = ids
            .iter()
            .map(|&id| top(l.scatter_bits(id).unwrap()))
            .collect();
        assert_eq!(
            tops.len(),
            256,
            "{l:?}: 256 consecutive units reach 256 ranges"
        );
        for &id in &ids {
            let s = l.scatter_bits(id).unwrap();
            assert!(s <= l.max_id());
            assert_eq!(l.gather_bits(s), Ok(id));
        }
        assert_eq!(
            l.scatter_bits(l.max_id()).map(|s| s <= l.max_id()),
            Ok(true)
        );
    }
}

#[test]
fn errors_have_stable_codes_and_say_what_is_wrong() {
    let e = Error::ClockMovedBackwards {
        behind_ms: 1500,
        tolerance_ms: 1000,
    };
    assert_eq!(e.code(), "CLOCK_MOVED_BACKWARDS");
    assert_eq!(
        e.to_string(),
        "clock moved backwards: 1500 ms behind the last issued ID (tolerance 1000 ms)"
    );
    let e: &dyn core::error::Error = &Error::InvalidId { id: 5 };
    assert_eq!(e.to_string(), "5 is not a valid ID for this layout");
}

#[test]
fn presets_and_orders_have_one_name_each() {
    use shardid::FieldOrder;
    for (name, layout) in Layout::PRESETS {
        assert_eq!(Layout::preset(name), Ok(layout));
        assert_eq!(Layout::preset(&name.to_lowercase()), Ok(layout));
        assert_eq!(layout.preset_name(), Some(name));
    }
    assert_eq!(
        Layout::preset("snowflake").unwrap_err().code(),
        "INVALID_LAYOUT"
    );
    let custom = Layout::builder().bits(41, 10, 12).build().unwrap();
    assert_eq!(custom.preset_name(), None);
    for order in FieldOrder::ALL {
        assert_eq!(FieldOrder::from_name(order.name()), Ok(order));
    }
    let err = FieldOrder::from_name("time|shard|sequence").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid layout: the order must be \"time_shard_sequence\" or \"time_sequence_shard\""
    );
}

#[test]
fn decimal_scatter_by_two_and_three_digits() {
    use shardid::ScatterDigits;
    let l = Layout::TWITTER;
    let two = ScatterDigits::new(2).unwrap();
    let three = ScatterDigits::new(3).unwrap();
    // The last k digits move to just after the first: TiDB's 100- and 1,000-range variants.
    assert_eq!(l.scatter_decimal_digits(1_234_567, two), Ok(1_672_345));
    assert_eq!(l.gather_decimal_digits(1_672_345, two), Ok(1_234_567));
    assert_eq!(l.scatter_decimal_digits(1_234_567, three), Ok(1_567_234));
    assert_eq!(l.gather_decimal_digits(1_567_234, three), Ok(1_234_567));
    // Leading zeros of the moved digits are kept: the digit count never changes.
    assert_eq!(l.scatter_decimal_digits(1_234_507, two), Ok(1_072_345));
    assert_eq!(l.gather_decimal_digits(1_072_345, two), Ok(1_234_507));
    // Fewer than k + 2 digits: unchanged.
    assert_eq!(l.scatter_decimal_digits(999, two), Ok(999));
    assert_eq!(l.scatter_decimal_digits(1000, two), Ok(1000));
    assert_eq!(l.scatter_decimal_digits(9999, three), Ok(9999));
    // One digit is scatter_decimal.
    assert_eq!(
        l.scatter_decimal_digits(1_234_567, ScatterDigits::ONE),
        l.scatter_decimal(1_234_567)
    );
    // Only 1, 2 and 3.
    assert_eq!(ScatterDigits::new(0), None);
    assert_eq!(ScatterDigits::new(4), None);
    assert_eq!(ScatterDigits::new(u64::MAX), None);
    // Overflow past the layout's largest ID.
    let id = 9_223_372_036_854_775_807;
    assert_eq!(
        l.scatter_decimal_digits(id, three),
        Err(Error::ScatterOverflow { id })
    );
}

#[test]
fn decimal_scatter_by_k_digits_spreads_consecutive_ids_over_10_to_the_k_ranges() {
    use shardid::ScatterDigits;
    let l = Layout::TWITTER;
    for (k, ranges) in [(1u64, 10usize), (2, 100), (3, 1000)] {
        let digits = ScatterDigits::new(k).unwrap();
        let base = 1_541_815_603_606_036_480u64;
        let mut leading = std::collections::HashSet::new();
        for id in base..base + 5_000 {
            let s = l.scatter_decimal_digits(id, digits).unwrap();
            assert_eq!(l.gather_decimal_digits(s, digits), Ok(id));
            assert_eq!(s.to_string().len(), id.to_string().len());
            leading.insert(s / 10u64.pow(18 - u32::try_from(k).unwrap()));
        }
        assert_eq!(leading.len(), ranges, "k = {k}");
    }
}

#[test]
fn runs_out_soon_is_at_most_five_years_ahead() {
    use shardid::RUN_OUT_WARNING_MS;
    assert_eq!(RUN_OUT_WARNING_MS, 5 * 365 * 86_400_000 + 5 * 20_952_000); // 0.2425 of a day a year
    let l = Layout::INSTAGRAM;
    let end = l.expires_at_ms();
    // The boundary: exactly five years ahead warns, a millisecond more does not.
    assert!(l.runs_out_soon(end - RUN_OUT_WARNING_MS));
    assert!(!l.runs_out_soon(end - RUN_OUT_WARNING_MS - 1));
    assert!(l.runs_out_soon(end));
    assert!(l.runs_out_soon(end + 1), "a layout that has run out");
    assert!(l.runs_out_soon(u64::MAX));
    assert!(!l.runs_out_soon(0));
    // Sonyflake's 10 ms units: the end of its last unit, not its start, is the run-out date.
    let s = Layout::SONYFLAKE;
    assert!(!s.runs_out_soon(s.expires_at_ms() - RUN_OUT_WARNING_MS - 1));
    assert!(s.runs_out_soon(s.expires_at_ms() - RUN_OUT_WARNING_MS));
}
