//! Durations: the `<decimal><unit>` strings of documents and host conversions.
//!
//! Internally every duration and delay is a whole number of nanoseconds
//! (`u64`). Documents write durations as strings such as `"250ms"`, `"1.5s"`
//! or `"2m"`; a bare number is rejected because `{"deadline": 30}` means
//! 30 ms to one reader and 30 s to another. Host values (Python float
//! seconds, JavaScript float milliseconds) convert with round-half-to-even
//! and saturate.

use crate::{Error, ErrorCode, Result};
use std::time::Duration;

/// Nanoseconds per unit, by unit suffix.
const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Longest accepted duration text; anything longer is junk.
const MAX_TEXT: usize = 64;

/// Parses a `<decimal><unit>` duration into nanoseconds.
///
/// The decimal is one or more ASCII digits, optionally followed by `.` and
/// one or more digits; the unit is one of `ns`, `us`, `ms`, `s`, `m` or `h`.
/// Fractions finer than a nanosecond round half to even.
///
/// A value past `u64::MAX` nanoseconds (about 584 years) saturates there,
/// as a host number does ([`from_host_f64`]): one rule for both spellings.
///
/// # Errors
/// `invalid_duration`, naming `field`, for an empty string, a text over 64
/// bytes, a missing or unknown unit, a sign, whitespace, an exponent or a
/// compound form (`1m30s`).
pub fn parse_duration(text: &str, field: &str) -> Result<u64> {
    let err = |why: &str| {
        Error::new(
            ErrorCode::InvalidDuration,
            field.to_owned(),
            format!("{why} (got {}; write a duration such as \"250ms\", \"1.5s\" or \"2m\")", quote(text)),
        )
    };
    if text.is_empty() {
        return Err(err("empty duration"));
    }
    if text.len() > MAX_TEXT {
        return Err(err("duration text too long"));
    }
    let bytes = text.as_bytes();
    let num_end = bytes.iter().position(|b| !(b.is_ascii_digit() || *b == b'.')).unwrap_or(bytes.len());
    let (num, unit) = text.split_at(num_end);
    if num.is_empty() {
        if text.starts_with('-') {
            return Err(err("negative durations are not allowed"));
        }
        return Err(err("a duration starts with a number"));
    }
    if unit.is_empty() {
        return Err(err("missing unit (ns, us, ms, s, m or h)"));
    }
    let scale = match UNITS.iter().find(|(u, _)| *u == unit) {
        Some((_, s)) => *s,
        None => return Err(err("unknown unit; use ns, us, ms, s, m or h")),
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (num, None),
    };
    if int.is_empty() || frac.is_some_and(|f| f.is_empty() || f.contains('.')) {
        return Err(err("malformed number"));
    }
    // Integer part, exactly.
    let mut whole: u128 = 0;
    for b in int.bytes() {
        whole = whole * 10 + u128::from(b - b'0');
        if whole > u128::from(u64::MAX) {
            return Ok(u64::MAX);
        }
    }
    let mut ns: u128 = whole * u128::from(scale);
    if let Some(f) = frac {
        // value = digits / 10^len, in units; ns = digits * scale / 10^len, half to even.
        // 24 fraction digits are far finer than a nanosecond of an hour.
        let digits = f.trim_end_matches('0');
        let digits = if digits.len() > 24 { &digits[..24] } else { digits };
        let truncated = digits.len() < f.trim_end_matches('0').len();
        if !digits.is_empty() {
            let mut n: u128 = 0;
            for b in digits.bytes() {
                n = n * 10 + u128::from(b - b'0');
            }
            let den: u128 = 10u128.pow(digits.len() as u32);
            // r < 1e24 and scale ≤ 3.6e12, so r · scale < 3.6e36 fits in u128;
            // the product is split to stay exact.
            let q = n / den;
            let r = n % den;
            let mut add = q * u128::from(scale);
            let num2 = r * u128::from(scale);
            let q2 = num2 / den;
            let rem = num2 % den;
            add += q2;
            let twice = rem * 2;
            if twice > den || (twice == den && (truncated || (ns + add) % 2 == 1)) {
                add += 1;
            }
            ns += add;
        }
    }
    Ok(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// Formats nanoseconds as the shortest exact duration string in the largest
/// unit that keeps it exact (`"1.5s"`, `"250ms"`, `"100ns"`).
pub fn format_duration(ns: u64) -> String {
    if ns == 0 {
        return "0s".to_owned();
    }
    // Prefer s, ms, us, ns with a short fraction; m and h when exact.
    for (unit, scale) in [("h", 3_600_000_000_000u64), ("m", 60_000_000_000)] {
        if ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    for (unit, scale, width) in [("s", 1_000_000_000u64, 9usize), ("ms", 1_000_000, 6), ("us", 1_000, 3)] {
        if ns >= scale {
            let (whole, frac) = (ns / scale, ns % scale);
            if frac == 0 {
                return format!("{whole}{unit}");
            }
            let digits = format!("{frac:0width$}");
            let digits = digits.trim_end_matches('0');
            if digits.len() <= 3 {
                return format!("{whole}.{digits}{unit}");
            }
        }
    }
    format!("{ns}ns")
}

/// Formats nanoseconds for people: `"1.5s"`, `"250ms"`, `"2m"`, rounded to
/// three significant decimals.
pub fn human(ns: u64) -> String {
    let f = ns as f64;
    if ns == 0 {
        "0s".to_owned()
    } else if ns >= 3_600_000_000_000 && ns % 60_000_000_000 == 0 {
        trim(f / 3.6e12, "h")
    } else if ns >= 60_000_000_000 {
        trim(f / 6e10, "m")
    } else if ns >= 1_000_000_000 {
        trim(f / 1e9, "s")
    } else if ns >= 1_000_000 {
        trim(f / 1e6, "ms")
    } else if ns >= 1_000 {
        trim(f / 1e3, "us")
    } else {
        format!("{ns}ns")
    }
}

fn trim(v: f64, unit: &str) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{unit}")
}

fn quote(s: &str) -> String {
    let shown: String = s.chars().take(40).collect();
    let mut out = String::from("\"");
    for c in shown.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    if s.chars().count() > 40 {
        out.push('…');
    }
    out.push('"');
    out
}

/// Converts a host float in units of `scale` nanoseconds to nanoseconds,
/// rounding half to even and saturating at `u64::MAX`.
///
/// # Errors
/// `out_of_range`, naming `field`, for NaN, infinities and negative values
/// (`-0.0` is zero).
pub fn from_host_f64(value: f64, scale: f64, field: &str) -> Result<u64> {
    if value.is_nan() {
        return Err(Error::new(ErrorCode::OutOfRange, field.to_owned(), "must be a number, got NaN"));
    }
    if value.is_infinite() {
        return Err(Error::new(ErrorCode::OutOfRange, field.to_owned(), "must be finite"));
    }
    if value < 0.0 {
        return Err(Error::new(ErrorCode::OutOfRange, field.to_owned(), format!("must not be negative, got {value}")));
    }
    let ns = (value * scale).round_ties_even();
    // `as` saturates at u64::MAX.
    Ok(ns as u64)
}

/// Converts float seconds (Python's unit) to nanoseconds; see [`from_host_f64`].
pub fn from_secs_f64(value: f64, field: &str) -> Result<u64> {
    from_host_f64(value, 1e9, field)
}

/// Converts float milliseconds (JavaScript's unit) to nanoseconds; see [`from_host_f64`].
pub fn from_millis_f64(value: f64, field: &str) -> Result<u64> {
    from_host_f64(value, 1e6, field)
}

/// Converts nanoseconds to float seconds (`ns / 1e9`, one IEEE division).
pub fn to_secs_f64(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Converts nanoseconds to float milliseconds (`ns / 1e6`, one IEEE division).
pub fn to_millis_f64(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Converts a [`Duration`] to nanoseconds, saturating at `u64::MAX` (584 years).
#[inline]
pub fn from_std(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Converts nanoseconds to a [`Duration`].
#[inline]
pub fn to_std(ns: u64) -> Duration {
    Duration::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("250ms", "x").unwrap(), 250_000_000);
        assert_eq!(parse_duration("1.5s", "x").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("0.1s", "x").unwrap(), 100_000_000);
        assert_eq!(parse_duration("2m", "x").unwrap(), 120_000_000_000);
        assert_eq!(parse_duration("1h", "x").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_duration("7ns", "x").unwrap(), 7);
        assert_eq!(parse_duration("1.5ns", "x").unwrap(), 2);
        assert_eq!(parse_duration("2.5ns", "x").unwrap(), 2);
        assert_eq!(parse_duration("0.0000000015s", "x").unwrap(), 2);
        assert_eq!(parse_duration("18446744073709551615ns", "x").unwrap(), u64::MAX);
    }

    #[test]
    fn rejects_junk() {
        for bad in ["", "30", "-1s", "1m30s", "1.s", ".5s", "1e3ms", " 1s", "1s ", "1S", "1sec", "1..5s", "+1s"] {
            let e = parse_duration(bad, "deadline").unwrap_err();
            assert_eq!(e.code(), "invalid_duration", "{bad}");
            assert_eq!(e.field(), "deadline");
        }
        // Past u64::MAX ns a duration saturates, as a host number does.
        assert_eq!(parse_duration("18446744073709551616ns", "x").unwrap(), u64::MAX);
        assert_eq!(parse_duration("99999999999h", "x").unwrap(), u64::MAX);
        assert_eq!(parse_duration("99999999999999999999999999999999999999999999s", "x").unwrap(), u64::MAX);
        assert_eq!(from_secs_f64(1e30, "x").unwrap(), parse_duration("1000000000000000000000000000000s", "x").unwrap());
    }

    #[test]
    fn formats_round_trip() {
        for ns in [0, 1, 999, 1_000, 1_500, 250_000_000, 1_500_000_000, 60_000_000_000, 3_600_000_000_000, 123_456_789]
        {
            let s = format_duration(ns);
            assert_eq!(parse_duration(&s, "x").unwrap(), ns, "{s}");
        }
    }

    #[test]
    fn host_floats() {
        assert_eq!(from_secs_f64(1.5, "x").unwrap(), 1_500_000_000);
        assert_eq!(from_millis_f64(0.0000005, "x").unwrap(), 0);
        assert_eq!(from_millis_f64(0.0000015, "x").unwrap(), 2);
        assert_eq!(from_secs_f64(-0.0, "x").unwrap(), 0);
        assert_eq!(from_secs_f64(1e30, "x").unwrap(), u64::MAX);
        assert!(from_secs_f64(f64::NAN, "x").is_err());
        assert!(from_secs_f64(-1.0, "x").is_err());
        assert!(from_millis_f64(f64::INFINITY, "x").is_err());
    }
}
