//! A shard from a Kubernetes `StatefulSet` pod's ordinal, with no store to lease from.
//!
//! Kubernetes names a `StatefulSet`'s pods `<statefulset>-<ordinal>` (`app-0`, `app-1`, ...),
//! sets each pod's hostname to its name, and never runs two pods with one ordinal at once: a
//! pod's ordinal is a shard no other pod of the set holds while it runs. [`shard_from_ordinal`]
//! reads the ordinal from the hostname and uses it as the shard, unchanged (`app-3` is shard 3),
//! so a log line, `kubectl get pods` and a decoded ID all name the same number. Two `StatefulSet`s
//! sharing one layout are given disjoint ranges of shards (`shards`), and the second one's
//! ordinals are made to start at its range's first shard with `.spec.ordinals.start`; an
//! ordinal outside the range is refused rather than shifted, so a misconfigured set fails at
//! start instead of taking another set's shards.
//!
//! Every rule that could give two pods one shard refuses instead: a name Kubernetes would not
//! make (`app-03`, which would be shard 3 beside `app-3`; `app--1`; non-ASCII digits), and a
//! hostname of 63 bytes or more, which Kubernetes may have cut to 63 (a set named with 61
//! characters: pod 12's hostname `...-12` cut to `...-1`, pod 1's).
//!
//! Every binding passes the hostname (by default [`hostname`]: the `HOSTNAME` environment
//! variable, then the host's name) and the range, and raises the error this returns.

use core::ops::Range;

use crate::{Error, Layout};

/// The argument a hostname's refusal names.
pub const HOSTNAME_ARGUMENT: &str = "hostname";

/// The argument an empty range's refusal names.
pub const SHARDS_ARGUMENT: &str = "shards";

/// The longest hostname read, in bytes: Kubernetes cuts a pod's hostname to 63 characters
/// (a DNS label), so one of 63 may have lost the end of its ordinal.
pub const MAX_HOSTNAME_LEN: usize = 62;

/// The reason a hostname with no `-<ordinal>` at its end is refused.
pub const NO_ORDINAL: &str = "has no StatefulSet ordinal: expected <statefulset>-<ordinal> with the ordinal in ASCII decimal digits, as Kubernetes names a StatefulSet's pods (app-0, app-1, ...)";

/// The reason for an ordinal written with a leading zero.
pub const LEADING_ZERO: &str = "has an ordinal with a leading zero, which Kubernetes never writes (app-3, not app-03): refused, as app-03 and app-3 would both be shard 3";

/// The reason for a set name ending in `-` (`app--1`, which reads as ordinal -1).
pub const BAD_SET_NAME: &str = "has no StatefulSet name before its ordinal, or one ending in '-' (app--1): expected <statefulset>-<ordinal>, e.g. app-3";

/// The reason for a hostname Kubernetes may have cut.
pub const TOO_LONG: &str = "is 63 bytes or longer: Kubernetes cuts a pod's hostname to 63 characters, which can cut its ordinal (app-12 read as app-1); give the StatefulSet a shorter name";

/// The reason for an ordinal of more than 64 bits.
pub const TOO_LARGE: &str = "has an ordinal that does not fit in 64 bits";

/// The reason for an ordinal outside the range of shards given.
pub const OUTSIDE_SHARDS: &str = "has an ordinal outside the shards this service was given: start the StatefulSet's ordinals at the range's first shard (.spec.ordinals.start) and keep its replicas within the range";

/// The reason for an empty range.
pub const EMPTY_SHARDS: &str = "is empty: give at least one shard (first < end)";

/// The reason for a hostname that is not UTF-8 (a binding's, where its text can be any bytes).
pub const NOT_UTF8: &str = "is not UTF-8 text";

/// The reason when no hostname was given and none could be read.
pub const NO_HOSTNAME: &str = "was not given, and neither the HOSTNAME environment variable nor the host's name could be read: pass the pod's name (app-3)";

