//! Every export of the addon runs its body inside `errors::guard`, the panic boundary: a panic
//! must reach JavaScript as an error with `code` `PANIC`, never abort Node. (The boundary
//! itself is tested from JavaScript with a `panic-probe` build: `tests/js/run.sh`.)

#[path = "../../tests/rust/exports.rs"]
mod exports;

#[test]
fn every_export_runs_inside_the_panic_boundary() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // `#[napi]`, `#[napi(getter)]`, `#[napi(constructor)]`, ...; not `#[napi(object)]` types.
    let exports = exports::exports(&src, |line| {
        line.starts_with("#[napi") && !line.contains("object")
    });
    assert!(
        exports.len() > 60,
        "found only {} exports: is the parser broken?",
        exports.len()
    );
    let outside: Vec<String> = exports
        .iter()
        .filter(|e| !e.body.trim_start().starts_with("guard(env, ||"))
        .map(|e| format!("{}: {}", e.file, e.name))
        .collect();
    assert!(
        outside.is_empty(),
        "exports whose body does not start with `guard(env, || ...)`: {outside:#?}"
    );
}
