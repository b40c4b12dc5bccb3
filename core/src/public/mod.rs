//! Public IDs: short, opaque, reversible text for an ID in URLs and APIs, the same in every
//! language.
//!
//! A time-sortable ID in a URL tells whoever sees two of them when each was made, on which
//! shard, and how many were made in between (the German tank problem: order volume, sign-up
//! rate, the number of shards). A [`PublicIds`] turns an ID into text such as
//! `note_0923h26jsg2d8g` and back, with a secret key:
//!
//! ```
//! use shardid::{Encoding, PublicIds};
//!
//! let key = *b"0123456789abcdef"; // 16 secret bytes: keep them out of the source
//! let notes = PublicIds::new(&key, 0, "note", Encoding::Base32)?;
//! let text = notes.encode(4_036_916_263_258_161_152)?;
//! assert_eq!(text, "note_0923h26jsg2d8g");
//! assert_eq!(notes.decode(&text)?, 4_036_916_263_258_161_152);
//! # Ok::<(), shardid::Error>(())
//! ```
//!
//! # What it is
//! - **A keyed permutation of 64-bit values**: Speck64/128 (below), a published 64-bit block
//!   cipher, under a key derived from the 16-byte key, the *type prefix* and the key version.
//!   Consecutive IDs give unrelated texts (half their bits differ on average), and without the
//!   key nothing about the ID — time, shard, sequence, order — can be read from the text.
//! - **Bound to a type prefix**: `user_…` and `note_…` of the same number are unrelated texts,
//!   and one is refused where the other is expected ([`Error::PublicIdPrefix`]).
//! - **Key rotation**: the text carries the version (0 to 31) of the key that made it, one
//!   symbol after the prefix. Encoding uses the current key; decoding takes any key added with
//!   [`PublicIds::with_old_key`], so links made before a rotation keep working.
//! - **Fixed length** for every ID of an encoding, so the length leaks nothing:
//!
//! | encoding | body | the example's ID and key |
//! | --- | --- | --- |
//! | `base32` (Crockford's: either case, no i/l/o/u; i and l read as 1, o as 0) | 14 | `note_0923h26jsg2d8g` |
//! | `base32check` (and Crockford's check symbol: a digit or `*~$=u`) | 15 | `note_0923h26jsg2d8gh` |
//! | `base58` (Bitcoin's alphabet) | 12 | `note_1RGDbnBCk5Gs` |
//! | `base62` (0-9 A-Z a-z) | 12 | `note_0CS7mKTPrMUi` |
//!
//! The body is the key version's symbol (the alphabet's digit of that number), then the
//! encrypted ID in a fixed number of digits (13 in base32, 11 in the others), then in
//! `base32check` the check symbol of the whole body's number, modulo 37.
//!
//! # What it is not
//! **It hides; it does not authenticate.** Any text of the right shape decodes to *some*
//! 64-bit value; only that value's range is checked ([`PublicIds::with_layout`]: by default
//! Instagram's, which holds every ID that fits a signed 64-bit column). So:
//! - a text made under *another key of the same version*, or forged, decodes to an unrelated
//!   value, which is refused ([`Error::PublicIdMismatch`]) only when it falls outside the
//!   layout (for a 63-bit layout, half the time). Give every key its own version (decoding
//!   refuses a version it does not hold: [`Error::UnknownKeyVersion`]), and treat a decoded
//!   ID like any ID from a request: look it up, check the caller may see it.
//! - it is not a capability: knowing a text is knowing the ID. Do not use public IDs where
//!   guessing one must be impossible (password resets, unlisted documents); use random tokens.
//! - a 64-bit block cipher meets the birthday bound after ~2^32 blocks under one key: that
//!   limits what an attacker learns from *comparing* texts of billions of IDs (one permutation
//!   is only distinguishable from random, never inverted); rotate keys well before.
//!
//! Errors never show the decoded value of a refused text (that would let anyone decrypt by
//! asking): decoding reports only what is wrong with the text.
//!
//! # Why Speck64/128
//! Public IDs need a permutation of exactly 64 bits (a wider block would lengthen the text),
//! keyed, invertible, fast, and simple enough to write again in PL/pgSQL over `bigint` with no
//! overflow. Speck64/128 (Beaulieu et al., 2013) is a published 64-bit block cipher with a
//! 128-bit key: 27 rounds of additions, rotations and XORs on 32-bit words, so every sum fits a
//! `bigint` and is masked back. Its best known attacks (differential and linear cryptanalysis,
//! published since 2014) reach fewer than its 27 rounds. A four-round Feistel network over
//! `SipHash` would need 64-bit arithmetic that overflows a `bigint`, and a 128-bit cipher (AES)
//! would double the text. The key for each (prefix, version) is derived by CBC-MAC with Speck
//! under the key, over messages that begin with their length, a pseudorandom function on
//! such messages (Bellare, Kilian, Rogaway 1994; Petrank, Rackoff 2000).
//!
//! # Keys
//! Exactly [`KEY_LEN`] (16) random bytes (`head -c 16 /dev/urandom`, `secrets.token_bytes(16)`),
//! kept like a password: anyone with the key reads every ID. Another size is refused
//! ([`Error::InvalidArgument`]): a short key would be weak, and a longer one would need a hash
//! in every language (PL/pgSQL included) for no gain over 128 bits. A `PublicIds` keeps only
//! the round keys it derives (never the key itself), and its `Debug` shows neither.

