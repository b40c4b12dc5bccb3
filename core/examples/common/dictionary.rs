//! What the dictionary examples of every database share (`dictionary`, `mysql_dictionary`),
//! over the `Dictionary` of the example's database (`super`).
use std::sync::Arc;

use super::{Dictionary, DictionaryError};

/// A call's error kind (`database: ...` for a driver's error), or `no error`.
pub fn kind(result: Result<impl Sized, DictionaryError>) -> String {
    match result {
        Ok(_) => "no error".into(),
        Err(e) => e
            .kind()
            .map_or_else(|| format!("database: {e}"), |k| k.code().into()),
    }
}

/// 8 threads writing overlapping batches of shared strings on one client: `batches` batches
/// of `size` strings each, drawn from `distinct` strings; every (string, ID) pair they got.
pub fn threads(
    words: &Arc<Dictionary>,
    batches: u64,
    size: u64,
    distinct: u64,
) -> Result<Vec<(String, u64)>, DictionaryError> {
    let handles: Vec<_> = (0..8u64)
        .map(|t| {
            let words = Arc::clone(words);
            std::thread::spawn(move || -> Result<Vec<(String, u64)>, DictionaryError> {
                let mut pairs = Vec::new();
                for b in 0..batches {
                    let values: Vec<String> = (0..size)
                        .map(|i| format!("s{}", (t * 7 + b * 13 + i * 31) % distinct))
                        .collect();
                    let ids = words.ids(&values)?;
                    pairs.extend(values.into_iter().zip(ids));
                }
                Ok(pairs)
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.join().expect("thread")?);
    }
    Ok(all)
}
