//! Writes the conformance vectors into `tests/vectors/` and their C translation into `tests/c/`.
use std::path::Path;

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (path, contents) in shardid_vectors::render_all() {
        std::fs::write(dir.join(&path), contents)?;
        println!("wrote tests/{path}");
    }
    Ok(())
}