mod speck;
mod text;

use core::fmt;

use crate::{Error, Layout};

use speck::RoundKeys;

/// The size of a key, in bytes: exactly 16 (Speck64/128's key).
pub const KEY_LEN: usize = 16;
/// The highest key version: versions are 0 to 31 (one symbol of every alphabet).
pub const MAX_KEY_VERSION: u32 = 31;
/// The most keys one [`PublicIds`] holds: its current key and three old ones.
pub const MAX_KEYS: usize = 4;
/// The longest type prefix, in bytes (`TypeID`'s limit).
pub const MAX_PREFIX_LEN: usize = 63;
/// The longest public ID: the longest prefix, its `_`, and `base32check`'s 15 symbols.
pub const MAX_TEXT_LEN: usize = MAX_PREFIX_LEN + 1 + 15;

/// The reason a key of the wrong size is refused with (`INVALID_ARGUMENT` on `key`).
pub const KEY_SIZE: &str =
    "must be exactly 16 bytes (128 bits): make one with `head -c 16 /dev/urandom`";
/// The reason a key version above [`MAX_KEY_VERSION`] is refused with.
pub const KEY_VERSION_RANGE: &str = "must be 0 to 31";
/// The reason a second key of one version is refused with.
pub const KEY_VERSION_TAKEN: &str =
    "is already held by another key: give every key its own version";
/// The reason a key beyond [`MAX_KEYS`] is refused with.
pub const TOO_MANY_KEYS: &str = "are at most 4: the current key and three old ones";
/// The reason keys written as text ([`PublicIds::from_keys`]) are refused with when they are
/// not in its format.
pub const KEYS_FORMAT: &str = "must be 32 hex digits (a 16-byte key, version 0), or VERSION:HEX pairs separated by commas, the highest version current: 2:<32 hex digits>,1:<32 hex digits>";
/// The reason a bad prefix is refused with.
pub const PREFIX_RULE: &str =
    "must be empty or 1 to 63 of a-z, 0-9 and _, starting with a letter and not ending with _";

/// How the body of a public ID is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Encoding {
    /// Crockford's base32: 14 symbols, read in either case, with i and l read as 1 and o as 0.
    Base32,
    /// Crockford's base32 and its check symbol: 15 symbols; a mistyped symbol or two swapped
    /// neighbours are refused ([`Error::PublicIdCheck`]).
    Base32Check,
    /// Bitcoin's base58 (no 0, O, I, l): 12 symbols, case matters.
    Base58,
    /// Base62 (0-9, A-Z, a-z): 12 symbols, case matters.
    Base62,
}

