//! Dense IDs, a serial number and the dictionary on one SQLite file, with no server:
//! `cargo run -p shardid --features sqlite,serial --example sqlite [FILE]` (a file in the
//! temporary directory by default). The tables are created on first use; run it again and the
//! numbers go on where they stopped.

use shardid::dictionary::sqlite::Dictionary;
use shardid::segment::SizePolicy;
use shardid::segment::sqlite::{DenseIds, create_tag};
use shardid::serial::sqlite::{Serials, create_serial};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join("shardid-example.db"),
        std::path::PathBuf::from,
    );
    let path = std::path::absolute(path)?;
    // `sqlite:///` then the absolute path: four slashes in all.
    let url = format!("sqlite:///{}", path.display());

    create_tag(&url, "orders", "main", 1)?; // once; again does nothing
    let orders = DenseIds::connect(&url, "orders", "main", SizePolicy::new())?;
    let ids: Vec<u64> = (0..3).map(|_| orders.next_id()).collect::<Result<_, _>>()?;
    println!("dense IDs: {ids:?}");
    orders.close(); // the unused rest goes back: the next run continues after the last ID

    let format = "ORD-{yyyy}{MM}{dd}-{seq:6}";
    create_serial(&url, "invoices", format, "Europe/Paris", "main", 1)?;
    let invoices = Serials::connect(
        &url,
        "invoices",
        format,
        "Europe/Paris",
        "main",
        SizePolicy::new(),
    )?;
    println!("serial: {}", invoices.next_serial()?);
    invoices.close();

    let countries = Dictionary::connect(&[&url], "countries", "main", 1_000)?;
    countries.create()?;
    let ids = countries.ids(&["FR", "DE", "FR", "JP"])?;
    println!("dictionary: {ids:?} (FR is {})", ids[0]);
    assert_eq!(countries.value(ids[1])?.as_deref(), Some("DE"));
    println!("file: {}", path.display());
    Ok(())
}