/// The ordinal at the end of a pod's hostname: `app-3` → 3, `web-app-12` → 12, and
/// `app-3.web.default.svc.cluster.local` (a pod with `setHostnameAsFQDN`) → 3, from its first
/// label.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `hostname`, with one of this module's reasons, for a
/// name Kubernetes would not give a `StatefulSet`'s pod.
pub fn ordinal(hostname: &str) -> Result<u64, Error> {
    let refuse = |reason| Error::InvalidArgument {
        argument: HOSTNAME_ARGUMENT,
        reason,
    };
    let label = hostname.split('.').next().unwrap_or(hostname);
    if label.len() > MAX_HOSTNAME_LEN {
        return Err(refuse(TOO_LONG));
    }
    let (set, digits) = label.rsplit_once('-').ok_or(refuse(NO_ORDINAL))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refuse(NO_ORDINAL));
    }
    if set.is_empty() || set.ends_with('-') {
        return Err(refuse(BAD_SET_NAME));
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(refuse(LEADING_ZERO));
    }
    digits
        .bytes()
        .try_fold(0u64, |n, b| {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .ok_or(refuse(TOO_LARGE))
}

/// The shard of a `StatefulSet`'s pod: its [`ordinal`], checked against the layout and the
/// range of shards this service was given (`first..end`, end excluded).
///
/// The checks run in this order, so the first error names the first thing to fix: the range
/// (empty: `INVALID_ARGUMENT` naming `shards`; past the layout's shards: `SHARD_OUT_OF_RANGE`
/// for its last shard), the hostname ([`ordinal`]), the ordinal against the layout
/// (`SHARD_OUT_OF_RANGE`), then against the range (`INVALID_ARGUMENT` naming `hostname`).
///
/// # Errors
/// As above: [`Error::InvalidArgument`], [`Error::ShardOutOfRange`].
pub fn shard_from_ordinal(
    hostname: &str,
    layout: &Layout,
    shards: Range<u64>,
) -> Result<u64, Error> {
    if shards.start >= shards.end {
        return Err(Error::InvalidArgument {
            argument: SHARDS_ARGUMENT,
            reason: EMPTY_SHARDS,
        });
    }
    let max = layout.max_shard();
    if shards.end - 1 > max {
        return Err(Error::ShardOutOfRange {
            shard: shards.end - 1,
            max,
        });
    }
    let shard = ordinal(hostname)?;
    if shard > max {
        return Err(Error::ShardOutOfRange { shard, max });
    }
    if !shards.contains(&shard) {
        return Err(Error::InvalidArgument {
            argument: HOSTNAME_ARGUMENT,
            reason: OUTSIDE_SHARDS,
        });
    }
    Ok(shard)
}

/// This host's name as Kubernetes sets it for a pod: the `HOSTNAME` environment variable (set
/// in every container), then the kernel's host name (`/proc/sys/kernel/hostname`, where a
/// process started without `HOSTNAME` still finds the pod's name), or `None` when neither is
/// readable. The default hostname of every binding's `shard_from_ordinal`.
#[cfg(feature = "std")]
pub fn hostname() -> Option<std::string::String> {
    if let Some(name) = std::env::var_os("HOSTNAME") {
        // Not UTF-8: handed on lossily, so the hostname check refuses it with its reason.
        return Some(name.to_string_lossy().into_owned());
    }
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    Some(name.trim_end_matches('\n').into())
}

/// [`shard_from_ordinal`] of `hostname`, or when it is `None` of this host's [`hostname`]: what
/// every binding calls, passing its caller's hostname argument as it came.
///
/// # Errors
/// As [`shard_from_ordinal`]; [`Error::InvalidArgument`] naming `hostname` ([`NO_HOSTNAME`])
/// when none was given and none could be read.
#[cfg(feature = "std")]
pub fn shard_of_pod(
    hostname: Option<&str>,
    layout: &Layout,
    shards: Range<u64>,
) -> Result<u64, Error> {
    if let Some(name) = hostname {
        shard_from_ordinal(name, layout, shards)
    } else {
        let name = self::hostname().ok_or(Error::InvalidArgument {
            argument: HOSTNAME_ARGUMENT,
            reason: NO_HOSTNAME,
        })?;
        shard_from_ordinal(&name, layout, shards)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(hostname: &str) -> &'static str {
        match ordinal(hostname) {
            Err(Error::InvalidArgument { argument, reason }) => {
                assert_eq!(argument, HOSTNAME_ARGUMENT);
                reason
            }
            other => panic!("{hostname}: {other:?}"),
        }
    }

    #[test]
    fn reads_the_ordinal_kubernetes_writes() {
        assert_eq!(ordinal("app-0"), Ok(0));
        assert_eq!(ordinal("app-12"), Ok(12));
        assert_eq!(ordinal("web-app-3"), Ok(3));
        assert_eq!(ordinal("app-3.web.default.svc.cluster.local"), Ok(3));
        assert_eq!(ordinal("a-18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn refuses_what_could_share_a_shard() {
        assert_eq!(reason("app"), NO_ORDINAL);
        assert_eq!(reason("app-"), NO_ORDINAL);
        assert_eq!(reason(""), NO_ORDINAL);
        assert_eq!(reason("app-3a"), NO_ORDINAL);
        assert_eq!(reason("app-\u{0663}"), NO_ORDINAL); // ARABIC-INDIC DIGIT THREE
        assert_eq!(reason("app-\u{FF13}"), NO_ORDINAL); // FULLWIDTH DIGIT THREE
        assert_eq!(reason("app-+3"), NO_ORDINAL);
        assert_eq!(reason("app-03"), LEADING_ZERO);
        assert_eq!(reason("app-00"), LEADING_ZERO);
        assert_eq!(reason("app--1"), BAD_SET_NAME);
        assert_eq!(reason("-1"), BAD_SET_NAME);
        assert_eq!(reason("a-18446744073709551616"), TOO_LARGE);
        // 61 characters of name: pod 1 is 63 long, and pod 12's cut to 63 would be pod 1's.
        let mut name = [b'a'; 63];
        name[61] = b'-';
        name[62] = b'1';
        let name = core::str::from_utf8(&name).expect("ASCII");
        assert_eq!(reason(name), TOO_LONG);
        assert_eq!(ordinal(&name[1..]), Ok(1)); // 62 bytes: read
    }

    #[test]
    fn checks_the_layout_then_the_range() {
        let l = Layout::INSTAGRAM; // shards 0..=8191
        assert_eq!(shard_from_ordinal("app-3", &l, 0..8192), Ok(3));
        assert_eq!(shard_from_ordinal("app-19", &l, 16..32), Ok(19));
        assert_eq!(
            shard_from_ordinal("app-8192", &l, 0..8192),
            Err(Error::ShardOutOfRange {
                shard: 8192,
                max: 8191
            })
        );
        assert_eq!(
            shard_from_ordinal("app-3", &l, 16..32),
            Err(Error::InvalidArgument {
                argument: HOSTNAME_ARGUMENT,
                reason: OUTSIDE_SHARDS
            })
        );
        assert_eq!(
            shard_from_ordinal("app-32", &l, 16..32),
            Err(Error::InvalidArgument {
                argument: HOSTNAME_ARGUMENT,
                reason: OUTSIDE_SHARDS
            })
        );
        assert_eq!(
            shard_from_ordinal("app-3", &l, 5..5),
            Err(Error::InvalidArgument {
                argument: SHARDS_ARGUMENT,
                reason: EMPTY_SHARDS
            })
        );
        assert_eq!(
            shard_from_ordinal("app-3", &l, 0..8193),
            Err(Error::ShardOutOfRange {
                shard: 8192,
                max: 8191
            })
        );
    }
}
