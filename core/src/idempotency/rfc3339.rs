//! RFC 3339 timestamps for dead letters: a strict reader and a UTC writer.

use crate::{Error, ErrorCode, Result};

/// The latest instant RFC 3339's four-digit years can write: 9999-12-31T23:59:59.999Z.
pub const MAX_RFC3339_MS: u64 = 253_402_300_799_999;

use crate::civil::{civil_from_days, days_from_civil, days_in_month};

/// Formats Unix epoch milliseconds as an RFC 3339 UTC timestamp with millisecond precision.
///
/// `format_rfc3339_ms(0)` is `"1970-01-01T00:00:00.000Z"`.
///
/// # Errors
/// `out_of_range` (field `unix_ms`) past 9999-12-31T23:59:59.999Z, which has
/// no four-digit year.
pub fn format_rfc3339_ms(unix_ms: u64) -> Result<String> {
    if unix_ms > MAX_RFC3339_MS {
        return Err(Error::new(ErrorCode::OutOfRange, "unix_ms", "is after year 9999"));
    }
    let ms = unix_ms as i64;
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (rest / 3_600_000, rest % 3_600_000);
    let (mi, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    Ok(format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z"))
}

/// An instant read from RFC 3339 text: seconds and nanoseconds since the Unix epoch.
pub(crate) type Instant = (i64, u32);

/// Reads an RFC 3339 `date-time` (§5.6) as seconds and nanoseconds since the epoch.
///
/// Strict: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, `T` and `Z` in either
/// case, real calendar dates, a leap second `60` accepted (it reads as the
/// next minute's first second). Fractions beyond nanoseconds are truncated.
pub(crate) fn parse_instant(text: &str, code: ErrorCode, field: &'static str) -> Result<Instant> {
    let bad = |why: &str| Error::new(code, field, format!("{text:?} is not an rfc 3339 date-time: {why}"));
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let s = b.get(from..from + len)?;
        s.iter().all(u8::is_ascii_digit).then(|| s.iter().fold(0u32, |a, &c| a * 10 + (c - b'0') as u32))
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    let (Some(y), Some(mo), Some(d)) = (num(0, 4), num(5, 2), num(8, 2)) else {
        return Err(bad("expected YYYY-MM-DD"));
    };
    if !sep(4, b"-") || !sep(7, b"-") {
        return Err(bad("expected YYYY-MM-DD"));
    }
    if !sep(10, b"Tt") {
        return Err(bad("expected 'T' after the date"));
    }
    let (Some(h), Some(mi), Some(s)) = (num(11, 2), num(14, 2), num(17, 2)) else {
        return Err(bad("expected HH:MM:SS"));
    };
    if !sep(13, b":") || !sep(16, b":") {
        return Err(bad("expected HH:MM:SS"));
    }
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y as i64, mo) {
        return Err(bad("no such date"));
    }
    if h > 23 || mi > 59 || s > 60 {
        return Err(bad("no such time"));
    }
    let mut at = 19;
    let mut nanos: u32 = 0;
    if sep(at, b".") {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 9 {
                nanos = nanos * 10 + (b[at] - b'0') as u32;
            }
            at += 1;
        }
        if at == start {
            return Err(bad("expected digits after '.'"));
        }
        for _ in (at - start)..9 {
            nanos *= 10;
        }
    }
    let offset_s: i64 = match b.get(at) {
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(&c @ (b'+' | b'-')) if at + 6 == b.len() && sep(at + 3, b":") => {
            let (Some(oh), Some(om)) = (num(at + 1, 2), num(at + 4, 2)) else {
                return Err(bad("expected an offset ±HH:MM"));
            };
            if oh > 23 || om > 59 {
                return Err(bad("no such offset"));
            }
            let o = (oh * 3600 + om * 60) as i64;
            if c == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return Err(bad("expected 'Z' or an offset ±HH:MM at the end")),
    };
    let secs = days_from_civil(y as i64, mo, d) * 86_400 + (h * 3600 + mi * 60 + s) as i64 - offset_s;
    Ok((secs, nanos))
}

/// Reads an RFC 3339 `date-time` as Unix epoch milliseconds (rounded down).
///
/// # Errors
/// `invalid_value` (field `timestamp`) when the text is not a strict
/// RFC 3339 date-time with a real date and an offset.
pub fn parse_rfc3339_ms(text: &str) -> Result<i64> {
    let (secs, nanos) = parse_instant(text, ErrorCode::InvalidValue, "timestamp")?;
    Ok(secs * 1000 + (nanos / 1_000_000) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats() {
        assert_eq!(format_rfc3339_ms(0).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339_ms(951_782_400_000).unwrap(), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_rfc3339_ms(MAX_RFC3339_MS).unwrap(), "9999-12-31T23:59:59.999Z");
        assert_eq!(format_rfc3339_ms(MAX_RFC3339_MS + 1).unwrap_err().code(), "out_of_range");
    }

    #[test]
    fn parses() {
        assert_eq!(
            parse_rfc3339_ms("2026-08-19T02:11:03+09:00").unwrap(),
            parse_rfc3339_ms("2026-08-18T17:11:03Z").unwrap()
        );
        assert_eq!(parse_rfc3339_ms("1970-01-01t00:00:01.5z").unwrap(), 1500);
        assert_eq!(parse_rfc3339_ms("1969-12-31T23:59:59.999Z").unwrap(), -1);
        for bad in [
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-01-01 00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+0900",
            "2026-1-01T00:00:00Z",
            "",
        ] {
            assert_eq!(parse_rfc3339_ms(bad).unwrap_err().code(), "invalid_value", "{bad}");
        }
    }

    proptest! {
        #[test]
        fn round_trips(ms in 0u64..=MAX_RFC3339_MS) {
            let s = format_rfc3339_ms(ms).unwrap();
            prop_assert_eq!(parse_rfc3339_ms(&s).unwrap(), ms as i64);
        }
    }
}
