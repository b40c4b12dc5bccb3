//! The clients' cache of a dictionary topic, both directions, bounded.
//!
//! A mapping never changes once the database assigned it, so a cached answer is never stale and
//! needs no invalidation; the only question is memory. Each direction keeps at most `capacity`
//! entries, in two generations per shard: new entries go to the current generation; when it
//! holds half the shard's share it becomes the previous one (the older previous is dropped);
//! a hit in the previous generation moves the entry back to the current one. Recently used
//! entries so survive, as with an LRU, at O(1) per operation and no list to maintain.
//!
//! Sharded by the key's hash (a mutex each), so threads of a Rust server seldom meet; the
//! hasher is std's keyed `SipHash`, as the strings may come from the network.

use std::boxed::Box;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
// The model checker's own under `cfg(loom)`, so it explores every interleaving of the shards'
// critical sections (see the `loom_models` below).
#[cfg(loom)]
use loom::sync::Mutex;
#[cfg(not(loom))]
use std::sync::Mutex;
use std::vec::Vec;

use super::{Invalid, check_batch, check_id, check_value};

/// The default capacity of a client's cache, per direction: 100,000 strings and IDs (a few MB
/// for strings of tens of bytes).
pub const DEFAULT_CACHE: usize = 100_000;

const SHARDS: usize = 16;

/// A batch of strings planned: the cached IDs (`None` where not cached) and the distinct
/// strings to ask the server for.
pub type IdPlan<'v> = (Vec<Option<u64>>, Vec<&'v str>);
/// A batch of IDs planned: the cached strings and the distinct IDs to ask for.
pub type ValuePlan = (Vec<Option<Arc<str>>>, Vec<u64>);
/// Why a batch was refused, and the position of the item refused (0 for the batch itself).
pub type Refused = (Invalid, usize);

/// The server's answers to a batch do not match it one for one (a reply to another batch, or
/// a server that is not a shardid dictionary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch;

impl core::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the server's answers do not match the batch")
    }
}

impl std::error::Error for Mismatch {}

/// A bounded cache of one topic's mappings, both ways. `Sync`: share one per topic.
///
/// It also keeps the dictionary's counters ([`Cache::stats`]): hits and misses both ways, and
/// the statements its driver sent ([`Cache::sent`]).
#[derive(Debug)]
pub struct Cache {
    by_value: ShardedMap<Arc<str>, u64>,
    by_id: ShardedMap<u64, Arc<str>>,
    capacity: usize,
    counters: Counters,
}

/// The dictionary's counters: plain atomics (never the model checker's), bumped beside a
/// lookup that takes a shard's lock anyway, or a statement sent.
#[derive(Debug, Default)]
struct Counters {
    id_hits: AtomicU64,
    id_misses: AtomicU64,
    value_hits: AtomicU64,
    value_misses: AtomicU64,
    statements: AtomicU64,
    retries: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    if by > 0 {
        counter.fetch_add(by, Ordering::Relaxed);
    }
}

#[derive(Debug)]
struct ShardedMap<K, V> {
    shards: Box<[Mutex<Generations<K, V>>]>,
    hasher: RandomState,
    /// The entries of a shard's current generation that make it the previous one.
    half: usize,
}

#[derive(Debug)]
struct Generations<K, V> {
    current: HashMap<K, V>,
    previous: HashMap<K, V>,
}

impl<K: Eq + Hash, V: Clone> ShardedMap<K, V> {
    fn new(capacity: usize) -> Self {
        let shards = if capacity >= SHARDS * 64 { SHARDS } else { 1 };
        Self {
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Generations {
                        current: HashMap::new(),
                        previous: HashMap::new(),
                    })
                })
                .collect(),
            hasher: RandomState::new(),
            half: capacity / shards / 2,
        }
    }

    fn shard<Q: Hash + ?Sized>(&self, key: &Q) -> &Mutex<Generations<K, V>> {
        let index = if self.shards.len() == 1 {
            0
        } else {
            // The high bits: the map inside uses the low ones.
            (self.hasher.hash_one(key) >> 60) as usize % self.shards.len()
        };
        &self.shards[index]
    }

    fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: core::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.half == 0 {
            return None;
        }
        let mut shard = self
            .shard(key)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = shard.current.get(key) {
            return Some(v.clone());
        }
        let (k, v) = shard.previous.remove_entry(key)?;
        let found = v.clone();
        shard.insert(k, v, self.half);
        Some(found)
    }

    fn insert(&self, key: K, value: V) {
        if self.half == 0 {
            return;
        }
        self.shard(&key)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, value, self.half);
    }

    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap_or_else(PoisonError::into_inner);
                s.current.len() + s.previous.len()
            })
            .sum()
    }

    fn clear(&self) {
        for s in &*self.shards {
            let mut s = s.lock().unwrap_or_else(PoisonError::into_inner);
            s.current = HashMap::new();
            s.previous = HashMap::new();
        }
    }
}

