//! `ordinal.json`: a shard from a Kubernetes `StatefulSet` pod's hostname, the names Kubernetes
//! makes and those every language must refuse, with their error.
use serde_json::{Value, json};
use shardid::ordinal::shard_from_ordinal;

use crate::{SCHEMA_VERSION, error_json, layout, n};

fn case(name: &str, layout_name: &str, hostname: &str, shards: (u64, u64)) -> Value {
    let result = shard_from_ordinal(hostname, &layout(layout_name), shards.0..shards.1);
    let expect = match result {
        Ok(shard) => json!({ "ok": n(shard) }),
        Err(e) => error_json(e),
    };
    json!({
        "name": name,
        "layout": layout_name,
        "args": { "hostname": hostname, "shards": [n(shards.0), n(shards.1)] },
        "expect": expect,
    })
}

fn cases() -> Vec<Value> {
    let all = (0, 8192); // Instagram's shards
    let long_set = "a".repeat(61);
    vec![
        case("first_pod", "instagram", "app-0", all),
        case("twelfth", "instagram", "app-12", all),
        case("set_name_with_hyphens", "instagram", "web-app-3", all),
        case(
            "fqdn",
            "instagram",
            "app-3.web.default.svc.cluster.local",
            all,
        ),
        case("last_shard", "instagram", "app-8191", all),
        case("second_set_range", "instagram", "app-19", (16, 32)),
        case("range_first", "instagram", "app-16", (16, 32)),
        case("range_last", "instagram", "app-31", (16, 32)),
        case("no_ordinal", "instagram", "app", all),
        case("nothing_after_hyphen", "instagram", "app-", all),
        case("empty", "instagram", "", all),
        case("leading_zero", "instagram", "app-03", all),
        case("negative_looking", "instagram", "app--1", all),
        case("no_set_name", "instagram", "-1", all),
        case("letters_after", "instagram", "app-3a", all),
        case("plus_sign", "instagram", "app-+3", all),
        case("arabic_indic_digit", "instagram", "app-\u{0663}", all),
        case("fullwidth_digit", "instagram", "app-\u{FF13}", all),
        case(
            "longest_read",
            "instagram",
            &format!("{}-1", &long_set[1..]),
            all,
        ),
        case(
            "maybe_cut_by_kubernetes",
            "instagram",
            &format!("{long_set}-1"),
            all,
        ),
        case("past_64_bits", "instagram", "app-18446744073709551616", all),
        case("beyond_layout", "instagram", "app-8192", all),
        case("beyond_tiny_layout", "tiny", "app-4", (0, 4)),
        case("below_range", "instagram", "app-3", (16, 32)),
        case("range_end_excluded", "instagram", "app-32", (16, 32)),
        case("empty_range", "instagram", "app-3", (5, 5)),
        case("range_past_layout", "tiny", "app-1", (0, 5)),
    ]
}

/// The file.
pub fn file() -> Value {
    json!({
        "_comment": "shard_from_ordinal(hostname, layout, shards [first, end), end excluded) -> the shard: the StatefulSet ordinal at the end of the hostname's first label (<statefulset>-<ordinal>, ASCII digits, no leading zero, the label at most 62 bytes), unchanged. Checked in order: the range (empty: INVALID_ARGUMENT naming shards; its last shard past the layout's: SHARD_OUT_OF_RANGE), the hostname (INVALID_ARGUMENT naming hostname, the expected shape in reason), the layout's shards (SHARD_OUT_OF_RANGE), the range (INVALID_ARGUMENT naming hostname).",
        "schema_version": SCHEMA_VERSION,
        "cases": cases(),
    })
}
