//! Public IDs, tried to be broken: round trips over 10^7 sequential IDs and over random ones,
//! no two IDs with one text, avalanche, every output changed by another key, prefix or
//! version, and hostile texts (wrong lengths, alphabets, prefixes, Unicode look-alikes, texts
//! under other keys) refused with a typed error, never a wrong ID.
use std::fmt::Write as _;

use proptest::prelude::*;
use shardid::public::{Format, KEY_LEN, MAX_KEYS, MAX_TEXT_LEN};
use shardid::{Encoding, Error, Layout, PublicIds};

const KEY: &[u8; KEY_LEN] = b"0123456789abcdef";
const OTHER_KEY: &[u8; KEY_LEN] = b"0123456789abcdeg";
/// 2023-11-14T22:13:20Z.
const T0: u64 = 1_700_000_000_000;

fn ids(prefix: &str, encoding: Encoding) -> PublicIds {
    PublicIds::new(KEY, 0, prefix, encoding).unwrap()
}

/// splitmix64: the random IDs (a fixed seed, so a failure repeats).
struct Random(u64);
impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The 64-bit value a base32 text's digits spell, read here independently of the core.
fn base32_value(text: &str) -> u64 {
    let body = &text[text.len() - 13..];
    body.bytes().fold(0u64, |v, c| {
        let d = "0123456789abcdefghjkmnpqrstvwxyz"
            .bytes()
            .position(|a| a == c)
            .unwrap();
        (v << 5) | d as u64
    })
}

/// 10^7 consecutive Instagram IDs from one shard's millisecond on, in two threads: each
/// decodes back to itself. In a debug build this takes about 5 s a thread, so it runs once,
/// in the default build (not again in the `no_std` one).
#[test]
#[cfg_attr(not(feature = "std"), ignore = "run once, by the default build")]
fn ten_million_sequential_ids_round_trip() {
    let first = Layout::INSTAGRAM.compose(T0, 5, 0).unwrap();
    let public = ids("note", Encoding::Base32);
    let half = 5_000_000u64;
    std::thread::scope(|s| {
        for part in 0..2 {
            let public = &public;
            s.spawn(move || {
                let start = first + part * half;
                for id in start..start + half {
                    let text = public.encode(id).unwrap();
                    assert_eq!(public.decode(&text), Ok(id), "{text}");
                }
            });
        }
    });
}

