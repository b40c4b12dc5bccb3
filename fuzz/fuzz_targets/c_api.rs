//! The C API's exports (bindings-c, through fuzz/c-api) called as a C program could call them:
//! a layout struct with every field chosen, the `is_signed` byte any byte (copied in raw, as
//! `memcpy` would), IDs, shards, and lengths both real (a buffer that long exists) and
//! impossible (above PTRDIFF_MAX, or past the end of memory from a pointer near it). Asserts
//! that no panic escapes (`SHARDID_ERR_PANIC` is a failure here), every status is one the
//! function documents, a layout is refused exactly when the core's rules and the C ones (`order`
//! 0 or 1, `is_signed` 0 or 1) refuse it, an impossible length is refused before anything is
//! read (the pointers behind one are never valid, so a read is a crash), and outputs are
//! written only on success.
#![no_main]

use std::ffi::{CString, c_char};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shardid::{FieldOrder, Layout};
use shardid_c::shardid_status::{self, *};
use shardid_c::*;

#[derive(Arbitrary, Debug)]
enum Base {
    /// One of the four presets (index modulo 4), its fields then overridden where given.
    Preset(u8),
    Custom {
        epoch_ms: u64,
        unit_ms: u64,
        time_bits: u8,
        shard_bits: u8,
        sequence_bits: u8,
    },
}

/// A length argument.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Len {
    /// At most the buffer's size (taken modulo size + 1).
    Real(u16),
    /// Above PTRDIFF_MAX (bytes or elements): no buffer is that long.
    Huge(u64),
    /// A pointer near the end of the address space, `back` bytes before it, and a length that
    /// runs past it.
    Wrapping { back: u16, past: u32 },
}

