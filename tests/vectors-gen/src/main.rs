//! Writes the conformance vectors into `tests/vectors/`.
use std::path::Path;

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    for (name, contents) in shardid_vectors::render() {
        std::fs::write(dir.join(name), contents)?;
        println!("wrote tests/vectors/{name}");
    }
    Ok(())
}