impl<K: Eq + Hash, V> Generations<K, V> {
    fn insert(&mut self, key: K, value: V, half: usize) {
        if self.current.len() >= half && !self.current.contains_key(&key) {
            self.previous = core::mem::take(&mut self.current);
        }
        self.current.insert(key, value);
    }
}

impl Cache {
    /// A cache of at most `capacity` entries each way (0: no caching).
    pub fn new(capacity: usize) -> Self {
        Self {
            by_value: ShardedMap::new(capacity),
            by_id: ShardedMap::new(capacity),
            capacity,
            counters: Counters::default(),
        }
    }

    /// What the dictionary did: hits and misses of its cache both ways, statements sent and
    /// sent again (see [`crate::stats::DictionaryStats`]).
    pub fn stats(&self) -> crate::stats::DictionaryStats {
        let c = &self.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        crate::stats::DictionaryStats {
            id_hits: load(&c.id_hits),
            id_misses: load(&c.id_misses),
            value_hits: load(&c.value_hits),
            value_misses: load(&c.value_misses),
            statements: load(&c.statements),
            retries: load(&c.retries),
        }
    }

    /// The driver sent a statement to the database (`retry`: again, on a new connection after
    /// the old one broke).
    pub fn sent(&self, retry: bool) {
        bump(&self.counters.statements, 1);
        if retry {
            bump(&self.counters.retries, 1);
        }
    }

    /// The capacity it was made with.
    pub const fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many strings it holds now (at most the capacity).
    pub fn len(&self) -> usize {
        self.by_value.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.by_value.clear();
        self.by_id.clear();
    }

    /// The cached ID of `value`. Counted as a hit when found; a miss is counted by the batch
    /// that asks the database for it ([`Cache::plan_ids`]), so a caller that tries the cache
    /// first and then plans a batch counts the string once.
    pub fn id(&self, value: &str) -> Option<u64> {
        let found = self.by_value.get(value);
        bump(&self.counters.id_hits, u64::from(found.is_some()));
        found
    }

    /// The cached string of `id`, counted as [`Cache::id`] counts.
    pub fn value(&self, id: u64) -> Option<Arc<str>> {
        let found = self.by_id.get(&id);
        bump(&self.counters.value_hits, u64::from(found.is_some()));
        found
    }

    /// Records that `value` has `id` (both ways).
    pub fn insert(&self, value: &str, id: u64) {
        if self.capacity == 0 {
            return;
        }
        let value: Arc<str> = Arc::from(value);
        self.by_id.insert(id, Arc::clone(&value));
        self.by_value.insert(value, id);
    }

    /// The first step of a batch of strings: checks them, answers what the cache holds
    /// (`Some(id)` at their positions, `None` elsewhere) and lists the distinct strings to ask
    /// the server for, in the order they first appear — each once, all in one round trip.
    ///
    /// # Errors
    /// [`Invalid::Value`] (with the position of the first bad string), [`Invalid::Batch`].
    pub fn plan_ids<'v, S: AsRef<str> + 'v>(&self, values: &'v [S]) -> Result<IdPlan<'v>, Refused> {
        let (ids, misses) = self.plan_ids_uncounted(values)?;
        let hits = ids.iter().filter(|id| id.is_some()).count() as u64;
        bump(&self.counters.id_hits, hits);
        bump(&self.counters.id_misses, ids.len() as u64 - hits);
        Ok((ids, misses))
    }

    /// [`Cache::plan_ids`] counting nothing: a client's second look at the strings its call
    /// already counted (asyncio's, once the connection is its own: tasks before it may have
    /// been answered the same new strings meanwhile).
    ///
    /// # Errors
    /// As [`Cache::plan_ids`].
    pub fn plan_ids_uncounted<'v, S: AsRef<str> + 'v>(
        &self,
        values: &'v [S],
    ) -> Result<IdPlan<'v>, Refused> {
        check_batch(values.len()).map_err(|e| (e, 0))?;
        let mut ids = Vec::with_capacity(values.len());
        let mut misses: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for (i, value) in values.iter().enumerate() {
            let value = value.as_ref();
            check_value(value).map_err(|e| (e, i))?;
            let id = self.by_value.get(value);
            if id.is_none() && seen.insert(value) {
                misses.push(value);
            }
            ids.push(id);
        }
        Ok((ids, misses))
    }