impl Encoding {
    /// Every encoding, in the order bindings list them.
    pub const ALL: [Encoding; 4] = [
        Encoding::Base32,
        Encoding::Base32Check,
        Encoding::Base58,
        Encoding::Base62,
    ];

    /// The name every binding uses: `"base32"`, `"base32check"`, `"base58"`, `"base62"`.
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Base32 => "base32",
            Encoding::Base32Check => "base32check",
            Encoding::Base58 => "base58",
            Encoding::Base62 => "base62",
        }
    }

    /// The encoding named `name` ([`Encoding::name`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on `encoding`, reason [`Encoding::UNKNOWN`].
    pub fn from_name(name: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|e| e.name() == name)
            .ok_or(Error::InvalidArgument {
                argument: "encoding",
                reason: Self::UNKNOWN,
            })
    }

    /// The reason an unknown encoding name is refused with.
    pub const UNKNOWN: &'static str =
        "must be \"base32\", \"base32check\", \"base58\" or \"base62\"";

    /// The length of the body after the prefix and its `_`: 14, 15, 12 or 12.
    pub const fn body_len(self) -> usize {
        1 + self.digits() + matches!(self, Encoding::Base32Check) as usize
    }

    /// Whether the text is read in either case (Crockford's base32, prefix included).
    pub const fn ignores_case(self) -> bool {
        matches!(self, Encoding::Base32 | Encoding::Base32Check)
    }
}

