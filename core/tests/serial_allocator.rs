//! The serial allocator, scripted without a database: a period switch at midnight (the new
//! period starts at 1 while the old one's segment still holds numbers, and the old tail is
//! given back), callers behind the current period, the width's overflow, volume hiding, and 8
//! threads across scripted midnights with an in-memory database doing what PostgreSQL's
//! `take_serial_segment` and `give_back` do.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use shardid::ErrorKind;
use shardid::segment::{Segment, SizePolicy};
use shardid::serial::{
    Blocked, Issued, PeriodFetch, SerialAllocator, SerialFillError, SerialFormat, VolumeHiding,
};

/// 2026-11-25T00:00:00+08:00, Unix ms.
const MIDNIGHT: u64 = 1_795_536_000_000;
const DAY: u64 = 86_400_000;

/// The database's side: one row per period tag (`next`), segments taken from it, tails given
/// back only when nobody took a segment since — PostgreSQL's functions, in memory.
#[derive(Default)]
struct Db {
    next: Mutex<HashMap<String, u64>>,
    /// Numbers given back, per tag, and numbers the allocator reported lost.
    given_back: AtomicU64,
    lost: AtomicU64,
}

impl Db {
    fn take(&self, tag: &str, size: u64) -> Segment {
        let size = if size == 0 { 7 } else { size };
        let mut next = self.next.lock().unwrap();
        let row = next.entry(tag.into()).or_insert(1); // created on first use
        let first = *row;
        *row += size;
        Segment {
            first,
            count: size,
            stride: 1,
        }
    }

    fn give_back(&self, tag: &str, first: u64, end: u64) -> bool {
        let mut next = self.next.lock().unwrap();
        match next.get_mut(tag) {
            Some(row) if *row == end => {
                *row = first;
                true
            }
            _ => false,
        }
    }
}

/// What a driver does: the core's actions, run until a serial is issued (or an error).
fn next(a: &SerialAllocator, db: &Db, ms: u64) -> Result<Issued, shardid::serial::SerialError> {
    loop {
        match a.next_at(ms, || 0) {
            Ok(issued) => {
                if let Some(fetch) = issued.fetch {
                    fill(a, db, fetch);
                }
                if issued.retire {
                    retire(a, db);
                }
                return Ok(issued);
            }
            Err(Blocked::Fetch(fetch)) => fill(a, db, fetch),
            Err(Blocked::Wait) => std::thread::yield_now(),
            Err(Blocked::Retire(retired)) => give_back(a, db, retired),
            Err(Blocked::Error(e)) => return Err(e),
        }
    }
}

fn fill(a: &SerialAllocator, db: &Db, fetch: PeriodFetch) {
    let tag = fetch.period.tag(a.tag());
    let segment = db.take(&tag, fetch.size);
    match a.fill(fetch, segment, 0) {
        Ok(()) => {}
        Err(SerialFillError::Stale) => {
            if !db.give_back(&tag, segment.first, segment.end()) {
                db.lost.fetch_add(segment.count, Ordering::Relaxed);
            }
        }
        Err(e) => panic!("{e:?}"),
    }
}

fn retire(a: &SerialAllocator, db: &Db) {
    if let Some(retired) = a.retire() {
        give_back(a, db, retired);
    }
}

fn give_back(a: &SerialAllocator, db: &Db, retired: shardid::serial::Retired) {
    let u = retired.unused;
    db.lost.fetch_add(u.lost, Ordering::Relaxed);
    if db.give_back(&retired.period.tag(a.tag()), u.first, u.end) {
        db.given_back.fetch_add(u.count, Ordering::Relaxed);
    } else {
        db.lost.fetch_add(u.count, Ordering::Relaxed);
    }
}

fn allocator(format: &str, zone: &str, hiding: VolumeHiding) -> SerialAllocator {
    let format = SerialFormat::new(format, zone).unwrap();
    let max = if hiding.max_gap > 1 { 1_000 } else { 20 };
    SerialAllocator::new(format, "orders", SizePolicy::new().bounds(5, max), hiding)
}

