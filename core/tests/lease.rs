//! Shard leases from lock files: distinct shards, a clear error when none is free, the
//! ceiling a successor starts above, and a clock set back between holders.
use shardid::lease::{LeaseError, LeasedGenerator};
use shardid::{Error, Layout, Options};

const T0: u64 = 1_700_000_000_000;

/// A fresh directory under the temp dir, removed again when the returned guard drops.
fn dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("shardid-lease-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    TempDir(dir)
}

struct TempDir(std::path::PathBuf);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn lease(
    dir: &std::path::Path,
    shards: std::ops::Range<u64>,
) -> Result<LeasedGenerator, LeaseError> {
    LeasedGenerator::acquire(dir, shards, Layout::TWITTER, Options::new())
}

#[test]
fn two_leases_never_share_a_shard_and_a_released_one_is_taken_again() {
    let d = dir("distinct");
    let a = lease(&d, 4..6).unwrap();
    let b = lease(&d, 4..6).unwrap();
    assert_eq!((a.shard().unwrap(), b.shard().unwrap()), (4, 5));
    let err = lease(&d, 4..6).unwrap_err();
    assert!(matches!(&err, LeaseError::NoFreeShard { shards, .. } if *shards == (4..6)));
    let message = err.to_string();
    assert!(
        message.contains("every shard in 4..6 is leased"),
        "{message}"
    );
    drop(a);
    assert_eq!(lease(&d, 4..6).unwrap().shard().unwrap(), 4);
}

#[test]
fn a_successor_starts_above_every_id_its_predecessor_issued() {
    let d = dir("ceiling");
    let first = lease(&d, 0..1).unwrap();
    let issued: Vec<u64> = (0..10_000)
        .map(|i| first.next_id_at(T0 + i / 1000).unwrap())
        .collect();
    let last = *issued.last().unwrap();
    drop(first);

    // Restarted at once, on the same clock: the ceiling (100 ms ahead of the last ID) is
    // still ahead, so the successor waits for it: `next_id_at` says until when, `next_id`
    // would sleep that long.
    let second = lease(&d, 0..1).unwrap();
    let Err(LeaseError::Id(Error::SequenceExhausted { retry_at_ms })) = second.next_id_at(T0 + 9)
    else {
        panic!("expected to wait for the ceiling");
    };
    assert_eq!(retry_at_ms, T0 + 101);
    let next = second.next_id_at(retry_at_ms).unwrap();
    assert!(next > last);
    drop(second);

    // The clock set back 400 ms between runs (within the 1 s tolerance): it waits again, and
    // never goes below what was issued.
    let third = lease(&d, 0..1).unwrap();
    assert!(matches!(
        third.next_id_at(T0 - 400),
        Err(LeaseError::Id(Error::SequenceExhausted { .. }))
    ));
    assert!(third.next_id_at(T0 + 300).unwrap() > next);
    drop(third);

    // Set back 5 s, beyond the 1 s tolerance: the clock error, never an old ID.
    let fourth = lease(&d, 0..1).unwrap();
    assert!(matches!(
        fourth.next_id_at(T0 - 5_000),
        Err(LeaseError::Id(Error::ClockMovedBackwards { .. }))
    ));
}

#[test]
fn the_ceiling_is_written_before_an_id_above_it_is_handed_out() {
    let d = dir("ahead");
    let g = lease(&d, 0..1).unwrap();
    let id = g.next_id_at(T0).unwrap();
    let units = Layout::TWITTER.decode(id).unwrap().timestamp_ms - Layout::TWITTER.epoch_ms();
    let text = std::fs::read_to_string(d.join("shard-0.lock")).unwrap();
    let ceiling: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("ceiling "))
        .unwrap()
        .parse()
        .unwrap();
    // 100 ms ahead of the ID.
    assert_eq!(ceiling, units + 100);
    // IDs within the ceiling do not rewrite it; the next one past it does.
    g.next_id_at(T0 + 90).unwrap();
    assert!(
        std::fs::read_to_string(d.join("shard-0.lock"))
            .unwrap()
            .contains(&format!("ceiling {ceiling}\n"))
    );
    g.next_id_at(T0 + 150).unwrap();
    assert!(
        std::fs::read_to_string(d.join("shard-0.lock"))
            .unwrap()
            .contains(&format!("ceiling {}\n", units + 250))
    );
}

#[test]
fn a_directory_holds_one_layout_and_the_range_must_fit_it() {
    let d = dir("layout");
    drop(lease(&d, 0..1).unwrap());
    let other = LeasedGenerator::acquire(&d, 0..1, Layout::INSTAGRAM, Options::new());
    assert!(matches!(other, Err(LeaseError::OtherLayout { .. })));
    let wide = LeasedGenerator::acquire(dir("wide"), 1020..1030, Layout::TWITTER, Options::new());
    assert!(matches!(
        wide,
        Err(LeaseError::Id(Error::ShardOutOfRange {
            shard: 1029,
            max: 1023
        }))
    ));
}