#[derive(Arbitrary, Debug)]
enum Op {
    LayoutNew,
    MaxShard,
    MaxSequence,
    MaxId,
    ExpiresAt,
    ValidateId(u64),
    Compose(u64, u64, u64),
    MinIdAt(u64),
    MaxIdAt(u64),
    ShardForKey(u64, u64),
    ScatterDecimal(u64),
    GatherDecimal(u64),
    ScatterDigits(u64, u32),
    GatherDigits(u64, u32),
    ScatterBits(u64),
    GatherBits(u64),
    Decode(u64),
    ToUuid(u64),
    FromUuid([u8; 16], bool),
    UuidParse(Vec<u8>, Len),
    Generator {
        shard: u64,
        now_ms: Vec<u64>,
        capacity: u8,
        len: Len,
    },
    /// A key of 16 bytes (the size the API takes: any other length is refused before the
    /// rest is reached) and a key version of a byte, so the fuzzer reaches encoding and
    /// decoding, and the lengths they take, within CI's seconds.
    Public {
        key: [u8; 16],
        key_len: Len,
        key_version: u8,
        prefix: Vec<u8>,
        encoding: u8,
        id: u64,
        buf_len: Len,
        text: Vec<u8>,
        text_len: Len,
    },
    PublicCheck {
        prefix: Vec<u8>,
        encoding: u8,
        text: Vec<u8>,
        text_len: Len,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    base: Base,
    order: Option<u8>,
    is_signed: Option<u8>,
    ops: Vec<Op>,
}

const SENTINEL: u64 = 0xA5A5_A5A5_A5A5_A5A5;

/// A status is one of `allowed`; a panic is never allowed.
#[track_caller]
fn check(status: shardid_status, allowed: &[shardid_status]) {
    assert_ne!(status, SHARDID_ERR_PANIC, "a panic reached the boundary");
    assert!(
        status == SHARDID_OK || allowed.contains(&status),
        "{status:?} is not a documented status here ({allowed:?})"
    );
}

/// The pointer and length a `Len` stands for, over `buf` (elements of `T`); `true` when the
/// length is impossible and must be refused.
fn span<T>(buf: *mut T, size: usize, len: Len) -> (*mut T, usize, bool) {
    match len {
        Len::Real(n) => (buf, usize::from(n) % (size + 1), false),
        Len::Huge(n) => {
            let bytes = (isize::MAX as usize / size_of::<T>()) + 1;
            (
                buf,
                bytes.saturating_add(n as usize % (usize::MAX - bytes)),
                true,
            )
        }
        Len::Wrapping { back, past } => {
            // Aligned for T, `back` bytes (rounded down) below the top of the address space:
            // never a real buffer, so touching it faults.
            let addr = (usize::MAX - usize::from(back)) & !(align_of::<T>() - 1);
            let room = (usize::MAX - addr) / size_of::<T>();
            let len = room + 1 + past as usize;
            (std::ptr::without_provenance_mut(addr), len, true)
        }
    }
}

/// The layout the C rules accept, or `None`: the reference the exports are held to.
fn reference(l: &shardid_layout, signed_byte: u8) -> Option<Layout> {
    let order = match l.order {
        0 => FieldOrder::TimeShardSequence,
        1 => FieldOrder::TimeSequenceShard,
        _ => return None,
    };
    let signed = match signed_byte {
        0 => false,
        1 => true,
        _ => return None,
    };
    Layout::builder()
        .epoch_ms(l.epoch_ms)
        .unit_ms(l.unit_ms)
        .bits(l.time_bits, l.shard_bits, l.sequence_bits)
        .order(order)
        .signed(signed)
        .build()
        .ok()
}

/// A `u64` output: `SENTINEL` stays unless the call succeeded.
fn out_u64(
    f: impl FnOnce(*mut u64) -> shardid_status,
    allowed: &[shardid_status],
) -> Result<u64, shardid_status> {
    let mut v = SENTINEL;
    let status = f(&raw mut v);
    check(status, allowed);
    if status == SHARDID_OK {
        Ok(v)
    } else {
        assert_eq!(v, SENTINEL, "an output written on {status:?}");
        Err(status)
    }
}

fn c_string(bytes: &[u8]) -> CString {
    CString::new(
        bytes
            .iter()
            .copied()
            .filter(|&b| b != 0)
            .collect::<Vec<u8>>(),
    )
    .unwrap()
}

fuzz_target!(|input: Input| {
    let mut layout = match input.base {
        Base::Preset(i) => [
            shardid_layout_instagram(),
            shardid_layout_twitter(),
            shardid_layout_discord(),
            shardid_layout_sonyflake(),
        ][usize::from(i % 4)],
        Base::Custom {
            epoch_ms,
            unit_ms,
            time_bits,
            shard_bits,
            sequence_bits,
        } => shardid_layout {
            epoch_ms,
            unit_ms,
            time_bits,
            shard_bits,
            sequence_bits,
            ..shardid_layout_twitter()
        },
    };
    if let Some(order) = input.order {
        layout.order = order;
    }
    // SAFETY: `is_signed` is one byte (shardid_bool is a transparent u8); reading and writing
    // it as bytes is what a C program's memcpy does.
    let signed_byte = unsafe {
        let field = (&raw mut layout.is_signed).cast::<u8>();
        if let Some(b) = input.is_signed {
            field.write(b);
        }
        field.read()
    };
    let valid = reference(&layout, signed_byte);
    let lp = &raw const layout;
    // A layout argument: INVALID_LAYOUT exactly when the reference refuses it.
    let layout_status = |status: shardid_status| {
        assert_ne!(status, SHARDID_ERR_PANIC, "a panic reached the boundary");
        assert_eq!(
            status == SHARDID_ERR_INVALID_LAYOUT,
            valid.is_none(),
            "{layout:?} (is_signed byte {signed_byte}): {status:?}"
        );
    };

    for op in input.ops.iter().take(16) {
        // SAFETY: every pointer below is to a live local or a buffer of at least the length
        // given, or, with an impossible length, to memory no buffer has: the C API's contract
        // refuses those before reading (what this target checks).
        unsafe {
            match op {
                Op::LayoutNew => {
                    let mut out = shardid_layout_discord();
                    let before = out;
                    let status = shardid_layout_new(
                        layout.epoch_ms,
                        layout.unit_ms,
                        layout.time_bits,
                        layout.shard_bits,
                        layout.sequence_bits,
                        layout.order,
                        layout.is_signed,
                        &raw mut out,
                    );
                    check(status, &[SHARDID_ERR_INVALID_LAYOUT]);
                    layout_status(status);
                    if status == SHARDID_OK {
                        assert_eq!(out, layout);
                    } else {
                        assert_eq!(out, before, "an output written on {status:?}");
                    }
                }
                Op::MaxShard | Op::MaxSequence | Op::MaxId | Op::ExpiresAt => {
                    let f = match op {
                        Op::MaxShard => shardid_max_shard,
                        Op::MaxSequence => shardid_max_sequence,
                        Op::MaxId => shardid_max_id,
                        _ => shardid_expires_at_ms,
                    };
                    let mut v = SENTINEL;
                    let status = f(lp, &raw mut v);
                    check(status, &[SHARDID_ERR_INVALID_LAYOUT]);
                    layout_status(status);
                    if let Some(l) = valid {
                        let want = match op {
                            Op::MaxShard => l.max_shard(),
                            Op::MaxSequence => l.max_sequence(),
                            Op::MaxId => l.max_id(),
                            _ => l.expires_at_ms(),
                        };
                        assert_eq!(v, want);
                    } else {
                        assert_eq!(v, SENTINEL, "an output written on {status:?}");
                    }
                }
                Op::ValidateId(id) => {
                    let got = out_u64(
                        |o| shardid_validate_id(lp, *id, o),
                        &[SHARDID_ERR_INVALID_LAYOUT, SHARDID_ERR_INVALID_ID],
                    );
                    if let Ok(got) = got {
                        assert_eq!(got, *id);
                        assert!(valid.is_some());
                    }
                }
                Op::Compose(t, s, q) => {
                    let got = out_u64(
                        |o| shardid_compose(lp, *t, *s, *q, o),
                        &[
                            SHARDID_ERR_INVALID_LAYOUT,
                            SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH,
                            SHARDID_ERR_TIMESTAMP_PAST_EXPIRY,
                            SHARDID_ERR_SHARD_OUT_OF_RANGE,
                            SHARDID_ERR_SEQUENCE_OUT_OF_RANGE,
                        ],
                    );
                    if let Ok(id) = got {
                        let mut parts = shardid_parts {
                            timestamp_ms: 0,
                            shard: 0,
                            sequence: 0,
                        };
                        assert_eq!(shardid_decode(lp, id, &raw mut parts), SHARDID_OK);
                        assert_eq!((parts.shard, parts.sequence), (*s, *q));
                    }
                }
                Op::MinIdAt(t) | Op::MaxIdAt(t) => {
                    let f = if matches!(op, Op::MinIdAt(_)) {
                        shardid_min_id_at
                    } else {
                        shardid_max_id_at
                    };
                    let _ = out_u64(
                        |o| f(lp, *t, o),
                        &[
                            SHARDID_ERR_INVALID_LAYOUT,
                            SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH,
                            SHARDID_ERR_TIMESTAMP_PAST_EXPIRY,
                        ],
                    );
                }
                Op::ShardForKey(key, n) => {
                    let got = out_u64(
                        |o| shardid_shard_for_key(lp, *key, *n, o),
                        &[SHARDID_ERR_INVALID_LAYOUT, SHARDID_ERR_INVALID_SHARD_COUNT],
                    );
                    if let Ok(shard) = got {
                        assert!(shard < *n);
                    }
                }
                Op::ScatterDecimal(id)
                | Op::GatherDecimal(id)
                | Op::ScatterBits(id)
                | Op::GatherBits(id) => {
                    let f = match op {
                        Op::ScatterDecimal(_) => shardid_scatter_decimal,
                        Op::GatherDecimal(_) => shardid_gather_decimal,
                        Op::ScatterBits(_) => shardid_scatter_bits,
                        _ => shardid_gather_bits,
                    };
                    let _ = out_u64(
                        |o| f(lp, *id, o),
                        &[
                            SHARDID_ERR_INVALID_LAYOUT,
                            SHARDID_ERR_INVALID_ID,
                            SHARDID_ERR_SCATTER_OVERFLOW,
                        ],
                    );
                }
                Op::ScatterDigits(id, d) | Op::GatherDigits(id, d) => {
                    let f = if matches!(op, Op::ScatterDigits(..)) {
                        shardid_scatter_decimal_digits
                    } else {
                        shardid_gather_decimal_digits
                    };
                    let got = out_u64(
                        |o| f(lp, *id, *d, o),
                        &[
                            SHARDID_ERR_INVALID_LAYOUT,
                            SHARDID_ERR_INVALID_ID,
                            SHARDID_ERR_SCATTER_OVERFLOW,
                            SHARDID_ERR_INVALID_ARGUMENT,
                        ],
                    );
                    if got.is_ok() {
                        assert!((1..=3).contains(d));
                    }
                }
                Op::Decode(id) => {
                    let mut parts = shardid_parts {
                        timestamp_ms: SENTINEL,
                        shard: SENTINEL,
                        sequence: SENTINEL,
                    };
                    let status = shardid_decode(lp, *id, &raw mut parts);
                    check(
                        status,
                        &[SHARDID_ERR_INVALID_LAYOUT, SHARDID_ERR_INVALID_ID],
                    );
                    if status == SHARDID_OK {
                        let again = out_u64(
                            |o| {
                                shardid_compose(
                                    lp,
                                    parts.timestamp_ms,
                                    parts.shard,
                                    parts.sequence,
                                    o,
                                )
                            },
                            &[],
                        );
                        assert_eq!(again, Ok(*id));
                    } else {
                        assert_eq!(parts.shard, SENTINEL, "an output written on {status:?}");
                        assert_eq!(parts.timestamp_ms, SENTINEL);
                        assert_eq!(parts.sequence, SENTINEL);
                    }
                }
                Op::ToUuid(id) => {
                    let mut uuid = [0xA5u8; 16];
                    let status = shardid_to_uuid(lp, *id, uuid.as_mut_ptr());
                    check(
                        status,
                        &[
                            SHARDID_ERR_INVALID_LAYOUT,
                            SHARDID_ERR_INVALID_ID,
                            SHARDID_ERR_INVALID_ARGUMENT,
                        ],
                    );
                    if status == SHARDID_OK {
                        let back = out_u64(|o| shardid_from_uuid(lp, uuid.as_ptr(), o), &[]);
                        assert_eq!(back, Ok(*id));
                    } else {
                        assert_eq!(uuid, [0xA5u8; 16], "an output written on {status:?}");
                    }
                }
                Op::FromUuid(uuid, with_layout) => {
                    let l = if *with_layout { lp } else { std::ptr::null() };
                    let _ = out_u64(
                        |o| shardid_from_uuid(l, uuid.as_ptr(), o),
                        &[
                            SHARDID_ERR_INVALID_LAYOUT,
                            SHARDID_ERR_INVALID_ID,
                            SHARDID_ERR_INVALID_ARGUMENT,
                        ],
                    );
                }
                Op::UuidParse(text, len) => {
                    let mut text = text.clone();
                    let (ptr, n, impossible) = span(text.as_mut_ptr(), text.len(), *len);
                    let mut uuid = [0xA5u8; 16];
                    let status = shardid_uuid_parse(ptr.cast::<c_char>(), n, uuid.as_mut_ptr());
                    check(
                        status,
                        &[SHARDID_ERR_INVALID_ARGUMENT, SHARDID_ERR_NULL_ARGUMENT],
                    );
                    if impossible {
                        assert_eq!(status, SHARDID_ERR_INVALID_ARGUMENT);
                    }
                    if status != SHARDID_OK {
                        assert_eq!(uuid, [0xA5u8; 16], "an output written on {status:?}");
                    } else {
                        let mut buf = [0 as c_char; SHARDID_UUID_TEXT_LEN];
                        assert_eq!(
                            shardid_uuid_format(uuid.as_ptr(), buf.as_mut_ptr()),
                            SHARDID_OK
                        );
                    }
                }
                Op::Generator {
                    shard,
                    now_ms,
                    capacity,
                    len,
                } => {
                    let mut generator = std::ptr::null_mut();
                    let status = shardid_generator_new(lp, *shard, &raw mut generator);
                    check(
                        status,
                        &[SHARDID_ERR_INVALID_LAYOUT, SHARDID_ERR_SHARD_OUT_OF_RANGE],
                    );
                    layout_status(status);
                    if status != SHARDID_OK {
                        assert!(generator.is_null(), "an output written on {status:?}");
                        continue;
                    }
                    let l = valid.expect("a generator of a refused layout");
                    let issued = [
                        SHARDID_ERR_SEQUENCE_EXHAUSTED,
                        SHARDID_ERR_CLOCK_MOVED_BACKWARDS,
                        SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH,
                        SHARDID_ERR_TIMESTAMP_PAST_EXPIRY,
                    ];
                    let mut seen = std::collections::HashSet::new();
                    for (i, now) in now_ms.iter().take(8).enumerate() {
                        if i % 2 == 0 {
                            if let Ok(id) =
                                out_u64(|o| shardid_generator_next_at(generator, *now, o), &issued)
                            {
                                assert!(seen.insert(id), "{id} issued twice");
                                assert_eq!(l.decode(id).map(|p| p.shard), Ok(*shard));
                            }
                            continue;
                        }
                        let size = usize::from(*capacity);
                        let mut ids = vec![SENTINEL; size];
                        let (ptr, n, impossible) = span(ids.as_mut_ptr(), size, *len);
                        let mut written = usize::MAX;
                        let status = shardid_generator_next_batch_at(
                            generator,
                            *now,
                            ptr,
                            n,
                            &raw mut written,
                        );
                        let mut allowed = issued.to_vec();
                        allowed.push(SHARDID_ERR_INVALID_ARGUMENT);
                        check(status, &allowed);
                        if impossible {
                            assert_eq!(status, SHARDID_ERR_INVALID_ARGUMENT);
                        }
                        if status == SHARDID_OK {
                            assert!(written <= n && (written > 0 || n == 0), "{written} of {n}");
                            for &id in &ids[..written] {
                                assert!(seen.insert(id), "{id} issued twice");
                            }
                        } else {
                            assert_eq!(written, usize::MAX, "an output written on {status:?}");
                        }
                    }
                    shardid_generator_free(generator);
                }
                Op::Public {
                    key,
                    key_len,
                    key_version,
                    prefix,
                    encoding,
                    id,
                    buf_len,
                    text,
                    text_len,
                } => {
                    let mut key = *key;
                    let (kp, kn, impossible) = span(key.as_mut_ptr(), key.len(), *key_len);
                    let prefix = c_string(prefix);
                    let mut ids = std::ptr::null_mut();
                    let status = shardid_public_ids_new(
                        kp,
                        kn,
                        u32::from(*key_version),
                        prefix.as_ptr(),
                        *encoding,
                        lp,
                        &raw mut ids,
                    );
                    check(
                        status,
                        &[
                            SHARDID_ERR_INVALID_ARGUMENT,
                            SHARDID_ERR_INVALID_LAYOUT,
                            SHARDID_ERR_NULL_ARGUMENT,
                        ],
                    );
                    if impossible {
                        assert_eq!(status, SHARDID_ERR_INVALID_ARGUMENT);
                    }
                    if status != SHARDID_OK {
                        assert!(ids.is_null(), "an output written on {status:?}");
                        continue;
                    }
                    assert!(valid.is_some() && kn == 16);
                    let mut buf = vec![0x5Au8; 64];
                    let (bp, bn, impossible) = span(buf.as_mut_ptr(), buf.len(), *buf_len);
                    let mut n = usize::MAX;
                    let status = shardid_public_encode(ids, *id, bp.cast(), bn, &raw mut n);
                    check(
                        status,
                        &[SHARDID_ERR_INVALID_ID, SHARDID_ERR_INVALID_ARGUMENT],
                    );
                    if impossible {
                        assert_eq!(status, SHARDID_ERR_INVALID_ARGUMENT);
                    }
                    if status == SHARDID_OK {
                        assert!(n < bn && buf[n] == 0);
                        let back = out_u64(
                            |o| shardid_public_decode(ids, buf.as_ptr().cast(), n, o),
                            &[],
                        );
                        assert_eq!(back, Ok(*id));
                    } else {
                        assert_eq!(n, usize::MAX, "an output written on {status:?}");
                        assert!(
                            buf.iter().all(|&b| b == 0x5A),
                            "a buffer written on {status:?}"
                        );
                    }
                    let mut text = text.clone();
                    let (tp, tn, impossible) = span(text.as_mut_ptr(), text.len(), *text_len);
                    let got = out_u64(
                        |o| shardid_public_decode(ids, tp.cast(), tn, o),
                        &[
                            SHARDID_ERR_PUBLIC_ID_PREFIX,
                            SHARDID_ERR_PUBLIC_ID_LENGTH,
                            SHARDID_ERR_PUBLIC_ID_ALPHABET,
                            SHARDID_ERR_PUBLIC_ID_CHECK,
                            SHARDID_ERR_PUBLIC_ID_OVERFLOW,
                            SHARDID_ERR_UNKNOWN_KEY_VERSION,
                            SHARDID_ERR_PUBLIC_ID_MISMATCH,
                            SHARDID_ERR_INVALID_ARGUMENT,
                            SHARDID_ERR_NULL_ARGUMENT,
                        ],
                    );
                    if impossible {
                        assert_eq!(got, Err(SHARDID_ERR_INVALID_ARGUMENT));
                    }
                    shardid_public_ids_free(ids);
                }
                Op::PublicCheck {
                    prefix,
                    encoding,
                    text,
                    text_len,
                } => {
                    let prefix = c_string(prefix);
                    let mut text = text.clone();
                    let (tp, tn, impossible) = span(text.as_mut_ptr(), text.len(), *text_len);
                    let mut version = u32::MAX;
                    let status = shardid_public_check(
                        prefix.as_ptr(),
                        *encoding,
                        tp.cast(),
                        tn,
                        &raw mut version,
                    );
                    check(
                        status,
                        &[
                            SHARDID_ERR_PUBLIC_ID_PREFIX,
                            SHARDID_ERR_PUBLIC_ID_LENGTH,
                            SHARDID_ERR_PUBLIC_ID_ALPHABET,
                            SHARDID_ERR_PUBLIC_ID_CHECK,
                            SHARDID_ERR_PUBLIC_ID_OVERFLOW,
                            SHARDID_ERR_INVALID_ARGUMENT,
                            SHARDID_ERR_NULL_ARGUMENT,
                        ],
                    );
                    if impossible {
                        assert_eq!(status, SHARDID_ERR_INVALID_ARGUMENT);
                    }
                    if status == SHARDID_OK {
                        assert!(version <= 31);
                    } else {
                        assert_eq!(version, u32::MAX, "an output written on {status:?}");
                    }
                }
            }
        }
    }
});
