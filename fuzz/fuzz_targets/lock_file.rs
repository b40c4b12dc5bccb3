//! The lease's lock-file reader on arbitrary text: never panics, and never reads a ceiling
//! that the text does not state as exactly `ceiling <digits>` on the third of three lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardid::Layout;
use shardid::lease::read_lock_file;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(Some(ceiling)) = read_lock_file(text, &Layout::TWITTER) {
        let lines: Vec<&str> = text.split_terminator('\n').collect();
        assert_eq!(lines.len(), 3, "{text:?}");
        assert!(text.ends_with('\n'));
        let digits = lines[2].strip_prefix("ceiling ").expect("a ceiling line");
        assert!(digits.bytes().all(|b| b.is_ascii_digit()), "{text:?}");
        assert_eq!(digits.parse::<u64>().ok(), Some(ceiling));
    }
    // Every cut of an accepted text is refused: a write that stopped part way is never
    // read as a smaller ceiling or as none.
    if let Ok(Some(_)) = read_lock_file(text, &Layout::TWITTER) {
        for cut in 1..text.len() {
            if text.is_char_boundary(cut) {
                assert!(read_lock_file(&text[..cut], &Layout::TWITTER).is_err());
            }
        }
    }
});