#[test]
fn an_empty_range_and_an_unusable_directory_say_what_is_wrong() {
    let d = dir("empty");
    let err = lease(&d, 3..3).unwrap_err();
    assert!(matches!(&err, LeaseError::EmptyShards { shards } if *shards == (3..3)));
    assert_eq!(err.kind(), shardid::ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        "shards 3..3 is empty: a lease needs a range of at least one shard"
    );
    // A directory that cannot be made (a file is in the way): the error names the path.
    std::fs::create_dir_all(&*d).unwrap();
    let file = d.join("not-a-directory");
    std::fs::write(&file, "").unwrap();
    let under = file.join("shards");
    let err = lease(&under, 0..1).unwrap_err();
    assert_eq!(err.kind(), shardid::ErrorKind::LeaseFile);
    assert!(
        err.to_string().contains(&under.display().to_string()),
        "{err}"
    );
}

#[test]
fn threads_share_a_leased_generator_without_duplicates() {
    let d = dir("threads");
    let g = lease(&d, 0..1).unwrap();
    let ids: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut batch = vec![0; 1000];
                    let mut ids: Vec<u64> = (0..25_000).map(|_| g.next_id().unwrap()).collect();
                    for _ in 0..25 {
                        g.next_ids(&mut batch).unwrap();
                        ids.extend_from_slice(&batch);
                    }
                    ids
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let unique: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), 200_000);
}

#[test]
fn a_closed_lease_frees_its_shard_at_once_and_makes_no_more_ids() {
    let d = dir("closed");
    let a = lease(&d, 0..1).unwrap();
    let last = a.next_id_at(T0).unwrap();
    assert!(matches!(
        lease(&d, 0..1),
        Err(LeaseError::NoFreeShard { .. })
    ));
    a.close();
    // Taken again at once, above every ID the closed lease issued.
    let b = lease(&d, 0..1).unwrap();
    assert_eq!(b.shard().unwrap(), 0);
    assert!(b.next_id_at(T0 + 500).unwrap() > last);
    // The closed lease refuses, names its shard, and closing again is fine.
    for result in [a.next_id_at(T0 + 1), a.next_id()] {
        let err = result.unwrap_err();
        assert!(matches!(err, LeaseError::Closed { shard: 0 }), "{err:?}");
        assert_eq!(err.kind().code(), "CLOSED");
        assert_eq!(
            err.to_string(),
            "the lease on shard 0 was closed: make a new one"
        );
    }
    assert!(matches!(
        a.next_ids(&mut [0; 4]),
        Err(LeaseError::Closed { .. })
    ));
    assert_eq!(a.shard().unwrap(), 0);
    a.close();
}

#[test]
fn a_lock_file_reads_back_its_ceiling_and_anything_else_is_refused() {
    use shardid::lease::{LockFileError, read_lock_file};
    let d = dir("read");
    let g = lease(&d, 0..1).unwrap();
    g.next_id_at(T0).unwrap();
    let text = std::fs::read_to_string(d.join("shard-0.lock")).unwrap();
    let ceiling = read_lock_file(&text, &Layout::TWITTER).unwrap().unwrap();
    assert_eq!(ceiling, T0 - Layout::TWITTER.epoch_ms() + 100);
    assert_eq!(read_lock_file("", &Layout::TWITTER), Ok(None));
    assert_eq!(
        read_lock_file(&text, &Layout::INSTAGRAM),
        Err(LockFileError::OtherLayout)
    );
    // Every cut of the file (a write that stopped part way) is refused, never read as a
    // smaller ceiling or as none.
    for cut in 1..text.len() {
        assert!(
            matches!(
                read_lock_file(&text[..cut], &Layout::TWITTER),
                Err(LockFileError::Unreadable { .. })
            ),
            "{:?}",
            &text[..cut]
        );
    }
    let units = format!("ceiling {ceiling}\n");
    for (bad, line) in [
        (text.replace(&units, "ceiling +5\n"), 3),
        (text.replace(&units, "ceiling  5\n"), 3),
        (text.replace(&units, "ceiling 18446744073709551616\n"), 3),
        (text.replace(&units, ""), 3),
        (format!("{text}ceiling 1\n"), 4),
        (text.replacen("shardid", "shardId", 1), 1),
        (text.replace("layout ", "layout: "), 2),
    ] {
        assert_eq!(
            read_lock_file(&bad, &Layout::TWITTER),
            Err(LockFileError::Unreadable { line }),
            "{bad:?}"
        );
    }
    // Acquiring a shard whose file cannot be read fails and names the file.
    drop(g);
    std::fs::write(
        d.join("shard-0.lock"),
        text.replace(&units, "ceiling 12x\n"),
    )
    .unwrap();
    let err = lease(&d, 0..1).unwrap_err();
    assert!(matches!(err, LeaseError::Io(_)), "{err:?}");
    assert!(err.to_string().contains("shard-0.lock"), "{err}");
}
