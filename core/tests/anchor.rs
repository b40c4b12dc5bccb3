//! The anchor that turns monotonic readings into Unix ms: clocks that jump either way.
use shardid::{Anchor, RESYNC_EVERY_MS};

const WALL: u64 = 1_700_000_000_000;

#[test]
fn first_reading_adopts_the_wall_clock() {
    let a = Anchor::new();
    assert_eq!(a.now_ms(5, || WALL), WALL);
    assert_eq!(
        a.now_ms(6, || unreachable!("read before the resync interval")),
        WALL + 1
    );
}

#[test]
fn a_wall_clock_stepped_back_is_never_followed() {
    let a = Anchor::new();
    assert_eq!(a.now_ms(0, || WALL), WALL);
    let mut last = WALL;
    // The wall clock goes back an hour at every resync; the anchor keeps counting forward.
    for step in 1..=5 {
        let mono = step * RESYNC_EVERY_MS;
        let now = a.now_ms(mono, || WALL - 3_600_000);
        assert_eq!(now, WALL + mono);
        assert!(now > last);
        last = now;
    }
}

#[test]
fn a_wall_clock_ahead_is_adopted_at_the_next_resync_only() {
    let a = Anchor::new();
    a.now_ms(0, || WALL);
    // Suspended for a minute: the monotonic clock did not count it, the wall clock did.
    assert_eq!(a.now_ms(10, || unreachable!()), WALL + 10);
    let after = a.now_ms(RESYNC_EVERY_MS, || WALL + RESYNC_EVERY_MS + 60_000);
    assert_eq!(after, WALL + RESYNC_EVERY_MS + 60_000);
    assert_eq!(a.now_ms(RESYNC_EVERY_MS + 1, || unreachable!()), after + 1);
}

#[test]
fn readings_never_decrease_whatever_the_wall_clock_does() {
    let a = Anchor::new();
    let mut last = 0;
    let mut wall = WALL;
    for mono in (0..200_000).step_by(97) {
        // A wall clock that wanders by up to ±40 s around real time.
        wall = (WALL + mono).wrapping_add(((mono * 7_919) % 80_000).wrapping_sub(40_000));
        let now = a.now_ms(mono, || wall);
        assert!(now >= last, "{now} < {last} at mono {mono}");
        last = now;
    }
    assert!(last >= wall - 40_000);
}
