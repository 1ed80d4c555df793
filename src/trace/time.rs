//! RFC 3339 date-times to Unix seconds, just enough to order events (no time-zone database:
//! RFC 3339 carries explicit offsets).

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` (`t`/space for `T`, `z` for `Z` accepted, as
/// RFC 3339 §5.6 allows) into seconds since the Unix epoch. A leap second (`:60`) is accepted
/// and counted as the following second. Returns `None` for anything else.
pub fn parse_rfc3339(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let year = num(0..4)?;
    let month = num(5..7)?;
    let day = num(8..10)?;
    let hour = num(11..13)?;
    let minute = num(14..16)?;
    let second = num(17..19)?;
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut frac = 0.0;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        // Nanosecond resolution is what RFC 3339 producers emit; further digits cannot change
        // an f64 number of seconds since 1970 and are ignored. Integer arithmetic: this runs
        // once per event.
        let digits = &b[start..i.min(start + 9)];
        let nanos = digits
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'))
            * 10u64.pow(9 - digits.len() as u32);
        frac = nanos as f64 / 1e9;
    }
    let offset = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let digits = [*h1, *h2, *m1, *m2];
            if !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let oh = i64::from(h1 - b'0') * 10 + i64::from(h2 - b'0');
            let om = i64::from(m1 - b'0') * 10 + i64::from(m2 - b'0');
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(secs as f64 + frac)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The proleptic Gregorian date `(year, month, day)` of a count of days since 1970-01-01
/// (Howard Hinnant's algorithm, the inverse of [`days_from_civil`]).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0.0));
        // 2000-03-01 is 11017 days after the epoch.
        assert_eq!(
            parse_rfc3339("2000-03-01T00:00:00Z"),
            Some(11_017.0 * 86_400.0)
        );
        assert_eq!(parse_rfc3339("2026-11-22T17:33:04Z"), Some(1_795_368_784.0));
        assert_eq!(
            parse_rfc3339("2026-11-22T18:33:04+01:00"),
            parse_rfc3339("2026-11-22T17:33:04Z")
        );
        assert_eq!(
            parse_rfc3339("2026-11-22t17:33:04.25z"),
            Some(1_795_368_784.25)
        );
    }

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        for days in (-800_000i64..3_000_000).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
            assert!((1..=12).contains(&m) && (1..=days_in_month(y, m)).contains(&d));
        }
    }

    #[test]
    fn agrees_with_day_by_day_count() {
        // An independent oracle: count days one by one from the epoch.
        let mut days = 0i64;
        for y in 1970..2101 {
            for m in 1..=12 {
                let s = format!("{y:04}-{m:02}-01T00:00:00Z");
                assert_eq!(parse_rfc3339(&s), Some(days as f64 * 86_400.0), "{s}");
                days += days_in_month(y, m);
            }
        }
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "",
            "2026-11-22",
            "2026-11-22T17:33:04",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T17:33:04.Z",
            "2026-11-22T17:33:04+0100",
            "2026-11-22T17:33:04Zjunk",
            "２０２6-11-22T17:33:04Z",
        ] {
            assert_eq!(parse_rfc3339(s), None, "{s}");
        }
    }
}
