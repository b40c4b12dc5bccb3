//! Civil-calendar arithmetic on days since 1970-01-01 (proleptic Gregorian), with no time
//! zone: what the hot path needs once the zone has given it the UTC offset. Howard Hinnant's
//! `civil_from_days` / `days_from_civil`, and ISO 8601 week numbers.

/// The date of day `days` since 1970-01-01: `(year, month 1..=12, day 1..=31)`.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // bounded by construction
pub(crate) const fn civil_from_days(days: i64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    let y = if m <= 2 { y + 1 } else { y };
    (y as i32, m as u8, d as u8)
}

/// Days since 1970-01-01 of a date.
pub(crate) const fn days_from_civil(year: i32, month: u8, day: u8) -> i64 {
    let y = if month <= 2 { year - 1 } else { year } as i64;
    let m = month as i64;
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400); // [0, 399]
    let mp = if m > 2 { m - 3 } else { m + 9 }; // [0, 11]
    let doy = (153 * mp + 2) / 5 + day as i64 - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

/// Whether `year` is a leap year.
pub(crate) const fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// How many days `month` of `year` has.
pub(crate) const fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The ISO weekday of day `days` since 1970-01-01: Monday 1 ... Sunday 7 (1970-01-01 was a
/// Thursday).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 1..=7
pub(crate) const fn iso_weekday(days: i64) -> u8 {
    ((days + 3).rem_euclid(7) + 1) as u8
}

/// How many ISO weeks (52 or 53) the ISO year `year` has: 53 when it starts on a Thursday, or
/// on a Wednesday in a leap year.
pub(crate) const fn iso_weeks_in_year(year: i32) -> u8 {
    let jan1 = iso_weekday(days_from_civil(year, 1, 1));
    if jan1 == 4 || (jan1 == 3 && is_leap(year)) {
        53
    } else {
        52
    }
}

/// The ISO 8601 week number (1..=53) of day `days` since 1970-01-01, as PostgreSQL's
/// `to_char(..., 'IW')`: weeks start on Monday, and week 1 holds the year's first Thursday, so
/// the first days of January can be in week 52 or 53 and the last days of December in week 1.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 1..=53
pub(crate) const fn iso_week(days: i64) -> u8 {
    let (year, _, _) = civil_from_days(days);
    let ordinal = days - days_from_civil(year, 1, 1) + 1; // 1..=366
    let week = (ordinal - iso_weekday(days) as i64 + 10) / 7;
    if week < 1 {
        iso_weeks_in_year(year - 1)
    } else if week > iso_weeks_in_year(year) as i64 {
        1
    } else {
        week as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_782), (2026, 11, 25));
        assert_eq!(days_from_civil(2026, 11, 25), 20_782);
        assert_eq!(civil_from_days(days_from_civil(2000, 2, 29)), (2000, 2, 29));
        for days in (-800_000..3_000_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
            assert!(d <= days_in_month(y, m));
        }
        assert_eq!(iso_weekday(days_from_civil(2026, 11, 25)), 3); // a Wednesday
    }

    #[test]
    fn iso_weeks_match_known_calendars() {
        // (date, ISO week), from ISO 8601 calendars.
        for ((y, m, d), week) in [
            ((2026, 11, 25), 48),
            ((2024, 12, 30), 1), // Monday of 2025-W01
            ((2021, 1, 3), 53),  // Sunday of 2020-W53
            ((2021, 1, 4), 1),
            ((2027, 1, 1), 53), // Friday of 2026-W53 (2026 starts on a Thursday)
            ((2026, 1, 1), 1),
            ((2022, 1, 2), 52),
            ((2008, 12, 29), 1),
        ] {
            assert_eq!(iso_week(days_from_civil(y, m, d)), week, "{y}-{m}-{d}");
        }
        assert_eq!(iso_weeks_in_year(2026), 53);
        assert_eq!(iso_weeks_in_year(2020), 53);
        assert_eq!(iso_weeks_in_year(2025), 52);
    }
}
