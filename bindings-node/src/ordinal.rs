//! A shard from a Kubernetes `StatefulSet` pod's ordinal ([`shardid::ordinal`]): the hostname
//! and the range passed on as they came; every rule, and the default hostname, is the core's.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, Result, ValueType};
use napi_derive::napi;

use crate::args::{Arg, text, type_of, u64_arg};
use crate::errors::{OrThrow, guard};
use crate::layout::layout;

/// The shard of this `StatefulSet` pod: the ordinal at the end of `hostname` (`undefined` or
/// `null`: the `HOSTNAME` environment variable, then the host's name), checked against the
/// layout's shards and `first..end`.
#[napi]
pub fn shard_from_ordinal(
    env: &Env,
    layout_index: u32,
    first: Unknown<'_>,
    end: Unknown<'_>,
    hostname: Option<Unknown<'_>>,
) -> Result<u32> {
    guard(env, || {
        let l = layout(env, layout_index)?;
        let first = u64_arg(env, &first, "shards[0]", Arg::Shard)?;
        let end = u64_arg(env, &end, "shards[1]", Arg::Other)?;
        let hostname = match hostname {
            Some(value)
                if !matches!(
                    type_of(env, value.raw()),
                    ValueType::Undefined | ValueType::Null
                ) =>
            {
                Some(text(env, &value, "hostname")?)
            }
            _ => None,
        };
        let shard =
            shardid::ordinal::shard_of_pod(hostname.as_deref(), &l, first..end).or_throw(env)?;
        // Layout shard fields the JS side accepts fit a u32 (checked when the layout was made).
        Ok(u32::try_from(shard).unwrap_or(u32::MAX))
    })
}