#[test]
fn midnight_starts_the_next_day_at_1_and_gives_the_old_tail_back() {
    let db = Db::default();
    let a = allocator(
        "ORD-{yyyy}{MM}{dd}-{seq:6}",
        "Asia/Shanghai",
        VolumeHiding::NONE,
    );
    let before: Vec<String> = (0..3)
        .map(|i| {
            next(&a, &db, MIDNIGHT - 100 + i)
                .unwrap()
                .serial
                .to_string()
        })
        .collect();
    assert_eq!(
        before,
        [
            "ORD-20261124-000001",
            "ORD-20261124-000002",
            "ORD-20261124-000003"
        ]
    );
    // The day's first segment (7 numbers, the row's default here) still holds 4: the new day
    // starts at 1 anyway.
    let first = next(&a, &db, MIDNIGHT).unwrap();
    assert_eq!(first.serial.as_str(), "ORD-20261125-000001");
    assert_eq!(first.period().tag("orders"), "orders@2026-11-25");
    // The old day is given back as soon as nobody uses it: the row reads 4 again (its prefetch,
    // taken at the first number, was the last segment taken, so it goes back whole).
    let second = next(&a, &db, MIDNIGHT + 1).unwrap();
    assert_eq!(second.number, 2);
    assert!(a.retire().is_none(), "given back already");
    assert_eq!(db.next.lock().unwrap()["orders@2026-11-24"], 4);
    assert_eq!(db.lost.load(Ordering::Relaxed), 0);
    // A caller whose time is behind the current day (a thread that read the clock before
    // midnight) is issued at the day's first instant, in the new day.
    let late = next(&a, &db, MIDNIGHT - 5).unwrap();
    assert_eq!(
        (late.serial.as_str(), late.unix_ms),
        ("ORD-20261125-000003", MIDNIGHT)
    );
    // Close gives back what is left.
    let closed = a.close();
    let open: Vec<_> = closed.iter().flatten().collect();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].period.to_string(), "2026-11-25");
    assert_eq!((open[0].unused.first, open[0].unused.lost), (4, 0));
}

#[test]
fn a_period_that_runs_past_the_width_is_a_typed_error_and_the_next_starts_at_1() {
    let db = Db::default();
    let a = allocator("{yyyy}{MM}{dd}{seq:2}", "UTC", VolumeHiding::NONE);
    let noon = MIDNIGHT + 4 * 3_600_000; // 2026-11-24T20:00Z
    for n in 1..=99 {
        assert_eq!(next(&a, &db, noon).unwrap().number, n);
    }
    for _ in 0..3 {
        let err = next(&a, &db, noon).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::SerialOverflow);
        assert_eq!(
            err.to_string(),
            "no serial number left in orders@2026-11-24: the format holds numbers up to 99"
        );
    }
    let taken = db.next.lock().unwrap()["orders@2026-11-24"];
    assert!(
        taken <= 100 + 2 * 20,
        "at most the current and the prefetched segment past the width (row at {taken})"
    );
    let tomorrow = next(&a, &db, noon + DAY).unwrap();
    assert_eq!(tomorrow.serial.as_str(), "2026112501");
}

#[test]
fn a_fill_for_a_period_given_back_is_refused_as_stale() {
    let db = Db::default();
    let a = allocator("{yyyy}{MM}{dd}{seq:4}", "UTC", VolumeHiding::NONE);
    let Err(Blocked::Fetch(fetch)) = a.next_at(MIDNIGHT, || 0) else {
        panic!("a first fetch")
    };
    a.fetch_failed(fetch, 0);
    // The next day's first caller takes over; the first day had no numbers, nothing to give.
    let day2 = next(&a, &db, MIDNIGHT + DAY).unwrap();
    assert_eq!(day2.number, 1);
    assert_eq!(
        a.fill(
            fetch,
            Segment {
                first: 1,
                count: 5,
                stride: 1
            },
            0
        ),
        Err(SerialFillError::Stale)
    );
}

