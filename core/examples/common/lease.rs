//! What the lease examples of every database share (`lease`, `mysql_lease`): the probe's
//! paced IDs and the holder that writes IDs until its lease is lost, over the `Lease` of the
//! example's database (`super`).
use std::io::Write;
use std::time::{Duration, Instant};

use shardid::Layout;
use shardid::lease::LeaseError;
use shardid::sql::LeaseKind;

use super::{Lease, LeaseOptions};

/// The error's code, or `no error`.
pub fn code<T>(result: Result<T, LeaseError>) -> String {
    result.map_or_else(|e| e.kind().code().to_string(), |_| "no error".into())
}

/// The probe: `count` IDs of `lease` spread over `seconds`, then its shard, written to `out`
/// (8 bytes each, little endian); closes the lease and prints the shard.
pub fn probe(
    lease: &Lease,
    out: &str,
    seconds: f64,
    count: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let mut bytes = Vec::with_capacity(8 * (count + 1));
    for i in 0..count {
        bytes.extend_from_slice(&lease.next_id()?.to_le_bytes());
        if i % 1000 == 999 {
            #[allow(clippy::cast_precision_loss)]
            let due = Duration::from_secs_f64(seconds * i as f64 / count as f64);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    }
    bytes.extend_from_slice(&lease.shard().to_le_bytes());
    std::fs::write(out, bytes)?;
    lease.close();
    println!("{{\"shard\": {}}}", lease.shard());
    Ok(())
}

/// The `hold <table> <out> <ttl>` mode (`args`): leases shard 0 of 0..1 and appends IDs to
/// `<out>` until its lease is lost (then writes `<out>.lost`) or the process is killed.
pub fn hold(url: &str, args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let (table, out) = (&args[0], &args[1]);
    let ttl_ms: u64 = args[2].parse()?;
    let lease = Lease::acquire(
        url,
        Layout::TWITTER,
        0..1,
        &LeaseOptions::new()
            .table(table)
            .kind(LeaseKind::Expiring { ttl_ms }),
    )?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)?;
    let mut ids = [0u64; 1000];
    loop {
        match lease.next_ids(&mut ids) {
            Ok(()) => {
                let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
                file.write_all(&bytes)?;
            }
            Err(e) if e.kind() == shardid::ErrorKind::LeaseLost => {
                std::fs::write(format!("{out}.lost"), e.to_string())?;
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        }
    }
}