/// The shape of a public ID without its key: a type prefix and an encoding. What can be
/// checked where the key must not be (a browser, a router): [`Format::check`] and
/// [`Format::pattern`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Format {
    prefix: [u8; MAX_PREFIX_LEN],
    prefix_len: u8,
    encoding: Encoding,
}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Format")
            .field("prefix", &self.prefix())
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl Format {
    /// The format of `prefix` (empty for none: then the text is the body alone) and `encoding`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on `prefix` ([`PREFIX_RULE`]): up to 63 of `a-z`, `0-9` and
    /// `_`, starting with a letter and not ending with `_`.
    pub const fn new(prefix: &str, encoding: Encoding) -> Result<Self, Error> {
        let bytes = prefix.as_bytes();
        let bad = Err(Error::InvalidArgument {
            argument: "prefix",
            reason: PREFIX_RULE,
        });
        if bytes.len() > MAX_PREFIX_LEN {
            return bad;
        }
        let mut out = [0u8; MAX_PREFIX_LEN];
        let mut i = 0;
        while i < bytes.len() {
            let ok = match bytes[i] {
                b'a'..=b'z' => true,
                b'0'..=b'9' | b'_' => i > 0 && (bytes[i] != b'_' || i + 1 < bytes.len()),
                _ => false,
            };
            if !ok {
                return bad;
            }
            out[i] = bytes[i];
            i += 1;
        }
        Ok(Self {
            prefix: out,
            // At most 63.
            #[allow(clippy::cast_possible_truncation)]
            prefix_len: bytes.len() as u8,
            encoding,
        })
    }

    /// The type prefix (without its `_`).
    pub fn prefix(&self) -> &str {
        // Only ASCII bytes were copied in.
        core::str::from_utf8(self.prefix_bytes()).unwrap_or_default()
    }

    fn prefix_bytes(&self) -> &[u8] {
        &self.prefix[..self.prefix_len as usize]
    }

    /// The encoding.
    pub const fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The length of every public ID of this format, in bytes (all ASCII).
    pub const fn text_len(&self) -> usize {
        self.head_len() + self.encoding.body_len()
    }

    /// The prefix and its `_`, or nothing.
    const fn head_len(&self) -> usize {
        match self.prefix_len {
            0 => 0,
            n => n as usize + 1,
        }
    }

    /// Checks everything about `text` that needs no key — the prefix, the length, the alphabet,
    /// the check symbol, that the digits spell a 64-bit value — and returns the key version it
    /// names. What a browser can do: it cannot decode without the key.
    ///
    /// # Errors
    /// [`Error::PublicIdPrefix`], [`Error::PublicIdAlphabet`], [`Error::PublicIdLength`],
    /// [`Error::PublicIdOverflow`], [`Error::PublicIdCheck`], in that order of checking.
    pub fn check(&self, text: &str) -> Result<u32, Error> {
        self.parse(text.as_bytes())
            .map(|(version, _)| u32::from(version))
    }

    /// [`Format::check`] on bytes (C, the WebAssembly module), which need not be UTF-8.
    ///
    /// # Errors
    /// As [`Format::check`].
    pub fn check_bytes(&self, text: &[u8]) -> Result<u32, Error> {
        self.parse_cold(text).map(|(version, _)| u32::from(version))
    }

    /// [`Format::parse`] out of line, for the shape check: decoding inlines its own copy.
    #[inline(never)]
    fn parse_cold(&self, text: &[u8]) -> Result<(u8, u64), Error> {
        self.parse(text)
    }

    /// The key version and the encrypted value of a text.
    #[inline]
    fn parse(&self, text: &[u8]) -> Result<(u8, u64), Error> {
        let head = self.head_len();
        if head > 0 {
            let prefix = self.prefix_bytes();
            if text.len() <= prefix.len() || text[prefix.len()] != b'_' {
                return Err(Error::PublicIdPrefix);
            }
            // Byte by byte with no early exit (a branch-free loop): a letter of the prefix
            // matches either case in base32 (its 0x20 bit is folded in), anything else exactly.
            let fold = if self.encoding.ignores_case() {
                0x20
            } else {
                0
            };
            let mut diff = 0u8;
            for (&t, &p) in text[..prefix.len()].iter().zip(prefix) {
                let f = if p.is_ascii_lowercase() { fold } else { 0 };
                diff |= (t | f) ^ p;
            }
            if diff != 0 {
                return Err(Error::PublicIdPrefix);
            }
        }
        let body = &text[head..];
        let encoding = self.encoding;
        let digits_end = 1 + encoding.digits();
        if body.len() != encoding.body_len() {
            return Err(self.shape_error(head, body));
        }
        let version = encoding.table()[body[0] as usize];
        let value = match encoding.read_digits(&body[1..digits_end]) {
            _ if version == text::NONE => return Err(self.shape_error(head, body)),
            Err(Some(_)) => return Err(self.shape_error(head, body)),
            Err(None) => Err(Error::PublicIdOverflow),
            Ok(value) => Ok(value),
        };
        if encoding == Encoding::Base32Check {
            let Some(check) = text::check_value(body[digits_end]) else {
                return Err(self.shape_error(head, body));
            };
            let value = value?;
            if text::check_value(text::check_symbol(version, value)) != Some(check) {
                return Err(Error::PublicIdCheck);
            }
        }
        Ok((version, value?))
    }

    /// The error of a body with a symbol outside the alphabet or of the wrong length: the
    /// first such symbol among those the body should have (its position counts the same in
    /// bytes, characters or UTF-16 units, since all before it are ASCII), else the length.
    #[cold]
    fn shape_error(&self, head: usize, body: &[u8]) -> Error {
        let encoding = self.encoding;
        let table = encoding.table();
        let digits_end = 1 + encoding.digits();
        let scanned = &body[..body.len().min(encoding.body_len())];
        for (i, &c) in scanned.iter().enumerate() {
            let ok = if i < digits_end {
                table[c as usize] != text::NONE
            } else {
                text::check_value(c).is_some()
            };
            if !ok {
                return Error::PublicIdAlphabet {
                    position: (head + i) as u64,
                };
            }
        }
        Error::PublicIdLength {
            expected: encoding.body_len() as u64,
        }
    }

    /// A regular expression that matches every public ID of this format (and a few texts
    /// decoding still refuses: an overflowing value, a wrong check symbol), with no anchors
    /// or groups: for URL routers (a Django path converter's `regex`) and quick checks. The
    /// same syntax works in Python's `re`, JavaScript and PostgreSQL.
    pub const fn pattern(&self) -> Pattern<'_> {
        Pattern(self)
    }

    /// Writes the version symbol, the digits of `value` and the check symbol after the
    /// prefix into `out`, which holds [`Format::text_len`] bytes.
    #[inline]
    fn write(&self, version: u8, value: u64, out: &mut [u8]) {
        let head = self.head_len();
        if head > 0 {
            out[..head - 1].copy_from_slice(self.prefix_bytes());
            out[head - 1] = b'_';
        }
        self.write_body(version, value, &mut out[head..]);
    }

    /// Writes the body alone: the version symbol, the digits, the check symbol.
    #[inline]
    fn write_body(&self, version: u8, value: u64, body: &mut [u8]) {
        body[0] = self.encoding.alphabet()[version as usize];
        self.encoding.write_digits(value, &mut body[1..]);
        if self.encoding == Encoding::Base32Check {
            body[14] = text::check_symbol(version, value);
        }
    }
}