#[test]
fn volume_hiding_skips_a_random_step_and_never_repeats() {
    let db = Db::default();
    let a = allocator(
        "{yyyy}{MM}{dd}-{seq:8}",
        "UTC",
        VolumeHiding {
            max_gap: 10,
            key: 0x5eed,
        },
    );
    let numbers: Vec<u64> = (0..2000)
        .map(|i| next(&a, &db, MIDNIGHT + i).unwrap().number)
        .collect();
    let steps: Vec<u64> = numbers.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        steps.iter().all(|&s| (1..=10).contains(&s)),
        "steps in 1..=10"
    );
    let distinct: HashSet<u64> = steps.iter().copied().collect();
    assert!(distinct.len() >= 8, "steps vary: {distinct:?}");
    // 1,999 steps of mean 5.5: the span is about 11,000.
    let span = numbers[numbers.len() - 1] - numbers[0];
    assert!(
        (9_000..=13_000).contains(&span),
        "span {span}, expected about 11,000"
    );
    // Another key gives other steps.
    let b = allocator(
        "{yyyy}{MM}{dd}-{seq:8}",
        "UTC",
        VolumeHiding {
            max_gap: 10,
            key: 0xd1ff,
        },
    );
    let other: Vec<u64> = (0..50)
        .map(|i| next(&b, &Db::default(), MIDNIGHT + i).unwrap().number)
        .collect();
    assert_ne!(&numbers[..50], &other[..]);
}

#[test]
fn times_the_format_refuses_are_errors_and_reset_forgets_everything() {
    let db = Db::default();
    let a = allocator("{yy}{MM}{dd}{seq:4}", "UTC", VolumeHiding::NONE);
    let err = next(&a, &db, 4_102_444_800_000).unwrap_err(); // 2100
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(next(&a, &db, MIDNIGHT).unwrap().number, 1);
    let row = db.next.lock().unwrap()["orders@2026-11-24"];
    a.reset(); // a forked child: the parent's segments are never used again
    assert_eq!(a.current_period(), None);
    assert_eq!(
        next(&a, &db, MIDNIGHT).unwrap().number,
        row,
        "a new segment of the day"
    );
}

/// 8 threads issue while a scripted clock crosses three midnights (and New York's DST days):
/// no serial twice, every period starts at 1, and every number a period's row handed out is
/// issued, given back or counted as lost.
#[test]
fn eight_threads_across_scripted_midnights_in_three_zones() {
    for (zone, start) in [
        ("Asia/Shanghai", MIDNIGHT - 2_000),
        ("America/New_York", 1_772_946_000_000 - 2_000), // midnight into 2026-03-08, a 23-hour day
        ("America/New_York", 1_793_505_600_000 - 2_000), // midnight into 2026-11-01, a 25-hour day
        ("UTC", 1_795_564_800_000 - 2_000),
    ] {
        let db = Arc::new(Db::default());
        let a = Arc::new(allocator(
            "T-{yyyy}{MM}{dd}{HH}-{seq:7}",
            zone,
            VolumeHiding::NONE,
        ));
        // The clock: every call advances it by 1 ms on average; three days pass in ~ 30k calls
        // by jumping 1 day at 10,000 and 20,000 ticks.
        let ticks = Arc::new(AtomicU64::new(0));
        let issued = Arc::new(Mutex::new(Vec::new()));
        std::thread::scope(|s| {
            for _ in 0..8 {
                let (a, db, ticks, issued) = (
                    Arc::clone(&a),
                    Arc::clone(&db),
                    Arc::clone(&ticks),
                    Arc::clone(&issued),
                );
                s.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let t = ticks.fetch_add(1, Ordering::Relaxed);
                        if t >= 30_000 {
                            break;
                        }
                        let ms = start + t / 5 + (t / 10_000) * (DAY - 1_000);
                        let i = next(&a, &db, ms).unwrap();
                        mine.push((i.period(), i.number, i.serial.to_string(), i.unix_ms));
                    }
                    issued.lock().unwrap().extend(mine);
                });
            }
        });
        for retired in a.close().into_iter().flatten() {
            give_back(&a, &db, retired);
        }
        let issued = issued.lock().unwrap();
        let serials: HashSet<&String> = issued.iter().map(|i| &i.2).collect();
        assert_eq!(serials.len(), issued.len(), "{zone}: a serial twice");
        let mut per_period: HashMap<String, Vec<u64>> = HashMap::new();
        for (period, number, serial, ms) in issued.iter() {
            assert_eq!(
                a.format().render(*number, *ms).unwrap().as_str(),
                serial,
                "fields and period from one instant"
            );
            per_period
                .entry(period.tag("orders"))
                .or_default()
                .push(*number);
        }
        assert!(
            per_period.len() >= 3,
            "{zone}: periods {:?}",
            per_period.keys()
        );
        let rows = db.next.lock().unwrap();
        let mut holes = 0;
        for (tag, numbers) in &mut per_period {
            numbers.sort_unstable();
            assert_eq!(numbers[0], 1, "{zone} {tag} starts at 1");
            // Dense but for the tails that could not be given back.
            holes += rows[tag] - 1 - numbers.len() as u64;
        }
        assert_eq!(
            holes,
            db.lost.load(Ordering::Relaxed),
            "{zone}: every hole is counted"
        );
        assert_eq!(holes, 0, "{zone}: one process gives every tail back");
    }
}

