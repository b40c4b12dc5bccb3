//! The process's live objects, for exporters: every generator state
//! ([`crate::Generator::shared`]'s), and the segment allocators and dictionaries the bindings
//! registered. Objects are
//! held weakly: one dropped is no longer reported.

use std::string::String;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::vec::Vec;

use super::{DictionaryStats, Family, Kind, SegmentStats};
use crate::Layout;
use crate::dictionary::Cache;
use crate::segment::SegmentAllocator;

enum Source {
    Segments(Weak<SegmentAllocator>),
    Dictionary(Weak<Cache>),
}

struct Entry {
    /// The family's label values, in [`Family::labels`]' order.
    labels: Vec<String>,
    source: Source,
}

impl Entry {
    fn alive(&self) -> bool {
        match &self.source {
            Source::Segments(w) => w.strong_count() > 0,
            Source::Dictionary(w) => w.strong_count() > 0,
        }
    }
}

static LIVE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn register(labels: Vec<String>, source: Source) {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.retain(Entry::alive);
    live.push(Entry { labels, source });
}

/// Reports `allocator` (the segments of `tag` in `schema`) to exporters while it lives.
pub fn register_segments(allocator: &Arc<SegmentAllocator>, schema: &str, tag: &str) {
    register(
        std::vec![schema.into(), tag.into()],
        Source::Segments(Arc::downgrade(allocator)),
    );
}

/// Reports the dictionary whose cache is `cache` (topic `topic` in `schema`) to exporters
/// while it lives.
pub fn register_dictionary(cache: &Arc<Cache>, schema: &str, topic: &str) {
    register(
        std::vec![schema.into(), topic.into()],
        Source::Dictionary(Arc::downgrade(cache)),
    );
}

/// One object's figures (or several objects' with the same labels, added up): its family, its
/// label values in [`Family::labels`]' order, its figures in [`Family::metrics`]' order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The family.
    pub family: Family,
    /// The label values.
    pub labels: Vec<String>,
    /// The figures.
    pub values: Vec<u64>,
}

/// Every live object's figures, objects of one family with the same labels added up (the
/// largest of a [`Kind::GaugeMax`] and of a process-wide figure): generators first (by layout
/// and shard), then segment allocators and dictionaries, each in the order they were
/// made.
pub fn collect() -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::new();
    let mut add = |family: Family, labels: Vec<String>, values: &[u64]| {
        let metrics = family.metrics();
        if let Some(sample) = out
            .iter_mut()
            .find(|s| s.family == family && s.labels == labels)
        {
            for ((total, value), metric) in sample.values.iter_mut().zip(values).zip(metrics) {
                *total = if metric.process_wide || metric.kind == Kind::GaugeMax {
                    (*total).max(*value)
                } else {
                    total.saturating_add(*value)
                };
            }
        } else {
            out.push(Sample {
                family,
                labels,
                values: values.to_vec(),
            });
        }
    };
    let generator = |layout: &Layout, shard: u64| {
        std::vec![super::layout_label(layout), std::format!("{shard}")]
    };
    for (layout, shard, state) in crate::registry::shared_states() {
        add(
            Family::Generator,
            generator(&layout, shard),
            &state.stats().values(),
        );
    }
    let entries: Vec<(Vec<String>, Source)> = {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(Entry::alive);
        live.iter()
            .map(|e| {
                let source = match &e.source {
                    Source::Segments(w) => Source::Segments(w.clone()),
                    Source::Dictionary(w) => Source::Dictionary(w.clone()),
                };
                (e.labels.clone(), source)
            })
            .collect()
    };
    for (labels, source) in entries {
        match source {
            Source::Segments(w) => {
                if let Some(allocator) = w.upgrade() {
                    let stats: SegmentStats = allocator.stats();
                    add(Family::Segments, labels, &stats.values());
                }
            }
            Source::Dictionary(w) => {
                if let Some(cache) = w.upgrade() {
                    let stats: DictionaryStats = cache.stats();
                    add(Family::Dictionary, labels, &stats.values());
                }
            }
        }
    }
    out
}