/// [`Format::pattern`]: render it with [`fmt::Display`].
#[derive(Clone, Copy, Debug)]
pub struct Pattern<'a>(&'a Format);

impl Pattern<'_> {
    /// Writes the pattern into `out`; its length. No formatting machinery: the WebAssembly
    /// module, which leaves it out, renders patterns too.
    pub fn write_to(&self, out: &mut [u8; MAX_PATTERN_LEN]) -> usize {
        let format = self.0;
        let encoding = format.encoding;
        let mut n = 0;
        let mut push = |bytes: &[u8]| {
            out[n..n + bytes.len()].copy_from_slice(bytes);
            n += bytes.len();
        };
        for &c in format.prefix_bytes() {
            if encoding.ignores_case() && c.is_ascii_lowercase() {
                push(&[b'[', c, c.to_ascii_uppercase(), b']']);
            } else {
                push(&[c]);
            }
        }
        if format.prefix_len > 0 {
            push(b"_");
        }
        push(match encoding {
            // Every letter but u, in either case: i, l and o read as digits.
            Encoding::Base32 => b"[0-9A-TV-Za-tv-z]{14}",
            Encoding::Base32Check => b"[0-9A-TV-Za-tv-z]{14}[0-9A-Za-z*~$=]",
            Encoding::Base58 => b"[1-9A-HJ-NP-Za-km-z]{12}",
            Encoding::Base62 => b"[0-9A-Za-z]{12}",
        });
        n
    }
}

/// The longest [`Format::pattern`]: 63 prefix letters as `[aA]`, the `_`, and
/// `base32check`'s 36 bytes.
pub const MAX_PATTERN_LEN: usize = 4 * MAX_PREFIX_LEN + 1 + 36;

impl fmt::Display for Pattern<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; MAX_PATTERN_LEN];
        let n = self.write_to(&mut buf);
        // ASCII only.
        f.write_str(core::str::from_utf8(&buf[..n]).unwrap_or_default())
    }
}

/// One key of a [`PublicIds`]: its version and the round keys derived for the prefix.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Keyed {
    version: u8,
    rounds: RoundKeys,
}

/// Encodes IDs as public IDs and decodes them back, under a secret key (see the
/// [module docs](self)). Build one per type prefix at start-up (deriving the round keys costs
/// a few microseconds); encoding and decoding then take tens of nanoseconds, allocate nothing,
/// and may run on any number of threads.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PublicIds {
    format: Format,
    /// The current key (encoding) first, then the old ones (decoding only).
    keys: [Option<Keyed>; MAX_KEYS],
    /// Version symbol → index into `keys`, or `u8::MAX`.
    by_version: [u8; 32],
    max_id: u64,
}

