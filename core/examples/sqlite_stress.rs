//! One Rust worker process of the SQLite stress test (`tests/python/test_sqlite_stress.py`), beside
//! Python and Node workers on the same file:
//! `sqlite_stress URL OUT STOP_AT_MS MIDNIGHT_AT_MS START_MS`. Four threads share one
//! `DenseIds`, one `Serials` and one `Dictionary` (tiny segments), and append each item to
//! `OUT` the moment they have it (one `write` per line, so a killed process's last items
//! count): `d ID` a dense ID, `w STRING ID` a string's dictionary ID, `s SERIAL` a serial.
//! Serials are taken on a scripted clock that passes midnight (UTC) at `MIDNIGHT_AT_MS`; the
//! strings are a window over one list shared by every worker (`w{k}`, `k` from the time
//! since `START_MS`), so the same new strings race. Exits 0 at `STOP_AT_MS`, after closing
//! everything.

use std::fs::OpenOptions;
use std::io::Write;
use std::sync::Mutex;

use shardid::dictionary::sqlite::Dictionary;
use shardid::segment::SizePolicy;
use shardid::segment::sqlite::DenseIds;
use shardid::serial::sqlite::Serials;

/// The scripted midnight: 2031-05-02T00:00:00Z, as every worker of the test has it.
const MIDNIGHT_MS: u64 = 1_935_446_400_000;
/// Items per thread at most: bounded in count as well as in time.
const MAX_ITEMS: u32 = 400;

#[path = "common/wall_ms.rs"]
mod wall_ms;
use wall_ms::wall_ms;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, out, stop_at, midnight_at, start] = args.as_slice() else {
        return Err("usage: sqlite_stress URL OUT STOP_AT_MS MIDNIGHT_AT_MS START_MS".into());
    };
    let (stop_at, midnight_at, start): (u64, u64, u64) =
        (stop_at.parse()?, midnight_at.parse()?, start.parse()?);
    let tiny = SizePolicy::new().bounds(1, 5).target_ms(1);
    let ids = DenseIds::connect(url, "stress", "main", tiny)?;
    let format = "S-{yyyy}{MM}{dd}-{seq:6}";
    let serials = Serials::connect(
        url,
        "inv",
        format,
        "UTC",
        "main",
        SizePolicy::new().bounds(1, 3).target_ms(1),
    )?;
    let words = Dictionary::connect(&[url], "words", "main", 64)?;
    let file = Mutex::new(OpenOptions::new().create(true).append(true).open(out)?);
    let say = |line: String| {
        // One write of the whole line, under the lock: lines never interleave.
        file.lock().unwrap().write_all(line.as_bytes()).unwrap();
    };
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let (ids, serials, words, say) = (&ids, &serials, &words, &say);
            s.spawn(move || {
                // A small xorshift: which strings of the window this thread asks for.
                let mut seed = u64::from(std::process::id()) * 4 + thread + 1;
                for _ in 0..MAX_ITEMS {
                    let now = wall_ms();
                    if now >= stop_at {
                        break;
                    }
                    say(format!("d {}\n", ids.next_id().unwrap()));
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let word = format!("w{}", now.saturating_sub(start) / 5 + seed % 20);
                    let id = words.ids(&[&word]).unwrap()[0];
                    say(format!("w {word} {id}\n"));
                    let at = (MIDNIGHT_MS + now).saturating_sub(midnight_at);
                    say(format!("s {}\n", serials.next_serial_at(at).unwrap()));
                }
            });
        }
    });
    ids.close();
    serials.close();
    Ok(())
}
