//! Public IDs: decoding any bytes never panics, and whatever decodes is the ID whose text
//! (up to base32's case and look-alikes) it was: a text never means a second ID. Encoding any
//! ID of the layout decodes back to it; keys as text never panic either.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shardid::public::Format;
use shardid::{Encoding, Layout, PublicIds};

#[derive(Arbitrary, Debug)]
struct Input {
    encoding: u8,
    version: u8,
    prefixed: bool,
    id: u64,
    text: Vec<u8>,
    keys: String,
}

fuzz_target!(|input: Input| {
    let encoding = Encoding::ALL[usize::from(input.encoding) % Encoding::ALL.len()];
    let prefix = if input.prefixed { "note" } else { "" };
    let ids = PublicIds::new(
        b"fuzzing key 0123",
        u32::from(input.version % 32),
        prefix,
        encoding,
    )
    .expect("a valid key")
    .with_layout(Layout::DISCORD);
    let text = ids.encode(input.id).expect("every u64 is a Discord ID");
    assert_eq!(ids.decode(&text), Ok(input.id));
    if let Ok(id) = ids.decode_bytes(&input.text) {
        let made = ids.encode(id).expect("a decoded ID encodes");
        let canonical: Vec<u8> = if encoding.ignores_case() {
            input
                .text
                .iter()
                .map(|c| match c.to_ascii_lowercase() {
                    b'i' | b'l' => b'1',
                    b'o' => b'0',
                    c => c,
                })
                .collect()
        } else {
            input.text.clone()
        };
        // The prefix is compared in either case for base32: lower-case it too.
        assert_eq!(made.as_bytes(), &canonical[..], "{:?}", input.text);
        assert_eq!(
            Format::new(prefix, encoding)
                .unwrap()
                .check_bytes(&input.text),
            Ok(u32::from(input.version % 32))
        );
    }
    if let Ok(from_keys) = PublicIds::from_keys(&input.keys, "note", encoding) {
        let id = input.id >> 1;
        assert_eq!(from_keys.decode(&from_keys.encode(id).unwrap()), Ok(id));
    }
});
