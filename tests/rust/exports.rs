//! The exported functions of a binding, read from its sources: the panic-boundary tests of
//! the C and Node bindings check that every export's body runs inside the binding's boundary.
//! (A source check, because a boundary forgotten on a new export shows only when that export
//! panics, which a test cannot make happen on purpose.)

use std::path::Path;

/// One exported function: the file it is in, its name, and its body (between the braces).
pub struct Export {
    pub file: String,
    pub name: String,
    pub body: String,
}

/// Every function in `dir/*.rs` whose `pub ... fn` follows a line matching `is_marker` (after
/// doc comments and other attributes in between).
pub fn exports(dir: &Path, is_marker: impl Fn(&str) -> bool) -> Vec<Export> {
    let mut found = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the binding's src directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a source file");
        let lines: Vec<&str> = text.lines().collect();
        let offsets: Vec<usize> = lines
            .iter()
            .scan(0, |at, line| {
                let start = *at;
                *at += line.len() + 1;
                Some(start)
            })
            .collect();
        for (i, line) in lines.iter().enumerate() {
            if !is_marker(line.trim()) {
                continue;
            }
            // The function after the attribute (skipping doc comments and attributes).
            let Some(j) = (i + 1..lines.len()).find(|&j| {
                let t = lines[j].trim();
                !(t.starts_with("///") || t.starts_with("#[") || t.starts_with("//"))
            }) else {
                continue;
            };
            let t = lines[j].trim();
            let Some(rest) = t.split_once(" fn ").map(|(_, r)| r) else {
                continue; // a struct, an impl block, an object type
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(Export {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                name,
                body: body_after(&text, offsets[j]),
            });
        }
    }
    found
}

/// The text between the first `{` at `from` or after it (outside the parameter list) and its
/// matching `}`.
fn body_after(text: &str, from: usize) -> String {
    let bytes = text.as_bytes();
    let mut parens = 0i32;
    let mut start = None;
    let mut depth = 0i32;
    for (k, &b) in bytes.iter().enumerate().skip(from) {
        match (start, b) {
            (None, b'(') => parens += 1,
            (None, b')') => parens -= 1,
            (None, b'{') if parens == 0 => {
                start = Some(k + 1);
                depth = 1;
            }
            (Some(_), b'{') => depth += 1,
            (Some(s), b'}') => {
                depth -= 1;
                if depth == 0 {
                    return text[s..k].to_owned();
                }
            }
            _ => {}
        }
    }
    panic!("no body after byte {from}")
}
