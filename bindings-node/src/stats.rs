//! The core's table of counters and the process's live figures, for the exporters
//! `shardid/prometheus` and `shardid/opentelemetry`: they hold no table of names of their own,
//! so a family or figure the core adds is exported without a change in JavaScript.

use napi::{Env, Result};
use napi_derive::napi;
use shardid::stats::{Family, Kind};

use crate::errors::guard;

/// One row of the core's table (`shardid::stats::Metric`), with its names in each exporter's
/// convention.
#[napi(object, object_from_js = false)]
pub struct StatsMetric {
    /// The name in `stats()` (camelCase).
    pub name: String,
    /// Where its value is in a sample's `values`.
    pub index: u32,
    /// `'counter'`, `'gauge'`, `'gaugeMax'` (objects with the same labels report the
    /// largest), `'bucket'` or `'sum'` (of the histogram that `prometheus` names).
    pub kind: String,
    /// What it counts, one sentence (Prometheus' `HELP`, OpenTelemetry's description).
    pub help: String,
    /// Its Prometheus name (`shardid_ids_total`; a histogram's buckets and sum share one).
    pub prometheus: String,
    /// Its OpenTelemetry name (`shardid.ids`; a histogram's buckets share one).
    pub opentelemetry: String,
    /// A bucket's upper bound in milliseconds (`Infinity` for `+Inf`); absent otherwise.
    pub le_ms: Option<f64>,
    /// What turns the value into base units: 1,000 for milliseconds, else 1.
    pub divide_by: u32,
    /// One figure for the process (exporters report it once, without labels).
    pub process_wide: bool,
}

/// One family of the core's table: its name, its labels and its rows.
#[napi(object, object_from_js = false)]
pub struct StatsFamily {
    /// `'generator'`, `'segments'`, `'dictionary'`, ...
    pub name: String,
    /// The names of the labels that tell its objects apart (`layout`, `shard`).
    pub labels: Vec<String>,
    /// Its rows, in the order of its samples' values.
    pub metrics: Vec<StatsMetric>,
}

/// One live object's figures (or several objects' with the same labels, added up).
#[napi(object, object_from_js = false)]
pub struct StatsSample {
    /// The family's name.
    pub family: String,
    /// The label values, in the family's `labels` order.
    pub labels: Vec<String>,
    /// The figures, in the family's `metrics` order.
    pub values: Vec<u64>,
}

/// The core's table of counters (`shardid::stats::Family::ALL`), for exporters.
#[napi]
pub fn stats_table(env: &Env) -> Result<Vec<StatsFamily>> {
    guard(env, || {
        Ok(Family::ALL
            .iter()
            .map(|&family| {
                let metrics = family
                    .metrics()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, metric)| {
                        let (kind, le_ms) = match metric.kind {
                            Kind::Counter => ("counter", None),
                            Kind::Gauge => ("gauge", None),
                            Kind::GaugeMax => ("gaugeMax", None),
                            Kind::Bucket { le_ms, .. } => (
                                "bucket",
                                Some(if le_ms == u64::MAX {
                                    f64::INFINITY
                                } else {
                                    crate::layout::number(le_ms)
                                }),
                            ),
                            Kind::Sum { .. } => ("sum", None),
                            // A kind this binding does not know yet: left out, the others
                            // keep their `index`.
                            _ => return None,
                        };
                        Some(StatsMetric {
                            name: shardid::CamelCase(metric.name).to_string(),
                            index: u32::try_from(i).unwrap_or(u32::MAX),
                            kind: kind.into(),
                            help: metric.help.into(),
                            prometheus: family.prometheus(metric).to_string(),
                            opentelemetry: family.opentelemetry(metric).to_string(),
                            le_ms,
                            divide_by: if metric.in_ms() { 1000 } else { 1 },
                            process_wide: metric.process_wide,
                        })
                    })
                    .collect();
                StatsFamily {
                    name: family.name().into(),
                    labels: family.labels().iter().map(|&l| l.into()).collect(),
                    metrics,
                }
            })
            .collect())
    })
}

/// Every live object's figures (`shardid::stats::collect`): every generator of the process,
/// and the dense-ID allocators and dictionaries registered with the core.
#[napi]
pub fn collect_stats(env: &Env) -> Result<Vec<StatsSample>> {
    guard(env, || {
        Ok(shardid::stats::collect()
            .into_iter()
            .map(|s| StatsSample {
                family: s.family.name().into(),
                labels: s.labels,
                values: s.values,
            })
            .collect())
    })
}
