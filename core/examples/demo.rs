//! The main job's Rust part: make IDs with every preset, decode them, show range bounds and
//! scattering. Run with `cargo run -p shardid --example demo`.
use shardid::{Generator, Layout, Options};

fn main() -> Result<(), shardid::Error> {
    println!("shardid {} — Rust core", env!("CARGO_PKG_VERSION"));
    println!(
        "{:<10} {:>20}  {:<24} {:>6} {:>5}",
        "layout", "id", "decoded time (UTC ms)", "shard", "seq"
    );
    for (name, layout, shard) in [
        ("instagram", Layout::INSTAGRAM, 5),
        ("twitter", Layout::TWITTER, 17),
        ("discord", Layout::DISCORD, 32),
        ("sonyflake", Layout::SONYFLAKE, 0xBEEF),
    ] {
        let generator = Generator::shared(layout, shard, Options::new())?;
        let mut ids = [0u64; 3];
        generator.next_ids(&mut ids)?;
        for id in ids {
            let parts = layout.decode(id)?;
            println!(
                "{name:<10} {id:>20}  {:<24} {:>6} {:>5}",
                parts.timestamp_ms, parts.shard, parts.sequence
            );
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }

    let now = shardid::now_ms();
    let l = Layout::INSTAGRAM;
    println!();
    println!(
        "Instagram IDs made in this millisecond lie in [{}, {}]",
        l.min_id_at(now)?,
        l.max_id_at(now)?
    );
    println!(
        "Instagram's layout runs out at {} ms (2046-06-27 in a signed BIGINT)",
        l.expires_at_ms()
    );
    // The same shared state as the instagram generator above: no duplicate of its IDs.
    let id = Generator::shared(l, 5, Options::new())?.next_id()?;
    println!(
        "scatter_decimal({id}) = {} ; scatter_bits = {}",
        l.scatter_decimal(id)
            .map_or_else(|e| e.to_string(), |s| s.to_string()),
        l.scatter_bits(id)?
    );
    println!(
        "Discord's documented ID 175928847299117063 decodes to {:?}",
        Layout::DISCORD.decode(175_928_847_299_117_063)?
    );
    Ok(())
}
