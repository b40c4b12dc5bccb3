//! Speck64/128 (Beaulieu, Shors, Smith, Treatman-Clark, Weeks, Wingers, "The SIMON and SPECK
//! Families of Lightweight Block Ciphers", 2013): a 64-bit block, a 128-bit key, 27 rounds of
//! additions, rotations and XORs on 32-bit words.
//!
//! Why this cipher: public IDs need a permutation of exactly 64 bits (a wider block would
//! lengthen the text), keyed, invertible, fast, and simple enough to write again in PL/pgSQL
//! over `bigint` with no overflow — its words are 32 bits, so every sum fits in a `bigint` and
//! is masked back. Speck64/128 is a published 64-bit block cipher with test vectors, whose
//! best known attacks (differential and linear, in the literature since 2014) reach fewer than
//! its 27 rounds; a four-round Feistel network over `SipHash` would need 64-bit arithmetic that
//! overflows a `bigint`, and AES or a 128-bit cipher would double the text.
//!
//! Words follow the Speck implementation guide (2019): the block is `x` (high 32 bits) and `y`
//! (low 32 bits); key bytes are read as little-endian words `k0 l0 l1 l2`. The test below
//! checks the paper's vector.

/// Rounds of Speck64/128.
pub(super) const ROUNDS: usize = 27;

/// The round keys of one Speck64/128 key.
pub(super) type RoundKeys = [u32; ROUNDS];

/// The key schedule of the key whose words are `k0, l0, l1, l2`.
pub(super) const fn schedule(words: [u32; 4]) -> RoundKeys {
    let [mut k, l0, l1, l2] = words;
    let mut l = [l0, l1, l2];
    let mut keys = [0u32; ROUNDS];
    let mut i = 0;
    while i < ROUNDS {
        keys[i] = k;
        // Round i's l is l[i % 3]; the next k comes from it with the round number (at most 26).
        #[allow(clippy::cast_possible_truncation)]
        let round = i as u32;
        let next_l = k.wrapping_add(l[i % 3].rotate_right(8)) ^ round;
        l[i % 3] = next_l;
        k = k.rotate_left(3) ^ next_l;
        i += 1;
    }
    keys
}

/// The round keys of a 16-byte key (little-endian words `k0 l0 l1 l2`).
pub(super) fn schedule_bytes(key: &[u8; 16]) -> RoundKeys {
    let word = |i: usize| u32::from_le_bytes([key[i], key[i + 1], key[i + 2], key[i + 3]]);
    schedule([word(0), word(4), word(8), word(12)])
}

/// Encrypts one block (`x` the high word, `y` the low one).
#[inline]
#[allow(clippy::manual_rotate)] // see the comment on the loop
pub(super) fn encrypt(keys: &RoundKeys, block: u64) -> u64 {
    // The halves of the block.
    #[allow(clippy::cast_possible_truncation)]
    let (mut x, mut y) = ((block >> 32) as u32, block as u32);
    // An index loop and rotations written as shifts: the same machine code optimized (LLVM
    // sees the rotations), and several times faster unoptimized, where `rotate_right` and an
    // iterator are calls (the tests run 10^7 round trips in a debug build).
    let mut i = 0;
    while i < ROUNDS {
        x = ((x >> 8) | (x << 24)).wrapping_add(y) ^ keys[i];
        y = ((y << 3) | (y >> 29)) ^ x;
        i += 1;
    }
    (u64::from(x) << 32) | u64::from(y)
}

/// Decrypts one block: [`encrypt`] undone round by round.
///
/// A round undone is `y = ror(y ^ x, 3); x = rol((x ^ k) - y, 8)`, whose dependent steps make
/// four operations per round. Rotation distributes over XOR, so the next round's
/// `ror(y ^ x, 3)` is `rol((x ^ k) - y, 5) ^ ror(y, 3)` of this round's values: written that
/// way, `y` waits on three operations per round and `x` comes off that path.
#[inline]
#[allow(clippy::manual_rotate)] // as in `encrypt`
pub(super) fn decrypt(keys: &RoundKeys, block: u64) -> u64 {
    #[allow(clippy::cast_possible_truncation)]
    let (mut x, y0) = ((block >> 32) as u32, block as u32);
    // Round 26 undone the plain way: `y` of round 25's output.
    let mut y = (y0 ^ x).rotate_right(3);
    let mut i = ROUNDS - 1;
    loop {
        let c = (x ^ keys[i]).wrapping_sub(y);
        // `x` of the previous round, and (below) its `y`, both from `c` and `y`; rotations as
        // shifts, as in `encrypt`.
        x = (c << 8) | (c >> 24);
        if i == 0 {
            break;
        }
        y = ((c << 5) | (c >> 27)) ^ ((y >> 3) | (y << 29));
        i -= 1;
    }
    (u64::from(x) << 32) | u64::from(y)
}

