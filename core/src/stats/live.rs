//! The process's live objects, for exporters: every generator state
//! ([`crate::Generator::shared`]'s, and each lease's generator: a
//! [`crate::lease::CeilingGenerator`] registers its own), the segment allocators, serial-number
//! allocators and dictionaries the bindings registered, and the database leases (their [`crate::lease::Tally`] registers itself).
//! Objects are held weakly: one dropped is no longer reported, and neither is one
//! unregistered ([`unregister_segments`], [`unregister_dictionary`]): a binding whose objects
//! outlive their `close()` (Node's allocators live in a table that never frees them) retires
//! them explicitly.

use std::string::String;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::vec::Vec;

use super::{DictionaryStats, Family, Kind, SegmentStats};
use crate::Layout;
use crate::dictionary::Cache;
use crate::segment::SegmentAllocator;

#[derive(Clone)]
enum Source {
    /// A generator whose state is its own, not the registry's (a lease's
    /// [`crate::lease::CeilingGenerator`]); labelled `[layout, shard]` as the registry's.
    #[cfg(feature = "lease")]
    Generator(Weak<crate::State>),
    Segments(Weak<SegmentAllocator>),
    /// A serial-number allocator: its segments' figures over every period, in the segments'
    /// family, labelled `[schema, tag]` with its serial tag.
    #[cfg(feature = "serial")]
    Serials(Weak<crate::serial::SerialAllocator>),
    Dictionary(Weak<Cache>),
    /// Labelled `[layout, table]`: the shard, which a lease that retakes changes, is read at
    /// each collection.
    #[cfg(feature = "lease")]
    Lease(Weak<crate::lease::Tally>),
}

struct Entry {
    /// The family's label values, in [`Family::labels`]' order.
    labels: Vec<String>,
    source: Source,
}

impl Entry {
    fn alive(&self) -> bool {
        match &self.source {
            #[cfg(feature = "lease")]
            Source::Generator(w) => w.strong_count() > 0,
            Source::Segments(w) => w.strong_count() > 0,
            #[cfg(feature = "serial")]
            Source::Serials(w) => w.strong_count() > 0,
            Source::Dictionary(w) => w.strong_count() > 0,
            #[cfg(feature = "lease")]
            Source::Lease(w) => w.strong_count() > 0,
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

/// Reports the serial-number `allocator` (of serial tag `tag` in `schema`) to exporters while
/// it lives: its segments' figures, as a dense-ID allocator's.
#[cfg(feature = "serial")]
pub fn register_serials(allocator: &Arc<crate::serial::SerialAllocator>, schema: &str, tag: &str) {
    register(
        std::vec![schema.into(), tag.into()],
        Source::Serials(Arc::downgrade(allocator)),
    );
}

/// Stops reporting the serial-number `allocator`, as [`unregister_segments`].
#[cfg(feature = "serial")]
pub fn unregister_serials(allocator: &Arc<crate::serial::SerialAllocator>) {
    unregister(|source| matches!(source, Source::Serials(w) if ptr_eq(w, allocator)));
}

/// Reports the dictionary whose cache is `cache` (topic `topic` in `schema`) to exporters
/// while it lives.
pub fn register_dictionary(cache: &Arc<Cache>, schema: &str, topic: &str) {
    register(
        std::vec![schema.into(), topic.into()],
        Source::Dictionary(Arc::downgrade(cache)),
    );
}

/// Stops reporting `allocator` (every registration of it): for a binding whose closed
/// allocator lives on. Dropping it does as much.
///
/// Matched by address, which cannot name another object: the entry's
/// `Weak` keeps the allocation (not the allocator) alive, so its address is not reused while
/// the entry is listed.
pub fn unregister_segments(allocator: &Arc<SegmentAllocator>) {
    unregister(|source| matches!(source, Source::Segments(w) if ptr_eq(w, allocator)));
}

/// Stops reporting the dictionary whose cache is `cache`, as [`unregister_segments`].
pub fn unregister_dictionary(cache: &Arc<Cache>) {
    unregister(|source| matches!(source, Source::Dictionary(w) if ptr_eq(w, cache)));
}

fn ptr_eq<T>(weak: &Weak<T>, arc: &Arc<T>) -> bool {
    core::ptr::eq(weak.as_ptr(), Arc::as_ptr(arc))
}

fn unregister(matches: impl Fn(&Source) -> bool) {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.retain(|e| e.alive() && !matches(&e.source));
}

/// Reports the generator whose state is `state` (of `layout`, on `shard`) to exporters while
/// it lives, as the registry's generators are: a leased generator's IDs are IDs too.
#[cfg(feature = "lease")]
pub(crate) fn register_generator(state: &Arc<crate::State>, layout: &Layout, shard: u64) {
    register(
        std::vec![super::layout_label(layout), std::format!("{shard}")],
        Source::Generator(Arc::downgrade(state)),
    );
}

/// Reports the lease whose counters are `tally` (of `layout`, in `table`) to exporters while
/// it lives, once it has taken a shard.
#[cfg(feature = "lease")]
pub(crate) fn register_lease(tally: &Arc<crate::lease::Tally>, layout: &Layout, table: &str) {
    register(
        std::vec![super::layout_label(layout), table.into()],
        Source::Lease(Arc::downgrade(tally)),
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
/// and shard), then segment allocators, dictionaries and leases, each in the order they were
/// made (a lease that has not taken a shard yet, or was closed, is left out).
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
    let mut entries: Vec<(Vec<String>, Source)> = {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(Entry::alive);
        live.iter()
            .map(|e| (e.labels.clone(), e.source.clone()))
            .collect()
    };
    // The generators of leases with the registry's, before the other families.
    #[cfg(feature = "lease")]
    entries.sort_by_key(|(_, source)| !matches!(source, Source::Generator(_)));
    for (labels, source) in entries {
        match source {
            #[cfg(feature = "lease")]
            Source::Generator(w) => {
                if let Some(state) = w.upgrade() {
                    add(Family::Generator, labels, &state.stats().values());
                }
            }
            Source::Segments(w) => {
                if let Some(allocator) = w.upgrade() {
                    let stats: SegmentStats = allocator.stats();
                    add(Family::Segments, labels, &stats.values());
                }
            }
            #[cfg(feature = "serial")]
            Source::Serials(w) => {
                if let Some(allocator) = w.upgrade() {
                    add(Family::Segments, labels, &allocator.stats().values());
                }
            }
            Source::Dictionary(w) => {
                if let Some(cache) = w.upgrade() {
                    let stats: DictionaryStats = cache.stats();
                    add(Family::Dictionary, labels, &stats.values());
                }
            }
            #[cfg(feature = "lease")]
            Source::Lease(w) => {
                if let Some(tally) = w.upgrade()
                    && tally.reported()
                    && let (Some(shard), [layout, table]) = (tally.shard(), labels.as_slice())
                {
                    let labels = std::vec![layout.clone(), std::format!("{shard}"), table.clone()];
                    add(Family::Lease, labels, &tally.stats().values());
                }
            }
        }
    }
    out
}