    /// The second step: records the server's `answers` for `misses` (the list
    /// [`Cache::plan_ids`] gave, answered in its order; `None` for a string the server does not
    /// know) and fills them in at every position of `values` the cache did not answer.
    ///
    /// # Errors
    /// [`Mismatch`] when the answers do not match the misses one for one: the server's reply
    /// was not for this batch.
    pub fn complete_ids<S: AsRef<str>, M: AsRef<str>>(
        &self,
        values: &[S],
        ids: &mut [Option<u64>],
        misses: &[M],
        answers: &[Option<u64>],
    ) -> Result<(), Mismatch> {
        self.merge_ids(values, ids, misses, answers, true)
    }

    /// As [`Cache::complete_ids`], caching the answers only if `remember`: a client whose
    /// statements run in the caller's transaction must not cache what a rollback could undo,
    /// and calls [`Cache::remember_ids`] once that transaction commits.
    ///
    /// # Errors
    /// As [`Cache::complete_ids`].
    pub fn merge_ids<S: AsRef<str>, M: AsRef<str>>(
        &self,
        values: &[S],
        ids: &mut [Option<u64>],
        misses: &[M],
        answers: &[Option<u64>],
        remember: bool,
    ) -> Result<(), Mismatch> {
        if misses.len() != answers.len() || values.len() != ids.len() {
            return Err(Mismatch);
        }
        let mut answered: HashMap<&str, Option<u64>> = HashMap::with_capacity(misses.len());
        for (value, answer) in misses.iter().zip(answers) {
            answered.insert(value.as_ref(), *answer);
        }
        for (value, id) in values.iter().zip(ids.iter_mut()) {
            if id.is_none() {
                *id = *answered.get(value.as_ref()).ok_or(Mismatch)?;
            }
        }
        if remember {
            self.remember_ids(misses, answers);
        }
        Ok(())
    }

    /// Caches the server's answers (`None`: not known, not cached).
    pub fn remember_ids<M: AsRef<str>>(&self, misses: &[M], answers: &[Option<u64>]) {
        for (value, answer) in misses.iter().zip(answers) {
            if let Some(id) = *answer {
                self.insert(value.as_ref(), id);
            }
        }
    }

    /// The first step of a batch of IDs: as [`Cache::plan_ids`], the other way.
    ///
    /// # Errors
    /// [`Invalid::Id`] (with the position of the first bad ID), [`Invalid::Batch`].
    pub fn plan_values(&self, ids: &[u64]) -> Result<ValuePlan, Refused> {
        let (values, misses) = self.plan_values_uncounted(ids)?;
        let hits = values.iter().filter(|v| v.is_some()).count() as u64;
        bump(&self.counters.value_hits, hits);
        bump(&self.counters.value_misses, values.len() as u64 - hits);
        Ok((values, misses))
    }

    /// [`Cache::plan_values`] counting nothing, as [`Cache::plan_ids_uncounted`].
    ///
    /// # Errors
    /// As [`Cache::plan_values`].
    pub fn plan_values_uncounted(&self, ids: &[u64]) -> Result<ValuePlan, Refused> {
        check_batch(ids.len()).map_err(|e| (e, 0))?;
        let mut values = Vec::with_capacity(ids.len());
        let mut misses = Vec::new();
        let mut seen: HashSet<u64> = HashSet::new();
        for (i, &id) in ids.iter().enumerate() {
            check_id(id).map_err(|e| (e, i))?;
            let value = self.by_id.get(&id);
            if value.is_none() && seen.insert(id) {
                misses.push(id);
            }
            values.push(value);
        }
        Ok((values, misses))
    }

