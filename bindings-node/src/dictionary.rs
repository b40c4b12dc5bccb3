//! The string ↔ ID dictionary: the core's cache and batch logic (`shardid::dictionary`) and its
//! SQL, for `dictionary.js` to drive with `pg`. A `DictCache` is a class, so a cache lives as
//! long as the JS object that holds it.

use std::sync::Arc;

use napi::bindgen_prelude::{BigInt, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use shardid::args::Arg;
use shardid::dictionary::{self as dict, Cache, Invalid};
use shardid::sql::{Dictionary, Placeholders};

use crate::args::{text, u64_arg};
use crate::errors::{Class, guard, invalid_argument};

fn invalid(env: &Env, e: Invalid, argument: &str) -> napi::Error {
    invalid_argument(env, Class::Range, argument, e.reason())
}

fn at(e: Invalid, list: &str, i: usize) -> String {
    match e {
        Invalid::Batch => list.to_owned(),
        _ => format!("{list}[{i}]"),
    }
}

/// The statements a dictionary client sends, `$n` placeholders.
#[napi(object)]
pub struct DictionarySql {
    pub ids: String,
    pub lookup: String,
    pub values: String,
    pub create_topic: String,
    pub drop_topic: String,
}

/// The dictionary's DDL in `schema` (`INVALID_ARGUMENT` for a name that is not a plain
/// identifier).
#[napi]
pub fn dictionary_ddl(env: &Env, schema: String) -> Result<String> {
    guard(env, || {
        Dictionary::new(&schema)
            .map(|d| d.to_string())
            .map_err(|e| crate::segment::schema_error(env, &e))
    })
}

/// The statements of the dictionary in `schema`.
#[napi]
pub fn dictionary_sql(env: &Env, schema: String) -> Result<DictionarySql> {
    guard(env, || {
        let s = Dictionary::new(&schema)
            .map_err(|e| crate::segment::schema_error(env, &e))?
            .statements(Placeholders::Numbered);
        Ok(DictionarySql {
            ids: s.ids().to_string(),
            lookup: s.lookup().to_string(),
            values: s.values().to_string(),
            create_topic: s.create_topic().to_string(),
            drop_topic: s.drop_topic().to_string(),
        })
    })
}

/// Which of `servers` servers holds `topic` (FNV-1a 64, then jump consistent hash).
#[napi]
pub fn dictionary_server_for(env: &Env, topic: Unknown<'_>, servers: u32) -> Result<u32> {
    guard(env, || {
        let topic = text(env, &topic, "topic")?;
        dict::check_topic(&topic).map_err(|e| invalid(env, e, "topic"))?;
        Ok(dict::server_for(&topic, servers))
    })
}

/// Checks a topic name as the core does.
#[napi]
pub fn dictionary_check_topic(env: &Env, topic: Unknown<'_>) -> Result<()> {
    guard(env, || {
        let topic = text(env, &topic, "topic")?;
        dict::check_topic(&topic).map_err(|e| invalid(env, e, "topic"))
    })
}

/// A batch of strings planned: the cached IDs (`null` where not cached) and the distinct
/// strings to send.
#[napi(object)]
pub struct PlannedIds {
    pub ids: Vec<Option<BigInt>>,
    pub misses: Vec<String>,
}

/// A batch of IDs planned: the IDs, their cached strings and the distinct IDs to send (as
/// decimal strings, as `pg` sends `int8`).
#[napi(object)]
pub struct PlannedValues {
    pub ids: Vec<BigInt>,
    pub values: Vec<Option<String>>,
    pub misses: Vec<String>,
}

fn big(id: u64) -> BigInt {
    BigInt::from(id)
}

fn from_big(ids: Vec<Option<BigInt>>) -> Vec<Option<u64>> {
    ids.into_iter()
        .map(|id| id.map(|b| b.get_u64().1))
        .collect()
}

/// The answers `pg` gives for a `bigint[]`: decimal strings, or `null`.
fn answers_u64(env: &Env, answers: &[Option<String>]) -> Result<Vec<Option<u64>>> {
    answers
        .iter()
        .map(|a| match a {
            None => Ok(None),
            Some(s) => shardid::parse_decimal(s.as_bytes())
                .map(Some)
                .ok_or_else(|| mismatch(env)),
        })
        .collect()
}

fn mismatch(env: &Env) -> napi::Error {
    invalid_argument(
        env,
        Class::Plain,
        "answers",
        "do not match the batch: the server's reply was not for these strings",
    )
}

/// The bounded cache of one topic, both ways: the core's `dictionary::Cache`.
#[napi]
pub struct DictCache {
    /// Shared with the core's list of live objects, which exporters read (weakly): reported
    /// from `register` until `unregister` (`close()`), or until the JS object is collected.
    inner: Arc<Cache>,
}

#[napi]
impl DictCache {
    #[napi(constructor)]
    pub fn new(env: &Env, capacity: Option<Unknown<'_>>) -> Result<Self> {
        guard(env, || {
            let capacity = match capacity {
                Some(c) if !matches!(c.get_type()?, napi::ValueType::Undefined) => {
                    u64_arg(env, &c, "cacheSize", Arg::Other)?
                }
                _ => dict::DEFAULT_CACHE as u64,
            };
            Ok(Self {
                inner: Arc::new(Cache::new(usize::try_from(capacity).unwrap_or(usize::MAX))),
            })
        })
    }

    /// Reports this cache's dictionary (`topic` in `schema`) to exporters, until `unregister`
    /// or until the cache is collected.
    #[napi]
    pub fn register(&self, env: &Env, schema: String, topic: String) -> Result<()> {
        guard(env, || {
            shardid::stats::register_dictionary(&self.inner, &schema, &topic);
            Ok(())
        })
    }

    /// Stops reporting it: the dictionary was closed (the JS object may live on long after).
    #[napi]
    pub fn unregister(&self, env: &Env) -> Result<()> {
        guard(env, || {
            shardid::stats::unregister_dictionary(&self.inner);
            Ok(())
        })
    }

    /// What the cache and its driver did: the core's counters in its table's order
    /// (`STATS.dictionary` in core.generated.js names them).
    #[napi]
    pub fn stats(&self, env: &Env) -> Result<napi::bindgen_prelude::BigUint64Array> {
        guard(env, || {
            Ok(napi::bindgen_prelude::BigUint64Array::new(
                self.inner.stats().values().to_vec(),
            ))
        })
    }

    /// The driver sent a statement (`retry`: again, on a new connection after the old one
    /// broke).
    #[napi]
    pub fn sent(&self, env: &Env, retry: bool) -> Result<()> {
        guard(env, || {
            self.inner.sent(retry);
            Ok(())
        })
    }

    /// The most strings it holds (its capacity).
    #[napi(getter)]
    pub fn capacity(&self, env: &Env) -> Result<f64> {
        guard(env, || {
            Ok(crate::layout::number(self.inner.capacity() as u64))
        })
    }

    /// How many strings it holds now (at most the capacity).
    #[napi(getter)]
    pub fn size(&self, env: &Env) -> Result<u32> {
        guard(env, || {
            Ok(u32::try_from(self.inner.len()).unwrap_or(u32::MAX))
        })
    }

    /// Forgets every entry.
    #[napi]
    pub fn clear(&self, env: &Env) -> Result<()> {
        guard(env, || {
            self.inner.clear();
            Ok(())
        })
    }

    /// The cached ID of `value` (checked first), or `null`.
    #[napi]
    pub fn id(&self, env: &Env, value: Unknown<'_>) -> Result<Option<BigInt>> {
        guard(env, || {
            let value = text(env, &value, "value")?;
            dict::check_value(&value).map_err(|e| invalid(env, e, "value"))?;
            Ok(self.inner.id(&value).map(big))
        })
    }

    /// The cached string of `id` (checked first), or `null`.
    #[napi]
    pub fn value(&self, env: &Env, id: Unknown<'_>) -> Result<Option<String>> {
        guard(env, || {
            let id = u64_arg(env, &id, "id", Arg::Other)?;
            dict::check_id(id).map_err(|e| invalid(env, e, "id"))?;
            Ok(self.inner.value(id).map(|v| v.to_string()))
        })
    }

    /// Checks a batch and answers what the cache holds.
    #[napi]
    pub fn plan_ids(&self, env: &Env, values: Vec<Unknown<'_>>) -> Result<PlannedIds> {
        guard(env, || {
            dict::check_batch(values.len()).map_err(|e| invalid(env, e, "values"))?;
            let values = values
                .iter()
                .enumerate()
                .map(|(i, v)| text(env, v, &format!("values[{i}]")))
                .collect::<Result<Vec<String>>>()?;
            let (ids, misses) = self
                .inner
                .plan_ids(&values)
                .map_err(|(e, i)| invalid(env, e, &at(e, "values", i)))?;
            Ok(PlannedIds {
                ids: ids.into_iter().map(|id| id.map(big)).collect(),
                misses: misses.into_iter().map(str::to_owned).collect(),
            })
        })
    }

    /// Records the server's answers for the misses and fills them in.
    #[napi]
    pub fn complete_ids(
        &self,
        env: &Env,
        values: Vec<String>,
        ids: Vec<Option<BigInt>>,
        misses: Vec<String>,
        answers: Vec<Option<String>>,
    ) -> Result<Vec<Option<BigInt>>> {
        guard(env, || {
            let mut ids = from_big(ids);
            let answers = answers_u64(env, &answers)?;
            self.inner
                .complete_ids(&values, &mut ids, &misses, &answers)
                .map_err(|_| mismatch(env))?;
            Ok(ids.into_iter().map(|id| id.map(big)).collect())
        })
    }

    /// Checks a batch of IDs and answers what the cache holds.
    #[napi]
    pub fn plan_values(&self, env: &Env, ids: Vec<Unknown<'_>>) -> Result<PlannedValues> {
        guard(env, || {
            dict::check_batch(ids.len()).map_err(|e| invalid(env, e, "ids"))?;
            let ids = ids
                .iter()
                .enumerate()
                .map(|(i, id)| u64_arg(env, id, &format!("ids[{i}]"), Arg::Other))
                .collect::<Result<Vec<u64>>>()?;
            let (values, misses) = self
                .inner
                .plan_values(&ids)
                .map_err(|(e, i)| invalid(env, e, &at(e, "ids", i)))?;
            Ok(PlannedValues {
                ids: ids.into_iter().map(big).collect(),
                values: values
                    .into_iter()
                    .map(|v| v.map(|v| v.to_string()))
                    .collect(),
                misses: misses.into_iter().map(|id| id.to_string()).collect(),
            })
        })
    }

    /// Records the server's answers for the missing IDs and fills them in.
    #[napi]
    pub fn complete_values(
        &self,
        env: &Env,
        ids: Vec<BigInt>,
        values: Vec<Option<String>>,
        misses: Vec<String>,
        answers: Vec<Option<String>>,
    ) -> Result<Vec<Option<String>>> {
        guard(env, || {
            let ids: Vec<u64> = ids.into_iter().map(|b| b.get_u64().1).collect();
            let misses = misses
                .iter()
                .map(|m| shardid::parse_decimal(m.as_bytes()).ok_or_else(|| mismatch(env)))
                .collect::<Result<Vec<u64>>>()?;
            let mut values: Vec<Option<Arc<str>>> =
                values.into_iter().map(|v| v.map(Arc::from)).collect();
            self.inner
                .complete_values(&ids, &mut values, &misses, &answers)
                .map_err(|_| mismatch(env))?;
            Ok(values
                .into_iter()
                .map(|v| v.map(|v| v.to_string()))
                .collect())
        })
    }
}