/// The first block of the key derivation's message `j` (see [`derive`]): `"shard"`, then `j`,
/// the key version and the prefix's length, read little-endian.
fn first_block(j: u8, version: u8, prefix_len: u8) -> u64 {
    u64::from_le_bytes([b's', b'h', b'a', b'r', b'd', j, version, prefix_len])
}

/// CBC-MAC under `master` of message `j`: its first block, then the prefix's bytes in blocks of
/// 8 (little-endian, the last one padded with zeros).
fn mac(master: &RoundKeys, j: u8, version: u8, prefix: &[u8]) -> u64 {
    // At most MAX_PREFIX_LEN (63) bytes: the constructor checked.
    #[allow(clippy::cast_possible_truncation)]
    let mut h = encrypt(master, first_block(j, version, prefix.len() as u8));
    for chunk in prefix.chunks(8) {
        let mut block = [0u8; 8];
        block[..chunk.len()].copy_from_slice(chunk);
        h = encrypt(master, h ^ u64::from_le_bytes(block));
    }
    h
}

/// The round keys for one (key, prefix, key version): Speck64/128 under the key derived as
/// `CBC-MAC(0 ‖ m) ‖ CBC-MAC(1 ‖ m)` under the master key, where `m` names the version and the
/// prefix. The first block holds the message's length, so no message is a prefix of another:
/// CBC-MAC is a pseudorandom function on such a set (Bellare, Kilian, Rogaway 1994; Petrank,
/// Rackoff 2000). So each (prefix, version) gets an independent-looking permutation: `user_`
/// and `note_` of one number are unrelated texts, and neither decodes as the other.
pub(super) fn derive(master: &RoundKeys, version: u8, prefix: &[u8]) -> RoundKeys {
    let a = mac(master, 0, version, prefix);
    let b = mac(master, 1, version, prefix);
    // The four 32-bit words of the derived key.
    #[allow(clippy::cast_possible_truncation)]
    schedule([a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's Speck64/128 vector (appendix C): key `1b1a1918 13121110 0b0a0908 03020100`,
    /// plaintext `3b726574 7475432d`, ciphertext `8c6fa548 454e028b`.
    #[test]
    fn the_papers_test_vector() {
        let keys = schedule([0x0302_0100, 0x0b0a_0908, 0x1312_1110, 0x1b1a_1918]);
        assert_eq!(encrypt(&keys, 0x3b72_6574_7475_432d), 0x8c6f_a548_454e_028b);
        assert_eq!(decrypt(&keys, 0x8c6f_a548_454e_028b), 0x3b72_6574_7475_432d);
        // The implementation guide's byte order: key bytes 00 01 02 03 08 09 0a 0b 10 ...
        let bytes = [
            0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x18, 0x19,
            0x1a, 0x1b,
        ];
        assert_eq!(schedule_bytes(&bytes), keys);
    }

    #[test]
    fn decrypt_undoes_encrypt() {
        let keys = schedule([1, 2, 3, 4]);
        for v in [0, 1, u64::MAX, 1 << 63, 0x0123_4567_89ab_cdef] {
            assert_eq!(decrypt(&keys, encrypt(&keys, v)), v);
            assert_ne!(encrypt(&keys, v), v);
        }
    }

    #[test]
    fn derived_keys_differ_by_prefix_version_and_key() {
        let master = schedule([1, 2, 3, 4]);
        let other = schedule([1, 2, 3, 5]);
        let a = derive(&master, 0, b"note");
        assert_ne!(a, derive(&master, 0, b"user"));
        assert_ne!(a, derive(&master, 1, b"note"));
        assert_ne!(a, derive(&other, 0, b"note"));
        // The length is in the first block: "note" and "note\0" pad to the same block.
        assert_ne!(derive(&master, 0, b""), derive(&master, 0, b"\0"));
        assert_ne!(
            derive(&master, 0, b"abcdefgh"),
            derive(&master, 0, b"abcdefgh\0")
        );
    }
}