impl fmt::Debug for PublicIds {
    /// The prefix, the encoding, the key versions and the layout's largest ID; never a key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut versions = [0u32; MAX_KEYS];
        let n = self.key_versions(&mut versions);
        f.debug_struct("PublicIds")
            .field("prefix", &self.format.prefix())
            .field("encoding", &self.format.encoding)
            .field("key_versions", &&versions[..n])
            .field("max_id", &self.max_id)
            .finish_non_exhaustive()
    }
}

/// 32 hex digits (either case) as 16 bytes.
fn unhex(hex: &str) -> Option<[u8; KEY_LEN]> {
    let digits = hex.as_bytes();
    if digits.len() != 2 * KEY_LEN {
        return None;
    }
    let value = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let mut key = [0u8; KEY_LEN];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = value(digits[2 * i])? << 4 | value(digits[2 * i + 1])?;
    }
    Some(key)
}

/// A 16-byte key, or the error for another size.
fn key16(key: &[u8]) -> Result<&[u8; KEY_LEN], Error> {
    key.try_into().map_err(|_| Error::InvalidArgument {
        argument: "key",
        reason: KEY_SIZE,
    })
}

fn version_u8(version: u32) -> Result<u8, Error> {
    match u8::try_from(version) {
        Ok(v) if version <= MAX_KEY_VERSION => Ok(v),
        _ => Err(Error::InvalidArgument {
            argument: "key_version",
            reason: KEY_VERSION_RANGE,
        }),
    }
}

impl PublicIds {
    /// Public IDs with `key` (exactly [`KEY_LEN`] bytes) as key version `key_version` (0 to
    /// 31), type `prefix` (see [`Format::new`]) and `encoding`, for IDs of Instagram's layout
    /// (every value that fits a signed 64-bit column; see [`PublicIds::with_layout`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on `key`, `key_version` or `prefix`.
    pub fn new(
        key: &[u8],
        key_version: u32,
        prefix: &str,
        encoding: Encoding,
    ) -> Result<Self, Error> {
        let key = key16(key)?;
        let version = version_u8(key_version)?;
        let format = Format::new(prefix, encoding)?;
        let mut ids = Self {
            format,
            keys: [None; MAX_KEYS],
            by_version: [u8::MAX; 32],
            max_id: Layout::INSTAGRAM.max_id(),
        };
        ids.keys[0] = Some(ids.keyed(key, version));
        ids.by_version[version as usize] = 0;
        Ok(ids)
    }

    /// Public IDs from keys written as text, as they come from an environment variable or a
    /// settings file: 32 hex digits (one key, version 0), or `VERSION:HEX` pairs separated by
    /// commas (`2:<hex>,1:<hex>`), spaces around each allowed. The highest version is the
    /// current key, the others decode only. The same rule in every language (Python's
    /// `PublicIds.from_keys`, JavaScript's `PublicIds.fromKeys`, Django's setting).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on `keys` ([`KEYS_FORMAT`], [`TOO_MANY_KEYS`]), on
    /// `key_version` (above 31, or twice), or on `prefix`.
    pub fn from_keys(keys: &str, prefix: &str, encoding: Encoding) -> Result<Self, Error> {
        let bad = Error::InvalidArgument {
            argument: "keys",
            reason: KEYS_FORMAT,
        };
        let mut parsed = [(0u32, [0u8; KEY_LEN]); MAX_KEYS];
        let mut n = 0;
        for item in keys.split(',') {
            let item = item.trim_matches(|c: char| c.is_ascii_whitespace());
            let (version, hex) = match item.split_once(':') {
                Some((v, hex)) if !v.is_empty() && v.len() <= 2 => {
                    let v = crate::parse_decimal(v.as_bytes()).ok_or(bad)?;
                    (u32::try_from(v).map_err(|_| bad)?, hex)
                }
                None if n == 0 && !keys.contains(',') => (0, item),
                _ => return Err(bad),
            };
            if n == MAX_KEYS {
                return Err(Error::InvalidArgument {
                    argument: "keys",
                    reason: TOO_MANY_KEYS,
                });
            }
            parsed[n] = (version, unhex(hex).ok_or(bad)?);
            n += 1;
        }
        let parsed = &mut parsed[..n];
        // The current key first: the highest version (a version given twice is refused below).
        // An insertion sort of at most four: the library's sort is kilobytes of WebAssembly.
        for i in 1..parsed.len() {
            let mut j = i;
            while j > 0 && parsed[j - 1].0 < parsed[j].0 {
                parsed.swap(j - 1, j);
                j -= 1;
            }
        }
        let ((version, key), old) = parsed.split_first().ok_or(bad)?;
        let mut ids = Self::new(key, *version, prefix, encoding)?;
        for (version, key) in old {
            ids = ids.with_old_key(*version, key)?;
        }
        Ok(ids)
    }

