//! Every export of libshardid runs its body behind the panic boundary (`status::boundary`,
//! directly or through `layout_op`, or `catch_unwind`), so a Rust panic is
//! `SHARDID_ERR_PANIC` and never unwinds into C (which would abort the host). The few that
//! cannot panic, and have no status to return one with, are listed with the reason.

#[path = "../../tests/rust/exports.rs"]
mod exports;

/// Exports outside the boundary, and why nothing in them can panic.
const CANNOT_PANIC: &[(&str, &str)] = &[
    ("shardid_options_default", "a struct of two constants"),
    (
        "shardid_generator_new",
        "shardid_options_default, then shardid_generator_new_with_options, which is behind the boundary",
    ),
    (
        "shardid_layout_instagram",
        "a preset's fields copied into a struct",
    ),
    (
        "shardid_layout_twitter",
        "a preset's fields copied into a struct",
    ),
    (
        "shardid_layout_discord",
        "a preset's fields copied into a struct",
    ),
    (
        "shardid_layout_sonyflake",
        "a preset's fields copied into a struct",
    ),
    (
        "shardid_version",
        "a pointer to a string checked at compile time",
    ),
];

#[test]
fn every_export_runs_behind_the_panic_boundary() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let exports = exports::exports(&src, |line| line == "#[unsafe(no_mangle)]");
    assert!(
        exports.len() > 35,
        "found only {} exports: is the parser broken?",
        exports.len()
    );
    let outside: Vec<String> = exports
        .iter()
        .filter(|e| {
            let guarded = ["boundary(", "layout_op(", "catch_unwind"]
                .iter()
                .any(|g| e.body.contains(g));
            !guarded && !CANNOT_PANIC.iter().any(|(name, _)| *name == e.name)
        })
        .map(|e| format!("{}: {}", e.file, e.name))
        .collect();
    assert!(
        outside.is_empty(),
        "exports outside the panic boundary: {outside:#?}"
    );
    // The list holds only exports that exist and are really outside.
    for (name, _) in CANNOT_PANIC {
        let export = exports.iter().find(|e| e.name == *name);
        assert!(
            export.is_some_and(|e| !e.body.contains("boundary(")),
            "{name}: stale entry"
        );
    }
}