proptest::proptest! {
    /// The allocator's cached text of an hour (or day, month, year) against rendering from
    /// scratch, for instants in any order across DST changes and midnights: a serial shows its
    /// own instant's fields, whatever the cache held.
    #[test]
    fn issued_serials_show_their_instants_fields(
        zone in proptest::sample::select(&["Asia/Shanghai", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia"][..]),
        format in proptest::sample::select(&["T{yyyy}{MM}{dd}{HH}-{seq:9}{check}", "{ww}{yy}-{seq:9:year}", "{MM}/{yyyy}:{seq:9}", "{HH}{dd}.{seq:9:never}"][..]),
        steps in proptest::collection::vec(0u64..7_200_000, 1..40),
        start in 1_700_000_000_000u64..1_900_000_000_000,
    ) {
        let db = Db::default();
        let a = allocator(format, zone, VolumeHiding::NONE);
        let mut t = start;
        for step in steps {
            t += step;
            let issued = next(&a, &db, t).unwrap();
            proptest::prop_assert_eq!(a.format().render(issued.number, issued.unix_ms).unwrap(), issued.serial);
            proptest::prop_assert_eq!(a.format().period_at(issued.unix_ms).unwrap(), issued.period());
            proptest::prop_assert_eq!(issued.unix_ms, t, "times only increase here: nothing is clamped");
        }
    }
}

#[test]
fn stats_add_up_every_period() {
    let db = Db::default();
    let a = allocator(
        "ORD-{yyyy}{MM}{dd}-{seq:6}",
        "Asia/Shanghai",
        VolumeHiding::NONE,
    );
    assert_eq!(a.stats().fetches, 0);
    // Two days: each period's segments come from its own slot, and the figures count both.
    for ms in [MIDNIGHT - 1_000, MIDNIGHT + 1_000] {
        for _ in 0..50 {
            next(&a, &db, ms).unwrap();
        }
    }
    let stats = a.stats();
    let taken = db.next.lock().unwrap().len();
    assert_eq!(taken, 2, "one tag a period");
    // 50 serials a day from segments of 5 to 20: at least 3 fetches each day.
    assert!(stats.fetches >= 6, "{stats:?}");
    assert_eq!(stats.failed_fetches, 0);
    assert_eq!(
        stats.fetch_latency_le_inf, stats.fetches,
        "every fetch in the histogram"
    );
    // What is left is the current (second) day's segment: at most its size.
    assert!(stats.remaining <= 20, "{stats:?}");
}
