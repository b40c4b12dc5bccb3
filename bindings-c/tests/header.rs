//! `include/shardid.h` is what cbindgen renders from the current source.
use std::path::PathBuf;

const REGENERATE: &str = "SHARDID_BLESS=1 cargo test -p shardid-c --test header";

#[test]
fn checked_in_header_is_fresh() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header_path = crate_dir.join("../include/shardid.h");
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut rendered = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen")
        .write(&mut rendered);
    let rendered = String::from_utf8(rendered).expect("utf-8 header");
    if std::env::var_os("SHARDID_BLESS").is_some() {
        std::fs::write(&header_path, &rendered).expect("write include/shardid.h");
        return;
    }
    let checked_in = std::fs::read_to_string(&header_path).unwrap_or_default();
    assert!(
        checked_in == rendered,
        "include/shardid.h is stale: run `{REGENERATE}` and commit the result"
    );
}