    /// The second step of a batch of IDs: as [`Cache::complete_ids`], the other way.
    ///
    /// # Errors
    /// [`Mismatch`] when the answers do not match the misses one for one.
    pub fn complete_values<A: AsRef<str>>(
        &self,
        ids: &[u64],
        values: &mut [Option<Arc<str>>],
        misses: &[u64],
        answers: &[Option<A>],
    ) -> Result<(), Mismatch> {
        self.merge_values(ids, values, misses, answers, true)
    }

    /// As [`Cache::complete_values`], caching only if `remember` (see [`Cache::merge_ids`]).
    ///
    /// # Errors
    /// As [`Cache::complete_values`].
    pub fn merge_values<A: AsRef<str>>(
        &self,
        ids: &[u64],
        values: &mut [Option<Arc<str>>],
        misses: &[u64],
        answers: &[Option<A>],
        remember: bool,
    ) -> Result<(), Mismatch> {
        if misses.len() != answers.len() || ids.len() != values.len() {
            return Err(Mismatch);
        }
        let mut answered: HashMap<u64, Option<Arc<str>>> = HashMap::with_capacity(misses.len());
        for (&id, answer) in misses.iter().zip(answers) {
            let value = answer.as_ref().map(|a| Arc::<str>::from(a.as_ref()));
            if remember && let Some(value) = &value {
                self.by_id.insert(id, Arc::clone(value));
                self.by_value.insert(Arc::clone(value), id);
            }
            answered.insert(id, value);
        }
        for (id, value) in ids.iter().zip(values.iter_mut()) {
            if value.is_none() {
                value.clone_from(answered.get(id).ok_or(Mismatch)?);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::format;
    use std::vec;

    use super::*;

    #[test]
    fn a_second_look_counts_nothing() {
        let cache = Cache::new(1000);
        cache.insert("a", 7);
        let (_, misses) = cache.plan_ids(&["a", "b"]).unwrap();
        let (_, again) = cache.plan_ids_uncounted(&misses).unwrap();
        assert_eq!(again, vec!["b"]);
        let _ = cache.plan_values_uncounted(&[7, 8]).unwrap();
        let s = cache.stats();
        assert_eq!(
            (s.id_hits, s.id_misses, s.value_hits, s.value_misses),
            (1, 1, 0, 0)
        );
        let _ = cache.plan_values(&[7, 8]).unwrap();
        assert_eq!(
            (cache.stats().value_hits, cache.stats().value_misses),
            (1, 1)
        );
    }

    #[test]
    fn a_batch_sends_each_miss_once_and_merges_in_order() {
        let cache = Cache::new(1000);
        cache.insert("a", 7);
        let values = ["b", "a", "c", "b"];
        let (mut ids, misses) = cache.plan_ids(&values).unwrap();
        assert_eq!(ids, vec![None, Some(7), None, None]);
        assert_eq!(misses, vec!["b", "c"]);
        cache
            .complete_ids(&values, &mut ids, &misses, &[Some(8), Some(9)])
            .unwrap();
        assert_eq!(ids, vec![Some(8), Some(7), Some(9), Some(8)]);
        // Both ways cached now.
        assert_eq!(cache.id("c"), Some(9));
        assert_eq!(cache.value(8).as_deref(), Some("b"));
        let (ids, misses) = cache.plan_ids(&values).unwrap();
        assert!(misses.is_empty());
        assert_eq!(ids, vec![Some(8), Some(7), Some(9), Some(8)]);
    }

    #[test]
    fn unknown_strings_are_not_cached() {
        let cache = Cache::new(1000);
        let values = ["x"];
        let (mut ids, misses) = cache.plan_ids(&values).unwrap();
        cache
            .complete_ids(&values, &mut ids, &misses, &[None])
            .unwrap();
        assert_eq!(ids, vec![None]);
        assert_eq!(cache.id("x"), None);
        assert!(cache.is_empty());
    }

    #[test]
    fn answers_that_do_not_match_are_refused() {
        let cache = Cache::new(10);
        let values = ["a", "b"];
        let (mut ids, misses) = cache.plan_ids(&values).unwrap();
        assert_eq!(
            cache.complete_ids(&values, &mut ids, &misses, &[Some(1)]),
            Err(Mismatch)
        );
        assert_eq!(
            cache.complete_ids(&values, &mut ids, &["a", "z"], &[Some(1), Some(2)]),
            Err(Mismatch)
        );
    }

    #[test]
    fn bad_strings_and_ids_are_refused_with_their_position() {
        let cache = Cache::new(10);
        assert_eq!(
            cache.plan_ids(&["ok", "", "x"]).unwrap_err(),
            (Invalid::Value, 1)
        );
        assert_eq!(
            cache.plan_ids(&["ok", "a\0"]).unwrap_err(),
            (Invalid::Value, 1)
        );
        let long = "x".repeat(super::super::MAX_VALUE_LEN + 1);
        assert_eq!(cache.plan_ids(&[long]).unwrap_err(), (Invalid::Value, 0));
        assert_eq!(
            cache.plan_values(&[1, u64::MAX]).unwrap_err(),
            (Invalid::Id, 1)
        );
        let many = vec!["a"; super::super::MAX_BATCH + 1];
        assert_eq!(cache.plan_ids(&many).unwrap_err(), (Invalid::Batch, 0));
    }

    #[test]
    fn values_batches_work_the_other_way() {
        let cache = Cache::new(1000);
        cache.insert("seven", 7);
        let ids = [7, 3, 99, 3];
        let (mut values, misses) = cache.plan_values(&ids).unwrap();
        assert_eq!(misses, vec![3, 99]);
        cache
            .complete_values(&ids, &mut values, &misses, &[Some("three"), None])
            .unwrap();
        let values: Vec<Option<&str>> = values.iter().map(Option::as_deref).collect();
        assert_eq!(
            values,
            vec![Some("seven"), Some("three"), None, Some("three")]
        );
        assert_eq!(cache.id("three"), Some(3));
    }

    #[test]
    fn memory_stays_bounded_and_recent_entries_survive() {
        // Fewer under Miri, which interprets every step: still 2.5 times the capacity.
        let inserts: u64 = if cfg!(miri) { 5_000 } else { 100_000 };
        let cache = Cache::new(2048);
        cache.insert("hot", 0);
        for i in 1..inserts {
            cache.insert(&format!("v{i}"), i);
            // Used all along: it must survive.
            assert_eq!(cache.id("hot"), Some(0), "after {i}");
        }
        assert!(cache.len() <= 2048, "{} entries", cache.len());
        assert!(cache.by_id.len() <= 2048);
        // The most recent ones are there.
        assert_eq!(cache.id(&format!("v{}", inserts - 1)), Some(inserts - 1));
        assert_eq!(
            cache.value(inserts - 2).as_deref(),
            Some(format!("v{}", inserts - 2).as_str())
        );
        // The oldest are gone.
        assert_eq!(cache.id("v1"), None);
    }

    #[test]
    fn a_merge_without_remembering_caches_nothing_until_told() {
        let cache = Cache::new(100);
        let values = ["a", "b"];
        let (mut ids, misses) = cache.plan_ids(&values).unwrap();
        cache
            .merge_ids(&values, &mut ids, &misses, &[Some(4), Some(5)], false)
            .unwrap();
        assert_eq!(ids, vec![Some(4), Some(5)]);
        assert!(cache.is_empty());
        cache.remember_ids(&misses, &[Some(4), Some(5)]);
        assert_eq!(cache.id("b"), Some(5));
        let (mut values, misses) = cache.plan_values(&[9]).unwrap();
        cache
            .merge_values(&[9], &mut values, &misses, &[Some("nine")], false)
            .unwrap();
        assert_eq!(values[0].as_deref(), Some("nine"));
        assert_eq!(cache.value(9), None);
    }

    #[test]
    fn capacity_zero_caches_nothing() {
        let cache = Cache::new(0);
        cache.insert("a", 1);
        assert_eq!(cache.id("a"), None);
        assert_eq!(cache.value(1), None);
        let (_, misses) = cache.plan_ids(&["a", "a"]).unwrap();
        assert_eq!(misses, vec!["a"]);
    }

    #[test]
    fn threads_share_one_cache() {
        let per: u64 = if cfg!(miri) { 200 } else { 10_000 };
        let cache = Arc::new(Cache::new(1_000_000));
        let handles: Vec<_> = (0..4u64)
            .map(|t| {
                let cache = Arc::clone(&cache);
                std::thread::spawn(move || {
                    for i in 0..per {
                        let id = t * per + i;
                        let value = format!("{id}");
                        cache.insert(&value, id);
                        assert_eq!(cache.id(&value), Some(id));
                        assert_eq!(cache.value(id).as_deref(), Some(value.as_str()));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(cache.len() as u64, 4 * per);
    }
}

/// Loom models of the shards' critical sections (their mutexes are loom's under `cfg(loom)`):
/// every interleaving (within loom's preemption bound) of 2 threads inserting and looking up
/// across generation turnovers, on a cache of capacity 4 (one shard, 2 entries a generation).
/// Checked: every answer is the mapping inserted; neither direction ever holds more than the
/// capacity (after each call of each thread, and at the end); and an entry nothing can push
/// out is found by every look-up, also while another thread's hit moves it between
/// generations. Run with `RUSTFLAGS="--cfg loom" cargo test -p shardid --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_models {
    use std::vec::Vec;

    use loom::sync::Arc;
    use loom::thread;

    use super::Cache;

    const CAPACITY: usize = 4;
    const ENTRIES: [(&str, u64); 5] = [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5)];

    /// `a`, `b` and `c` inserted: the previous generation holds `a` and `b`, the current one
    /// `c`, so the next new entry turns the generations over.
    fn cache() -> Arc<Cache> {
        let cache = Cache::new(CAPACITY);
        for (value, id) in &ENTRIES[..3] {
            cache.insert(value, *id);
        }
        Arc::new(cache)
    }

    fn insert(cache: &Cache, entry: usize) {
        let (value, id) = ENTRIES[entry];
        cache.insert(value, id);
        assert_bounded(cache);
    }

    /// Looks `entry` up both ways: nothing, or what was inserted.
    fn look_up(cache: &Cache, entry: usize) {
        let (value, id) = ENTRIES[entry];
        if let Some(found) = cache.id(value) {
            assert_eq!(found, id, "{value} answered with another's ID");
        }
        if let Some(found) = cache.value(id) {
            assert_eq!(&*found, value, "{id} answered with another's string");
        }
        assert_bounded(cache);
    }

    fn assert_bounded(cache: &Cache) {
        let (strings, ids) = (cache.by_value.len(), cache.by_id.len());
        assert!(
            strings <= CAPACITY && ids <= CAPACITY,
            "{strings} strings and {ids} IDs held, capacity {CAPACITY}"
        );
    }

    fn run(cache: &Arc<Cache>, work: [fn(&Cache); 2]) {
        let handles: Vec<_> = work
            .into_iter()
            .map(|work| {
                let cache = Arc::clone(cache);
                thread::spawn(move || work(&cache))
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }

    /// Turnovers under inserts: one thread inserts `d`, the other `e` and then `d` too (two
    /// clients that both missed it remember it), each looking up entries old and new after.
    /// The first new entry turns the generations over; the second must find the current
    /// generation full, not a count it read before the first went in.
    #[test]
    fn loom_turnovers_stay_bounded_and_answer_right() {
        crate::generator::loom_models::model(|| {
            let cache = cache();
            run(
                &cache,
                [
                    |cache| {
                        insert(cache, 3);
                        look_up(cache, 3);
                        look_up(cache, 0);
                    },
                    |cache| {
                        insert(cache, 4);
                        insert(cache, 3);
                        look_up(cache, 1);
                    },
                ],
            );
            assert_bounded(&cache);
            for entry in 0..ENTRIES.len() {
                look_up(&cache, entry);
            }
        });
    }

    /// Hits that move entries: both threads look up `a` (in the previous generation: the
    /// first hit moves it to the current one), one then `b` (which turns the generations
    /// over). Nothing is inserted, so nothing can push `a`, `b` or `c` out: every look-up
    /// finds its entry, never a moment when a hit has taken it out of one generation and not
    /// yet put it in the other.
    #[test]
    fn loom_a_hit_never_hides_an_entry() {
        crate::generator::loom_models::model(|| {
            let cache = cache();
            run(
                &cache,
                [
                    |cache| assert_eq!(cache.id("a"), Some(1), "a hidden"),
                    |cache| {
                        assert_eq!(cache.id("a"), Some(1), "a hidden");
                        assert_eq!(cache.id("b"), Some(2), "b hidden");
                    },
                ],
            );
            assert_bounded(&cache);
            for (value, id) in &ENTRIES[..3] {
                assert_eq!(cache.id(value), Some(*id), "{value} lost");
            }
        });
    }
}