#[test]
fn random_and_edge_ids_round_trip_in_every_encoding() {
    let mut random = Random(1);
    for encoding in Encoding::ALL {
        let public = ids("user", encoding).with_layout(Layout::DISCORD);
        let edges = [
            0,
            1,
            2,
            1 << 32,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        for id in edges.into_iter().chain((0..100_000).map(|_| random.next())) {
            let text = public.encode(id).unwrap();
            assert_eq!(text.len(), public.text_len());
            assert_eq!(public.decode(&text), Ok(id), "{encoding:?} {text}");
        }
        // And sequential IDs in each.
        let first = Layout::INSTAGRAM.compose(T0, 1, 0).unwrap();
        for id in first..first + 50_000 {
            assert_eq!(public.decode(&public.encode(id).unwrap()), Ok(id));
        }
    }
}

/// The text's bytes after the prefix, packed in a `u128` (at most 15 ASCII bytes) so that a
/// million of them sort fast in a debug build.
fn packed(text: &str) -> u128 {
    text.bytes()
        .skip(5)
        .fold(0u128, |v, b| (v << 8) | u128::from(b))
}

/// All distinct: sorted, no two neighbours equal.
fn all_distinct(mut texts: Vec<u128>) -> bool {
    texts.sort_unstable();
    texts.windows(2).all(|w| w[0] != w[1])
}

/// No two IDs with one text, checked on the texts themselves (the 10^7 round trips above imply
/// it for theirs: a text decodes to one ID only).
#[test]
fn no_two_ids_share_a_text() {
    let public = ids("note", Encoding::Base58);
    let first = Layout::INSTAGRAM.compose(T0, 0, 0).unwrap();
    let texts = (first..first + 300_000)
        .map(|id| packed(&public.encode(id).unwrap()))
        .collect();
    assert!(all_distinct(texts), "a second ID with one text");
    let mut random = Random(2);
    let discord = ids("note", Encoding::Base62).with_layout(Layout::DISCORD);
    let mut made: Vec<u64> = (0..200_000).map(|_| random.next()).collect();
    made.sort_unstable();
    made.dedup();
    let texts = made
        .iter()
        .map(|&id| packed(&discord.encode(id).unwrap()))
        .collect();
    assert!(all_distinct(texts), "a second random ID with one text");
}

/// Consecutive IDs give values that differ in about half their 64 bits, and every bit flips
/// about half the time.
#[test]
#[allow(clippy::cast_precision_loss)] // counts below 2^53
fn consecutive_ids_avalanche() {
    let public = ids("note", Encoding::Base32);
    let first = Layout::INSTAGRAM.compose(T0, 3, 0).unwrap();
    let n = 200_000u64;
    let mut total = 0u64;
    let mut flips = [0u64; 64];
    let mut previous = base32_value(&public.encode(first).unwrap());
    for id in first + 1..=first + n {
        let value = base32_value(&public.encode(id).unwrap());
        let diff = value ^ previous;
        total += u64::from(diff.count_ones());
        for (bit, count) in flips.iter_mut().enumerate() {
            *count += (diff >> bit) & 1;
        }
        previous = value;
    }
    let mean = total as f64 / n as f64;
    assert!((28.0..=36.0).contains(&mean), "mean {mean} bits");
    // Tighter than the range above: a random permutation gives 32 +- 0.03 here.
    assert!((31.8..=32.2).contains(&mean), "mean {mean} bits");
    for (bit, count) in flips.iter().enumerate() {
        let rate = *count as f64 / n as f64;
        assert!((0.48..=0.52).contains(&rate), "bit {bit} flips {rate}");
    }
}

/// Another key, prefix or key version changes every output (of 20,000 IDs, none keeps its
/// body; two random permutations agree on one of them with probability 20,000 / 2^64).
#[test]
fn another_key_prefix_or_version_changes_every_output() {
    let first = Layout::INSTAGRAM.compose(T0, 7, 0).unwrap();
    let body = |p: &PublicIds, id: u64| base32_value(&p.encode(id).unwrap());
    let base = ids("note", Encoding::Base32);
    let others = [
        PublicIds::new(OTHER_KEY, 0, "note", Encoding::Base32).unwrap(),
        ids("user", Encoding::Base32),
        ids("notes", Encoding::Base32),
        ids("", Encoding::Base32),
        PublicIds::new(KEY, 1, "note", Encoding::Base32).unwrap(),
    ];
    for other in &others {
        for id in first..first + 20_000 {
            assert_ne!(body(&base, id), body(other, id), "{other:?} {id}");
        }
    }
    // A key differing in any one bit.
    for bit in 0..128 {
        let mut key = *KEY;
        key[bit / 8] ^= 1 << (bit % 8);
        let other = PublicIds::new(&key, 0, "note", Encoding::Base32).unwrap();
        for id in first..first + 200 {
            assert_ne!(body(&base, id), body(&other, id), "bit {bit}");
        }
    }
}

#[test]
fn the_prefix_binds_the_type() {
    let users = ids("user", Encoding::Base32);
    let notes = ids("note", Encoding::Base32);
    let first = Layout::INSTAGRAM.compose(T0, 2, 0).unwrap();
    for id in first..first + 100_000 {
        let user = users.encode(id).unwrap();
        assert!(user.starts_with("user_"));
        assert_eq!(notes.decode(&user), Err(Error::PublicIdPrefix));
        // The body moved under the other prefix never decodes to the ID.
        let moved = format!("note_{}", &user[5..]);
        assert_ne!(notes.decode(&moved), Ok(id), "{moved}");
    }
    // A prefix that merely starts like the expected one, and the separator.
    let text = notes.encode(first).unwrap();
    let body = &text[5..];
    for wrong in [
        format!("notes_{body}"),
        format!("not_{body}"),
        format!("note{body}"),
        format!("note-{body}"),
        format!("_note_{body}"),
        body.to_string(),
        String::new(),
        "note".into(),
        "note_".into(),
    ] {
        let e = notes.decode(&wrong).unwrap_err();
        assert!(
            matches!(
                e,
                Error::PublicIdPrefix
                    | Error::PublicIdLength { .. }
                    | Error::PublicIdAlphabet { .. }
            ),
            "{wrong}: {e:?}"
        );
    }
}

#[test]
fn base32_reads_either_case_and_crockfords_look_alikes() {
    let public = ids("note", Encoding::Base32);
    let first = Layout::INSTAGRAM.compose(T0, 2, 0).unwrap();
    for id in first..first + 10_000 {
        let text = public.encode(id).unwrap().to_string();
        assert_eq!(text, text.to_ascii_lowercase());
        assert_eq!(public.decode(&text.to_ascii_uppercase()), Ok(id));
        let aliased = text[5..].replace('0', "O").replace('1', "l");
        assert_eq!(public.decode(&format!("note_{aliased}")), Ok(id));
        let aliased = text[5..].replace('0', "o").replace('1', "I");
        assert_eq!(public.decode(&format!("NoTe_{aliased}")), Ok(id));
    }
    // Base58 and base62 are case-sensitive, prefix included.
    let b62 = ids("note", Encoding::Base62);
    let text = b62.encode(first).unwrap();
    assert_eq!(
        b62.decode(&text.to_ascii_uppercase()),
        Err(Error::PublicIdPrefix)
    );
}

/// Crockford's check symbol catches every single-symbol substitution and every swap of two
/// neighbouring different symbols.
#[test]
fn the_check_symbol_catches_one_wrong_symbol_and_swapped_neighbours() {
    let public = ids("note", Encoding::Base32Check);
    let alphabet = b"0123456789abcdefghjkmnpqrstvwxyz*~$=u";
    let mut random = Random(3);
    for _ in 0..300 {
        let id = random.next() >> 1;
        let text = public.encode(id).unwrap().to_string();
        let bytes = text.as_bytes();
        for i in 5..text.len() {
            let last = i == text.len() - 1;
            for &c in if last { &alphabet[..] } else { &alphabet[..32] } {
                if c == bytes[i] {
                    continue;
                }
                let mut wrong = bytes.to_vec();
                wrong[i] = c;
                let r = public.decode(std::str::from_utf8(&wrong).unwrap());
                assert!(
                    matches!(r, Err(Error::PublicIdCheck | Error::PublicIdOverflow)),
                    "{text} with {} at {i}: {r:?}",
                    c as char
                );
            }
            if i + 1 < text.len() - 1 && bytes[i] != bytes[i + 1] {
                let mut swapped = bytes.to_vec();
                swapped.swap(i, i + 1);
                let r = public.decode(std::str::from_utf8(&swapped).unwrap());
                assert!(r.is_err() && r != Ok(id), "{text} swapped at {i}: {r:?}");
            }
        }
    }
}

/// Every text of the wrong length, and every symbol outside the alphabet at every position:
/// the typed error, with the position.
#[test]
fn wrong_lengths_and_alphabets_are_refused_where_they_are() {
    for encoding in Encoding::ALL {
        let public = ids("note", encoding);
        let text = public.encode(123_456_789).unwrap().to_string();
        for len in 0..40 {
            if len == text.len() - 5 {
                continue;
            }
            let body: String = text[5..].chars().cycle().take(len).collect();
            let r = public.decode(&format!("note_{body}"));
            assert_eq!(
                r,
                Err(Error::PublicIdLength {
                    expected: encoding.body_len() as u64
                }),
                "{encoding:?} {len}"
            );
        }
        for i in 5..text.len() {
            for c in 0u8..=127 {
                let in_alphabet = if i + 1 == text.len() && encoding == Encoding::Base32Check {
                    c.is_ascii_alphanumeric() || b"*~$=".contains(&c)
                } else if encoding.ignores_case() {
                    c.is_ascii_alphanumeric() && !matches!(c, b'u' | b'U')
                } else {
                    encoding.alphabet().contains(&c)
                };
                if in_alphabet {
                    continue;
                }
                let mut wrong = text.clone().into_bytes();
                wrong[i] = c;
                let wrong = String::from_utf8(wrong).unwrap();
                assert_eq!(
                    public.decode(&wrong),
                    Err(Error::PublicIdAlphabet { position: i as u64 }),
                    "{encoding:?} {wrong:?}"
                );
            }
        }
    }
}

/// Unicode look-alikes of the alphabet's symbols (Cyrillic, Greek, fullwidth, mathematical,
/// invisible characters): never an ID.
#[test]
fn unicode_look_alikes_are_refused() {
    let look_alikes = [
        "\u{43e}",   // Cyrillic small o
        "\u{41e}",   // Cyrillic capital O
        "\u{391}",   // Greek capital alpha
        "\u{3bf}",   // Greek small omicron
        "\u{ff10}",  // fullwidth 0
        "\u{ff41}",  // fullwidth a
        "\u{1d7ce}", // mathematical bold 0
        "\u{200b}",  // zero-width space
        "\u{301}",   // combining acute accent
        "\u{660}",   // Arabic-Indic 0
        "\u{2070}",  // superscript 0
        "\u{a0}",    // no-break space
        "\u{fe0f}",  // variation selector
        "\u{212a}",  // Kelvin sign, which lowercases to k
        "\u{130}",   // I with dot, which lowercases to i
    ];
    for encoding in Encoding::ALL {
        let public = ids("note", encoding);
        let text = public.encode(987_654_321).unwrap().to_string();
        for l in look_alikes {
            for i in 0..text.len() {
                for replace in [true, false] {
                    let end = if replace { i + 1 } else { i };
                    let wrong = format!("{}{l}{}", &text[..i], &text[end..]);
                    let e = public.decode(&wrong).unwrap_err();
                    let expected = if i < 5 {
                        matches!(e, Error::PublicIdPrefix)
                    } else {
                        e == Error::PublicIdAlphabet { position: i as u64 }
                    };
                    assert!(expected, "{encoding:?} {wrong:?}: {e:?}");
                }
            }
        }
        // The look-alike prefix too.
        let cyrillic = text.replacen('o', "\u{43e}", 1);
        assert_eq!(public.decode(&cyrillic), Err(Error::PublicIdPrefix));
    }
}

#[test]
fn values_of_64_bits_and_more_overflow() {
    for (encoding, body) in [
        (Encoding::Base32, "0g000000000000"),
        (Encoding::Base32, "0zzzzzzzzzzzzz"),
        (Encoding::Base58, "1zzzzzzzzzzz"),
        (Encoding::Base58, "1jpXCZedGfVR"),
        (Encoding::Base62, "0LygHa16AHYG"),
        (Encoding::Base62, "0zzzzzzzzzzz"),
    ] {
        let public = ids("note", encoding);
        assert_eq!(
            public.decode(&format!("note_{body}")),
            Err(Error::PublicIdOverflow),
            "{encoding:?} {body}"
        );
    }
}

/// Key rotation: texts of the old key keep decoding, the new one encodes, and a version not
/// held is refused by name.
#[test]
fn keys_rotate_by_version() {
    let old = PublicIds::new(KEY, 1, "note", Encoding::Base58).unwrap();
    let rotated = PublicIds::new(OTHER_KEY, 2, "note", Encoding::Base58)
        .unwrap()
        .with_old_key(1, KEY)
        .unwrap();
    let first = Layout::INSTAGRAM.compose(T0, 4, 0).unwrap();
    for id in first..first + 10_000 {
        let before = old.encode(id).unwrap();
        let after = rotated.encode(id).unwrap();
        assert_ne!(before, after);
        assert_eq!(rotated.decode(&before), Ok(id));
        assert_eq!(rotated.decode(&after), Ok(id));
        // The version symbol is the alphabet's digit of the version.
        assert_eq!(&before[5..6], "2");
        assert_eq!(&after[5..6], "3");
        assert_eq!(
            old.decode(&after),
            Err(Error::UnknownKeyVersion { version: 2 })
        );
    }
    assert_eq!(rotated.key_version(), 2);
    let mut versions = [0; MAX_KEYS];
    assert_eq!(rotated.key_versions(&mut versions), 2);
    assert_eq!(versions[..2], [2, 1]);
    // Base58's version symbols above 31 name no version a key can have.
    let text = old.encode(first).unwrap();
    let high = format!("note_z{}", &text[6..]);
    assert_eq!(
        old.decode(&high),
        Err(Error::UnknownKeyVersion { version: 57 })
    );
}

/// A text made under another key: with another version, refused by name; with the same
/// version it decodes to an unrelated value (the cipher hides, it does not authenticate), which
/// is refused when it falls outside the layout. Never the ID the text was made from.
#[test]
fn texts_under_another_key_never_give_their_id() {
    let ours = ids("note", Encoding::Base32);
    let theirs_v1 = PublicIds::new(OTHER_KEY, 1, "note", Encoding::Base32).unwrap();
    let theirs_v0 = PublicIds::new(OTHER_KEY, 0, "note", Encoding::Base32).unwrap();
    let first = Layout::INSTAGRAM.compose(T0, 9, 0).unwrap();
    let mut refused = 0;
    let n = 100_000;
    for id in first..first + n {
        assert_eq!(
            ours.decode(&theirs_v1.encode(id).unwrap()),
            Err(Error::UnknownKeyVersion { version: 1 })
        );
        match ours.decode(&theirs_v0.encode(id).unwrap()) {
            Ok(other) => assert_ne!(other, id),
            Err(e) => {
                assert_eq!(e, Error::PublicIdMismatch);
                refused += 1;
            }
        }
    }
    // A 63-bit layout refuses half of them (the top bit), 48.5 to 51.5 % here.
    assert!((48_500..=51_500).contains(&refused), "{refused} refused");
    // A narrower layout refuses nearly all: 41 + 10 + 2 bits take 1 value in 2^11.
    let narrow = Layout::builder()
        .epoch_ms(T0)
        .bits(41, 10, 2)
        .build()
        .unwrap();
    let ours = ids("note", Encoding::Base32).with_layout(narrow);
    let theirs = PublicIds::new(OTHER_KEY, 0, "note", Encoding::Base32)
        .unwrap()
        .with_layout(narrow);
    let taken = (0..n)
        .filter(|&id| ours.decode(&theirs.encode(id).unwrap()).is_ok())
        .count();
    assert!(taken < 200, "{taken} of {n} taken");
}

#[test]
fn the_layout_bounds_encoding_and_decoding() {
    let default = ids("note", Encoding::Base62);
    assert_eq!(default.max_id(), i64::MAX as u64);
    assert_eq!(
        default.encode(1 << 63),
        Err(Error::InvalidId { id: 1 << 63 })
    );
    let discord = ids("note", Encoding::Base62).with_layout(Layout::DISCORD);
    let text = discord.encode(u64::MAX).unwrap();
    assert_eq!(discord.decode(&text), Ok(u64::MAX));
    // The same text is not an ID of the default layout: refused without its value.
    let e = default.decode(&text).unwrap_err();
    assert_eq!(e, Error::PublicIdMismatch);
    assert!(!e.to_string().contains(&u64::MAX.to_string()));
}

#[test]
fn bad_arguments_are_refused() {
    let argument = |e: Error| match e {
        Error::InvalidArgument { argument, .. } => argument,
        other => panic!("{other:?}"),
    };
    for len in [0, 1, 15, 17, 32] {
        let key = vec![7u8; len];
        let e = PublicIds::new(&key, 0, "note", Encoding::Base32).unwrap_err();
        assert_eq!(argument(e), "key");
        assert!(e.to_string().contains("16 bytes"), "{e}");
    }
    for prefix in [
        "Note",
        "1note",
        "_note",
        "note_",
        "no-te",
        "nöte",
        "note ",
        " ",
        &"a".repeat(64),
    ] {
        let e = PublicIds::new(KEY, 0, prefix, Encoding::Base32).unwrap_err();
        assert_eq!(argument(e), "prefix", "{prefix:?}");
    }
    for prefix in ["", "a", "note", "sk_live", "v2note", &"a".repeat(63)] {
        let p = PublicIds::new(KEY, 0, prefix, Encoding::Base32).unwrap();
        assert_eq!(p.prefix(), prefix);
        let text = p.encode(5).unwrap();
        assert!(text.len() <= MAX_TEXT_LEN);
        assert_eq!(p.decode(&text), Ok(5));
    }
    let e = PublicIds::new(KEY, 32, "note", Encoding::Base32).unwrap_err();
    assert_eq!(argument(e), "key_version");
    let p = ids("note", Encoding::Base32);
    assert_eq!(
        argument(p.clone().with_old_key(0, OTHER_KEY).unwrap_err()),
        "key_version"
    );
    assert_eq!(
        argument(p.clone().with_old_key(1, &KEY[..8]).unwrap_err()),
        "key"
    );
    let full = p
        .with_old_key(1, OTHER_KEY)
        .and_then(|p| p.with_old_key(2, OTHER_KEY))
        .and_then(|p| p.with_old_key(3, OTHER_KEY))
        .unwrap();
    assert_eq!(
        argument(full.with_old_key(4, OTHER_KEY).unwrap_err()),
        "keys"
    );
    assert_eq!(
        argument(Encoding::from_name("base64").unwrap_err()),
        "encoding"
    );
    for e in Encoding::ALL {
        assert_eq!(Encoding::from_name(e.name()), Ok(e));
    }
    let mut short = [0u8; 10];
    assert_eq!(
        argument(
            ids("note", Encoding::Base32)
                .encode_into(5, &mut short)
                .unwrap_err()
        ),
        "out"
    );
}

/// Keys written as text: one key (version 0) or version:hex pairs, the highest current.
#[test]
fn keys_as_text() {
    let hex = |k: &[u8]| {
        k.iter().fold(String::new(), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
    };
    let (a, b) = (hex(KEY), hex(OTHER_KEY));
    let single = PublicIds::from_keys(&a, "note", Encoding::Base32).unwrap();
    assert_eq!(single, ids("note", Encoding::Base32));
    let upper = PublicIds::from_keys(&format!(" {} ", a.to_uppercase()), "note", Encoding::Base32);
    assert_eq!(upper.unwrap(), single);
    let rotated = PublicIds::from_keys(&format!("1:{a}, 2:{b}"), "note", Encoding::Base32).unwrap();
    let expected = PublicIds::new(OTHER_KEY, 2, "note", Encoding::Base32)
        .unwrap()
        .with_old_key(1, KEY)
        .unwrap();
    assert_eq!(rotated, expected);
    let argument = |r: Result<PublicIds, Error>| match r {
        Err(Error::InvalidArgument { argument, .. }) => argument,
        other => panic!("{other:?}"),
    };
    for bad in [
        String::new(),
        "  ".into(),
        a[..31].to_string(),
        format!("{a}0"),
        format!("{a},{b}"),
        format!("x:{a}"),
        format!(":{a}"),
        format!("100:{a}"),
        format!("1:{a},"),
        format!("1:{}g", &a[..31]),
        format!("-1:{a}"),
        format!("1:{a},2:{b},3:{a},4:{b},5:{a}"),
    ] {
        assert_eq!(
            argument(PublicIds::from_keys(&bad, "note", Encoding::Base32)),
            "keys",
            "{bad:?}"
        );
    }
    assert_eq!(
        argument(PublicIds::from_keys(
            &format!("32:{a}"),
            "note",
            Encoding::Base32
        )),
        "key_version"
    );
    assert_eq!(
        argument(PublicIds::from_keys(
            &format!("1:{a},1:{b}"),
            "note",
            Encoding::Base32
        )),
        "key_version"
    );
    assert_eq!(
        argument(PublicIds::from_keys(&a, "Note", Encoding::Base32)),
        "prefix"
    );
}

/// Neither `Debug` nor an error ever shows the key or the round keys.
#[test]
fn the_key_is_never_shown() {
    let p = ids("note", Encoding::Base32)
        .with_old_key(3, OTHER_KEY)
        .unwrap();
    let shown = format!("{p:?}");
    assert!(
        shown.contains("note") && shown.contains("key_versions: [0, 3]"),
        "{shown}"
    );
    assert!(
        !shown.contains("0123456789") && !shown.contains("rounds"),
        "{shown}"
    );
    assert!(!format!("{:?}", p.format()).contains("0123456789"));
}

#[test]
fn the_format_checks_the_shape_without_a_key() {
    let p = PublicIds::new(KEY, 7, "note", Encoding::Base32Check).unwrap();
    let text = p.encode(42).unwrap();
    let format = Format::new("note", Encoding::Base32Check).unwrap();
    assert_eq!(format.check(&text), Ok(7));
    assert_eq!(
        format.check("user_0000000000000000"),
        Err(Error::PublicIdPrefix)
    );
    assert_eq!(
        format.pattern().to_string(),
        "[nN][oO][tT][eE]_[0-9A-TV-Za-tv-z]{14}[0-9A-Za-z*~$=]"
    );
    assert_eq!(
        Format::new("sk_live", Encoding::Base58)
            .unwrap()
            .pattern()
            .to_string(),
        "sk_live_[1-9A-HJ-NP-Za-km-z]{12}"
    );
    assert_eq!(
        Format::new("", Encoding::Base62)
            .unwrap()
            .pattern()
            .to_string(),
        "[0-9A-Za-z]{12}"
    );
    assert_eq!(format.text_len(), 20);
    // The longest pattern fills its buffer exactly.
    let longest = Format::new(&"a".repeat(63), Encoding::Base32Check).unwrap();
    assert_eq!(
        longest.pattern().to_string().len(),
        shardid::public::MAX_PATTERN_LEN
    );
}

/// The texts of one prefix, key and version: published here so that a change of the cipher,
/// the key derivation or an encoding cannot pass unnoticed (the conformance vectors hold more,
/// for every language).
#[test]
fn known_texts() {
    let id = 4_036_916_263_258_161_152;
    let expected = [
        (Encoding::Base32, "note_0923h26jsg2d8g"),
        (Encoding::Base32Check, "note_0923h26jsg2d8gh"),
        (Encoding::Base58, "note_1RGDbnBCk5Gs"),
        (Encoding::Base62, "note_0CS7mKTPrMUi"),
    ];
    for (encoding, text) in expected {
        assert_eq!(ids("note", encoding).encode(id).unwrap(), text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_key_prefix_version_and_id_round_trip(
        key in any::<[u8; 16]>(),
        prefix in "([a-z][a-z0-9_]{0,61}[a-z0-9])?",
        version in 0u32..=31,
        encoding in prop::sample::select(Encoding::ALL.to_vec()),
        id in any::<u64>(),
    ) {
        let p = PublicIds::new(&key, version, &prefix, encoding).unwrap().with_layout(Layout::DISCORD);
        let text = p.encode(id).unwrap();
        prop_assert_eq!(p.decode(&text), Ok(id));
        prop_assert_eq!(p.format().check(&text), Ok(version));
    }

    /// Whatever text decodes is the canonical text of its ID (up to base32's case and
    /// look-alikes): decoding never accepts a second spelling that means another ID.
    #[test]
    fn whatever_decodes_re_encodes_to_itself(
        encoding in prop::sample::select(Encoding::ALL.to_vec()),
        body in "[0-9A-Za-z*~$=]{11,16}",
    ) {
        let p = ids("", encoding).with_layout(Layout::DISCORD);
        if let Ok(id) = p.decode(&body) {
            let canonical = if encoding.ignores_case() {
                body.to_ascii_lowercase().replace(['i', 'l'], "1").replace('o', "0")
            } else {
                body.clone()
            };
            prop_assert_eq!(p.encode(id).unwrap().to_string(), canonical);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(text in prop::collection::vec(any::<u8>(), 0..40)) {
        for encoding in Encoding::ALL {
            let p = ids("note", encoding);
            if let Ok(id) = p.decode_bytes(&text) {
                prop_assert_eq!(p.encode(id).unwrap().as_bytes().len(), text.len());
            }
        }
    }
}