    #[inline(never)] // once per key: a single copy for every constructor
    fn keyed(&self, key: &[u8; KEY_LEN], version: u8) -> Keyed {
        let master = speck::schedule_bytes(key);
        Keyed {
            version,
            rounds: speck::derive(&master, version, self.format.prefix_bytes()),
        }
    }

    /// Also decodes texts made with `key` as version `key_version`: an old key, after a
    /// rotation. Encoding keeps using the current key.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on `key` (its size), on `key_version` (above 31, or a version
    /// this `PublicIds` already holds), or on `keys` (more than [`MAX_KEYS`] in all).
    pub fn with_old_key(mut self, key_version: u32, key: &[u8]) -> Result<Self, Error> {
        let key = key16(key)?;
        let version = version_u8(key_version)?;
        if self.by_version[version as usize] != u8::MAX {
            return Err(Error::InvalidArgument {
                argument: "key_version",
                reason: KEY_VERSION_TAKEN,
            });
        }
        let Some(slot) = self.keys.iter().position(Option::is_none) else {
            return Err(Error::InvalidArgument {
                argument: "keys",
                reason: TOO_MANY_KEYS,
            });
        };
        self.keys[slot] = Some(self.keyed(key, version));
        // Below MAX_KEYS.
        #[allow(clippy::cast_possible_truncation)]
        {
            self.by_version[version as usize] = slot as u8;
        }
        Ok(self)
    }

    /// Takes IDs of `layout`: encoding refuses a value that is not one ([`Error::InvalidId`]),
    /// and decoding refuses a text whose value is not one ([`Error::PublicIdMismatch`]). The
    /// default, Instagram's layout, holds every ID of a signed 64-bit column (Twitter's and
    /// Sonyflake's too); Discord's IDs need `Layout::DISCORD`.
    #[must_use]
    pub const fn with_layout(mut self, layout: Layout) -> Self {
        self.max_id = layout.max_id();
        self
    }

    /// The format: prefix and encoding.
    pub const fn format(&self) -> &Format {
        &self.format
    }

    /// The type prefix.
    pub fn prefix(&self) -> &str {
        self.format.prefix()
    }

    /// The encoding.
    pub const fn encoding(&self) -> Encoding {
        self.format.encoding
    }

    /// The largest ID taken (the layout's).
    pub const fn max_id(&self) -> u64 {
        self.max_id
    }

    /// The current key's version, which every text this encodes carries.
    pub fn key_version(&self) -> u32 {
        self.keys[0].map_or(0, |k| u32::from(k.version))
    }

    /// Writes the versions of every key held (the current one first) into `out`; their count.
    pub fn key_versions(&self, out: &mut [u32; MAX_KEYS]) -> usize {
        let mut n = 0;
        for k in self.keys.iter().flatten() {
            out[n] = u32::from(k.version);
            n += 1;
        }
        n
    }

    /// The length of every text this encodes.
    pub const fn text_len(&self) -> usize {
        self.format.text_len()
    }

