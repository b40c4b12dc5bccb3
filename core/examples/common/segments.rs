//! What the dense-ID examples of every database share (`segments`, `mysql_segments`): the
//! `order` and `threads` modes over the `DenseIds` of the example's database (`super`).
use std::collections::HashSet;
use std::sync::Arc;

use super::{DenseIds, SegmentError};

/// The `order` mode: 150 IDs from `next_id` and 150 from `next_ids` of a client `connect`
/// makes, dense; `close()` gives the rest back, so a new client continues at the next number.
/// The JSON line, with `stats()` after close when `with_stats`.
pub fn order(
    connect: impl Fn() -> Result<DenseIds, SegmentError>,
    with_stats: bool,
) -> Result<String, SegmentError> {
    let ids = connect()?;
    let mut got: Vec<u64> = (0..150).map(|_| ids.next_id()).collect::<Result<_, _>>()?;
    let mut batch = [0u64; 150];
    ids.next_ids(&mut batch)?;
    got.extend(batch);
    let skipped = ids.close();
    // After close: a prefetch under way is counted too.
    let stats = ids.stats();
    let closed = ids
        .next_id()
        .map_or_else(|e| e.kind().code().to_string(), |_| "no error".into());
    let again = connect()?;
    let next = again.next_id()?;
    again.close();
    let dense = got.iter().enumerate().all(|(i, &id)| id == i as u64 + 1);
    let stats = if with_stats {
        format!(", \"stats\": {:?}", stats.values())
    } else {
        String::new()
    };
    Ok(format!(
        "{{\"count\": {}, \"dense\": {dense}, \"next\": {next}, \"skipped\": {skipped}, \"closed\": \"{closed}\"{stats}}}",
        got.len()
    ))
}

/// The `threads` mode: 8 threads x 20,000 IDs on one client, which is then closed; the JSON
/// line of how many IDs and how many distinct.
pub fn threads(ids: DenseIds) -> Result<String, SegmentError> {
    let ids = Arc::new(ids);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let ids = Arc::clone(&ids);
            std::thread::spawn(move || {
                (0..20_000)
                    .map(|_| ids.next_id())
                    .collect::<Result<Vec<u64>, _>>()
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut total = 0;
    for t in threads {
        for id in t.join().expect("thread")? {
            total += 1;
            all.insert(id);
        }
    }
    ids.close();
    Ok(format!("{{\"total\": {total}, \"unique\": {}}}", all.len()))
}
