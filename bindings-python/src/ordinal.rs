//! A shard from a Kubernetes `StatefulSet` pod's ordinal ([`shardid::ordinal`]): the hostname
//! and the range passed on as they came; every rule, and the default hostname, is the core's.

use pyo3::prelude::*;
use pyo3::types::{PyRange, PyString};

use crate::args::{Arg, u64_arg};
use crate::errors::{OrRaise, invalid_argument, wrong_type};
use crate::layout::PyLayout;

/// The shard of this `StatefulSet` pod: the ordinal at the end of `hostname` (`app-3` → 3; by
/// default the `HOSTNAME` environment variable, then the host's name), which must be a shard
/// of `layout` (`ShardOutOfRangeError`) and of `shards`, the range this service was given
/// (`InvalidArgumentError` naming `hostname`, as for a name with no ordinal).
#[pyfunction]
#[pyo3(signature = (layout, shards, hostname = None))]
pub(crate) fn shard_from_ordinal(
    py: Python<'_>,
    layout: &Bound<'_, PyLayout>,
    shards: &Bound<'_, PyAny>,
    hostname: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let layout = layout.get().inner;
    let shards = shards
        .cast::<PyRange>()
        .map_err(|_| wrong_type(shards, "shards", "a range"))?;
    let stride: i64 = shards.getattr("step")?.extract()?;
    if stride != 1 {
        return Err(invalid_argument(
            py,
            "shards",
            "must be a range with step 1",
        ));
    }
    let max = Arg::Shard(layout.max_shard());
    let start = u64_arg(&shards.getattr("start")?, "shards.start", max)?;
    let stop = u64_arg(&shards.getattr("stop")?, "shards.stop", Arg::Other)?;
    let hostname = match hostname {
        Some(value) if !value.is_none() => {
            let text = value
                .cast::<PyString>()
                .map_err(|_| wrong_type(value, "hostname", "a str or None"))?;
            // A lone surrogate is no pod's name: the core refuses the replacement character.
            Some(text.to_cow().unwrap_or_else(|_| "\u{fffd}".into()))
        }
        _ => None,
    };
    shardid::ordinal::shard_of_pod(hostname.as_deref(), &layout, start..stop).or_raise(py)
}