    /// The public ID of `id`.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `id` is not an ID of the layout.
    #[inline]
    pub fn encode(&self, id: u64) -> Result<PublicId, Error> {
        if id > self.max_id {
            return Err(Error::InvalidId { id });
        }
        let mut out = PublicId {
            bytes: [0; MAX_TEXT_LEN],
            // At most MAX_TEXT_LEN (79).
            #[allow(clippy::cast_possible_truncation)]
            len: self.text_len() as u8,
        };
        // The whole prefix array at once (a copy of a known size, where the prefix's own
        // length would call `memcpy`); the `_` and the body then go over its tail.
        out.bytes[..MAX_PREFIX_LEN].copy_from_slice(&self.format.prefix);
        let current = self.current()?;
        let value = speck::encrypt(&current.rounds, id);
        let head = self.format.head_len();
        if head > 0 {
            out.bytes[head - 1] = b'_';
        }
        self.format
            .write_body(current.version, value, &mut out.bytes[head..]);
        Ok(out)
    }

    /// The current key.
    fn current(&self) -> Result<&Keyed, Error> {
        // Every constructor sets it: the error is unreachable.
        self.keys[0].as_ref().ok_or(Error::InvalidArgument {
            argument: "keys",
            reason: "hold no current key",
        })
    }

    /// Writes the public ID of `id` into the start of `out` (ASCII, [`PublicIds::text_len`]
    /// bytes); its length.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `id` is not an ID of the layout; [`Error::InvalidArgument`]
    /// on `out` when it is shorter than [`PublicIds::text_len`].
    #[inline]
    pub fn encode_into(&self, id: u64, out: &mut [u8]) -> Result<usize, Error> {
        if id > self.max_id {
            return Err(Error::InvalidId { id });
        }
        let n = self.text_len();
        let Some(out) = out.get_mut(..n) else {
            return Err(Error::InvalidArgument {
                argument: "out",
                reason: "is shorter than the public ID",
            });
        };
        let current = self.current()?;
        let value = speck::encrypt(&current.rounds, id);
        self.format.write(current.version, value, out);
        Ok(n)
    }

    /// The ID a public ID stands for.
    ///
    /// # Errors
    /// What [`Format::check`] finds; then [`Error::UnknownKeyVersion`] when the text's key
    /// version is not held, and [`Error::PublicIdMismatch`] when its value is not an ID of
    /// the layout (made under another key or prefix, or forged). No error shows the value.
    #[inline]
    pub fn decode(&self, text: &str) -> Result<u64, Error> {
        self.decode_bytes(text.as_bytes())
    }

    /// [`PublicIds::decode`] on bytes (C, the WebAssembly module), which need not be UTF-8.
    ///
    /// # Errors
    /// As [`PublicIds::decode`].
    #[inline]
    pub fn decode_bytes(&self, text: &[u8]) -> Result<u64, Error> {
        let (version, value) = self.format.parse(text)?;
        let keyed = self
            .by_version
            .get(version as usize)
            .and_then(|&slot| self.keys.get(slot as usize))
            .and_then(Option::as_ref)
            .ok_or(Error::UnknownKeyVersion {
                version: u64::from(version),
            })?;
        let id = speck::decrypt(&keyed.rounds, value);
        if id > self.max_id {
            return Err(Error::PublicIdMismatch);
        }
        Ok(id)
    }
}

/// A public ID as [`PublicIds::encode`] returns it: ASCII text on the stack, no allocation.
/// Derefs to `str`; compares, orders and hashes as its text.
#[derive(Clone, Copy)]
pub struct PublicId {
    bytes: [u8; MAX_TEXT_LEN],
    len: u8,
}

impl PublicId {
    /// The text.
    pub fn as_str(&self) -> &str {
        // The encoder writes ASCII only.
        core::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The text's bytes (ASCII).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl PartialEq for PublicId {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for PublicId {}

impl core::hash::Hash for PublicId {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialOrd for PublicId {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PublicId {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl core::ops::Deref for PublicId {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for PublicId {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for PublicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for PublicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for PublicId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for PublicId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
