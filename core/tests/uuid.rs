//! The UUIDv7 bridge: round trip and order over random layouts and IDs, the edges, and every
//! refusal.
use proptest::prelude::*;
use shardid::uuid::{self, from_uuid, from_uuid_text, to_uuid, to_uuid_text};
use shardid::{Error, FieldOrder, Layout};

prop_compose! {
    fn layout_specs()(
        time_bits in 1u8..=64,
        shard_bits in 0u8..=32,
        sequence_bits in 0u8..=32,
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

fn layouts() -> impl Strategy<Value = Layout> {
    prop_oneof![
        (0usize..4).prop_map(|i| Layout::PRESETS[i].1),
        layout_specs().prop_filter_map("fields wider than 64 bits", |l| l),
    ]
}

fn reason(e: Error) -> &'static str {
    match e {
        Error::InvalidArgument { argument, reason } => {
            assert_eq!(argument, "uuid");
            reason
        }
        other => panic!("expected INVALID_ARGUMENT, got {other:?}"),
    }
}

/// An ID of the layout whose time fits UUIDv7's 48 bits, or None.
fn fitting(layout: &Layout, raw: u64) -> Option<u64> {
    let id = raw % layout.max_id().saturating_add(1).max(1);
    let id = if layout.max_id() == u64::MAX { raw } else { id };
    (layout.decode(id).ok()?.timestamp_ms <= uuid::MAX_UNIX_TS_MS).then_some(id)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn round_trips(layout in layouts(), raw in any::<u64>()) {
        if let Some(id) = fitting(&layout, raw) {
            let u = to_uuid(&layout, id).unwrap();
            prop_assert_eq!(u[6] >> 4, 7, "version");
            prop_assert_eq!(u[8] >> 6, 0b10, "variant");
            let ts = u64::from_be_bytes([0, 0, u[0], u[1], u[2], u[3], u[4], u[5]]);
            prop_assert_eq!(ts, layout.decode(id).unwrap().timestamp_ms);
            prop_assert_eq!(from_uuid(Some(&layout), &u), Ok(id));
            let text = uuid::format(&u);
            prop_assert_eq!(uuid::parse(text.as_str()), Ok(u));
            prop_assert_eq!(uuid::parse(&text.as_str().to_uppercase()), Ok(u));
            if layout.preset_name().is_some() {
                prop_assert_eq!(from_uuid(None, &u), Ok(id));
            } else {
                prop_assert_eq!(from_uuid(None, &u).map_err(reason), Err(uuid::CUSTOM_NEEDS_LAYOUT));
            }
        }
    }

    #[test]
    fn keeps_order(layout in layouts(), a in any::<u64>(), b in any::<u64>()) {
        if let (Some(a), Some(b)) = (fitting(&layout, a), fitting(&layout, b)) {
            let (ua, ub) = (to_uuid(&layout, a).unwrap(), to_uuid(&layout, b).unwrap());
            prop_assert_eq!(ua.cmp(&ub), a.cmp(&b));
            prop_assert_eq!(uuid::format(&ua).as_str().cmp(uuid::format(&ub).as_str()), a.cmp(&b));
        }
    }

    /// Random UUIDv7s (random 74 bits) are refused, never read as an ID of a preset.
    #[test]
    fn random_uuidv7_refused(hi in any::<u64>(), lo in any::<u64>()) {
        let hi = (hi & !0xF000) | 0x7000;
        let lo = (lo & !(0b11 << 62)) | (0b10 << 62);
        let mut u = [0u8; 16];
        u[..8].copy_from_slice(&hi.to_be_bytes());
        u[8..].copy_from_slice(&lo.to_be_bytes());
        prop_assert!(from_uuid(None, &u).is_err());
    }
}

#[test]
fn edges() {
    for (_, layout) in Layout::PRESETS {
        let last = layout.max_id();
        for id in [0, 1, layout.max_shard(), last - 1, last] {
            let u = to_uuid(&layout, id).unwrap();
            assert_eq!(from_uuid(None, &u), Ok(id));
            assert_eq!(layout.from_uuid(&u), Ok(id));
        }
        // Time 0 of the layout is its epoch.
        let u = to_uuid(&layout, 0).unwrap();
        let ts = u64::from_be_bytes([0, 0, u[0], u[1], u[2], u[3], u[4], u[5]]);
        assert_eq!(ts, layout.epoch_ms());
        // Max shard and sequence of the epoch's unit.
        let id = layout
            .compose(layout.epoch_ms(), layout.max_shard(), layout.max_sequence())
            .unwrap();
        assert_eq!(from_uuid(None, &to_uuid(&layout, id).unwrap()), Ok(id));
        // Past the layout: the ID's own error.
        if last < u64::MAX {
            assert_eq!(
                to_uuid(&layout, last + 1),
                Err(Error::InvalidId { id: last + 1 })
            );
        }
    }
    // Signed Instagram never takes the top bit; an unsigned custom layout of 64 bits does.
    assert!(to_uuid(&Layout::INSTAGRAM, 1 << 63).is_err());
    let full = Layout::builder()
        .bits(40, 12, 12)
        .signed(false)
        .build()
        .unwrap();
    for id in [u64::MAX, 1 << 63, (1 << 62) | 5] {
        let u = to_uuid(&full, id).unwrap();
        assert_eq!(from_uuid(Some(&full), &u), Ok(id));
    }
    // A time past 48-bit milliseconds.
    let long = Layout::builder()
        .bits(60, 2, 2)
        .signed(false)
        .build()
        .unwrap();
    assert_eq!(
        to_uuid(&long, u64::MAX),
        Err(Error::InvalidArgument {
            argument: "id",
            reason: uuid::PAST_UUID_TIME
        })
    );
    let last_ms = long.compose(uuid::MAX_UNIX_TS_MS, 3, 3).unwrap();
    assert_eq!(
        from_uuid(Some(&long), &to_uuid(&long, last_ms).unwrap()),
        Ok(last_ms)
    );
    // Sonyflake's 10 ms units land on their first millisecond.
    let id = Layout::SONYFLAKE.compose(1_700_000_000_007, 3, 9).unwrap();
    assert_eq!(
        to_uuid_text(&Layout::SONYFLAKE, id).unwrap().as_str()[..13],
        *"018bcfe5-6800"
    );
}

#[test]
fn refusals() {
    let id = Layout::TWITTER.compose(1_700_000_000_000, 5, 7).unwrap();
    let u = to_uuid(&Layout::TWITTER, id).unwrap();
    let text = uuid::format(&u);
    assert_eq!(text.as_str(), text.as_str().to_lowercase());
    assert_eq!(from_uuid_text(None, text.as_str()), Ok(id));

    let mut v4 = u;
    v4[6] = (v4[6] & 0x0F) | 0x40;
    assert_eq!(
        from_uuid(None, &v4).map_err(reason),
        Err(uuid::NOT_VERSION_7)
    );
    let mut ncs = u;
    ncs[8] &= 0x7F;
    assert_eq!(
        from_uuid(None, &ncs).map_err(reason),
        Err(uuid::NOT_RFC_VARIANT)
    );
    // PostgreSQL 18's uuidv7() output: rand_a random.
    let foreign = uuid::parse("019ae0c1-2c3a-7b5e-9f21-3c4d5e6f7a8b").unwrap();
    assert_eq!(
        from_uuid(None, &foreign).map_err(reason),
        Err(uuid::NO_MARKER)
    );
    assert_eq!(
        from_uuid(Some(&Layout::DISCORD), &u).map_err(reason),
        Err(uuid::OTHER_LAYOUT)
    );
    // The time changed by a millisecond: the ID inside no longer matches.
    let mut shifted = u;
    shifted[5] ^= 1;
    assert_eq!(
        from_uuid(None, &shifted).map_err(reason),
        Err(uuid::TIME_MISMATCH)
    );
    // Instagram's marker with the sign bit set in the embedded ID.
    let mut signed = to_uuid(&Layout::INSTAGRAM, 0).unwrap();
    signed[7] |= 0b10;
    assert_eq!(
        from_uuid(None, &signed).map_err(reason),
        Err(uuid::TIME_MISMATCH)
    );

    let custom = Layout::builder()
        .epoch_ms(1_600_000_000_000)
        .bits(41, 10, 12)
        .build()
        .unwrap();
    let other = Layout::builder()
        .epoch_ms(1_600_000_000_000)
        .bits(41, 11, 11)
        .build()
        .unwrap();
    let cid = custom.compose(1_700_000_000_000, 1, 1).unwrap();
    let cu = to_uuid(&custom, cid).unwrap();
    assert_eq!(from_uuid(Some(&custom), &cu), Ok(cid));
    assert_eq!(
        from_uuid(None, &cu).map_err(reason),
        Err(uuid::CUSTOM_NEEDS_LAYOUT)
    );
    assert_eq!(
        from_uuid(Some(&Layout::TWITTER), &cu).map_err(reason),
        Err(uuid::OTHER_LAYOUT)
    );
    assert_eq!(
        from_uuid(Some(&other), &cu).map_err(reason),
        Err(uuid::OTHER_LAYOUT)
    );
    assert_eq!(
        from_uuid(Some(&custom), &u).map_err(reason),
        Err(uuid::OTHER_LAYOUT)
    );

    for bad in [
        "",
        "not a uuid",
        "018bcfe5-6800-7b0b-8000-00000000000",
        "018bcfe5-6800-7b0b-8000-0000000000000",
        "018bcfe56800-7b0b-8000-0000000000000",
        "018bcfe5-6800-7b0b-8000-00000000000g",
        "{18bcfe5-6800-7b0b-8000-000000000000}",
        "018bcfe5-6800-7b0b-8000-00000000000é",
    ] {
        assert_eq!(
            uuid::parse(bad).map_err(reason),
            Err(uuid::NOT_TEXT),
            "{bad}"
        );
    }
}
