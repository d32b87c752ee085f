//! Server delays: `Retry-After`, `retry-after-ms`, `grpc-retry-pushback-ms`
//! and the retry hints servers send.
//!
//! `retry-after-ms` and AWS's `x-amz-retry-after` are integer milliseconds.
//! `Retry-After` (RFC 9110 §10.2.3) is either delay-seconds (`1*DIGIT`) or an
//! HTTP-date in IMF-fixdate, RFC 850 or asctime form, resolved against a
//! wall-clock `wall_now` (Unix epoch milliseconds); a date in the past means
//! 0. Precedence: pushback > `retry-after-ms` > `Retry-After`. A malformed,
//! negative, repeated or list-valued `Retry-After` is ignored, never an
//! error; a negative or malformed `grpc-retry-pushback-ms` means the server
//! declines the retry.

/// Where a server delay came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DelaySource {
    /// gRPC `grpc-retry-pushback-ms`.
    Pushback,
    /// `retry-after-ms` (integer milliseconds).
    RetryAfterMs,
    /// `Retry-After` (seconds or an HTTP-date).
    RetryAfter,
}

impl DelaySource {
    /// Returns the header name the delay came from.
    pub const fn name(self) -> &'static str {
        match self {
            DelaySource::Pushback => "grpc-retry-pushback-ms",
            DelaySource::RetryAfterMs => "retry-after-ms",
            DelaySource::RetryAfter => "retry-after",
        }
    }
}

/// What the response headers say about retrying.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerAdvice {
    /// The delay the server asked for, in nanoseconds, and its source.
    pub delay: Option<(u64, DelaySource)>,
    /// A pushback header was present but negative or malformed: don't retry.
    pub declined_by_pushback: bool,
    /// `Stripe-Should-Retry` / `x-should-retry`: `Some(true)` vouches, `Some(false)` declines.
    pub should_retry: Option<bool>,
    /// `x-retry-exhausted: 1` (an inner layer already gave up).
    pub retry_exhausted: bool,
}

impl ServerAdvice {
    /// Returns the delay in nanoseconds, if any.
    pub fn delay_ns(&self) -> Option<u64> {
        self.delay.map(|(d, _)| d)
    }

    /// Returns true when a valid pushback is present (the server is pushing back).
    pub fn has_pushback(&self) -> bool {
        matches!(self.delay, Some((_, DelaySource::Pushback)))
    }
}

const NS_PER_MS: u64 = 1_000_000;
const NS_PER_S: u64 = 1_000_000_000;

/// Trims optional whitespace (SP / HTAB) around a header value.
fn ows(s: &str) -> &str {
    s.trim_matches(|c| c == ' ' || c == '\t')
}

/// Parses `1*DIGIT` into a saturating integer.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut v: u64 = 0;
    for b in s.bytes() {
        v = v.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    Some(v)
}

/// Reads the headers a failed attempt carried.
///
/// Header names match ASCII case-insensitively. `wall_now_ms` resolves
/// HTTP-dates; without it a date is ignored.
pub fn read_headers<'a, I>(headers: I, wall_now_ms: Option<u64>) -> ServerAdvice
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut retry_after: Option<&str> = None;
    let mut retry_after_count = 0u32;
    let mut retry_after_ms: Option<Option<u64>> = None;
    let mut pushback: Option<Option<u64>> = None;
    let mut advice = ServerAdvice::default();
    for (name, value) in headers {
        let value = ows(value);
        if name.eq_ignore_ascii_case("retry-after") {
            retry_after_count += 1;
            retry_after = Some(value);
        } else if name.eq_ignore_ascii_case("retry-after-ms") || name.eq_ignore_ascii_case("x-amz-retry-after") {
            // Repeated: ignored, like Retry-After.
            retry_after_ms = Some(if retry_after_ms.is_some() { None } else { digits(value) });
        } else if name.eq_ignore_ascii_case("grpc-retry-pushback-ms") {
            pushback = Some(if pushback.is_some() { None } else { digits(value) });
        } else if name.eq_ignore_ascii_case("stripe-should-retry") || name.eq_ignore_ascii_case("x-should-retry") {
            if value.eq_ignore_ascii_case("true") {
                advice.should_retry = Some(advice.should_retry.unwrap_or(true));
            } else if value.eq_ignore_ascii_case("false") {
                advice.should_retry = Some(false);
            }
        } else if name.eq_ignore_ascii_case("x-retry-exhausted") && (value == "1" || value.eq_ignore_ascii_case("true"))
        {
            advice.retry_exhausted = true;
        }
    }
    match pushback {
        Some(Some(ms)) => advice.delay = Some((ms.saturating_mul(NS_PER_MS), DelaySource::Pushback)),
        Some(None) => advice.declined_by_pushback = true,
        None => {}
    }
    if advice.delay.is_none() && !advice.declined_by_pushback {
        if let Some(Some(ms)) = retry_after_ms {
            advice.delay = Some((ms.saturating_mul(NS_PER_MS), DelaySource::RetryAfterMs));
        } else if retry_after_count == 1 {
            if let Some(ns) = retry_after.and_then(|v| parse_retry_after(v, wall_now_ms)) {
                advice.delay = Some((ns, DelaySource::RetryAfter));
            }
        }
    }
    advice
}

/// Parses one `Retry-After` value into a delay in nanoseconds.
///
/// Returns `None` for anything malformed (which callers ignore), and for an
/// HTTP-date when `wall_now_ms` is `None`. A date in the past gives 0.
pub fn parse_retry_after(value: &str, wall_now_ms: Option<u64>) -> Option<u64> {
    let value = ows(value);
    if let Some(secs) = digits(value) {
        return Some(secs.saturating_mul(NS_PER_S));
    }
    let now_ms = wall_now_ms?;
    let at_secs = parse_http_date(value, now_ms)?;
    let at_ms = at_secs.saturating_mul(1000);
    let now_ms = i64::try_from(now_ms).unwrap_or(i64::MAX);
    if at_ms <= now_ms {
        Some(0)
    } else {
        u64::try_from(at_ms - now_ms).ok().map(|ms| ms.saturating_mul(NS_PER_MS))
    }
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

fn month(s: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == s).map(|i| i as u32 + 1)
}

fn fixed_digits(s: &str, n: usize) -> Option<u32> {
    if s.len() != n || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses `HH:MM:SS` (seconds up to 60 for a leap second).
fn time_of_day(s: &str) -> Option<(u32, u32, u32)> {
    let mut it = s.split(':');
    let h = fixed_digits(it.next()?, 2)?;
    let m = fixed_digits(it.next()?, 2)?;
    let sec = fixed_digits(it.next()?, 2)?;
    if it.next().is_some() || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some((h, m, sec))
}

use crate::civil::{civil_from_days, days_from_civil, days_in_month};

/// Returns the civil year of a Unix time in milliseconds.
pub(crate) fn year_of(unix_ms: u64) -> i64 {
    civil_from_days((unix_ms / 86_400_000) as i64).0
}

fn to_unix(y: i64, mo: u32, d: u32, (h, mi, s): (u32, u32, u32)) -> Option<i64> {
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s))
}

/// Parses an HTTP-date (IMF-fixdate, RFC 850 or asctime) into Unix seconds.
///
/// RFC 850's two-digit years take the century that puts the date at most 50
/// years after `wall_now_ms` (RFC 9110 §5.6.7).
pub fn parse_http_date(value: &str, wall_now_ms: u64) -> Option<i64> {
    let s = ows(value);
    if s.len() > 64 {
        return None;
    }
    if let Some((day, rest)) = s.split_once(", ") {
        if DAYS.contains(&day) {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            let parts: Vec<&str> = rest.split(' ').collect();
            if parts.len() != 5 || parts[4] != "GMT" {
                return None;
            }
            let d = fixed_digits(parts[0], 2)?;
            let mo = month(parts[1])?;
            let y = fixed_digits(parts[2], 4)?;
            return to_unix(i64::from(y), mo, d, time_of_day(parts[3])?);
        }
        if LONG_DAYS.contains(&day) {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let parts: Vec<&str> = rest.split(' ').collect();
            if parts.len() != 3 || parts[2] != "GMT" {
                return None;
            }
            let dmy: Vec<&str> = parts[0].split('-').collect();
            if dmy.len() != 3 {
                return None;
            }
            let d = fixed_digits(dmy[0], 2)?;
            let mo = month(dmy[1])?;
            let yy = i64::from(fixed_digits(dmy[2], 2)?);
            let now_year = year_of(wall_now_ms);
            let mut y = now_year - now_year.rem_euclid(100) + yy;
            if y > now_year + 50 {
                y -= 100;
            }
            return to_unix(y, mo, d, time_of_day(parts[1])?);
        }
        return None;
    }
    // asctime: Sun Nov  6 08:49:37 1994
    let (day, rest) = s.split_once(' ')?;
    if !DAYS.contains(&day) {
        return None;
    }
    let (mon, rest) = rest.split_once(' ')?;
    let mo = month(mon)?;
    let (d, rest) = if let Some(r) = rest.strip_prefix(' ') {
        // " 6 08:49:37 1994"
        let (d, r) = r.split_once(' ')?;
        (fixed_digits(d, 1)?, r)
    } else {
        let (d, r) = rest.split_once(' ')?;
        (fixed_digits(d, 2)?, r)
    };
    let (time, year) = rest.split_once(' ')?;
    let y = fixed_digits(year, 4)?;
    to_unix(i64::from(y), mo, d, time_of_day(time)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 784_111_777_000; // Sun, 06 Nov 1994 08:49:37 GMT

    #[test]
    fn three_date_forms_agree() {
        for v in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            assert_eq!(parse_http_date(v, NOW), Some(784_111_777), "{v}");
        }
    }

    #[test]
    fn seconds_and_dates() {
        assert_eq!(parse_retry_after("120", None), Some(120 * NS_PER_S));
        assert_eq!(parse_retry_after(" 0 ", None), Some(0));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", Some(NOW)), Some(10 * NS_PER_S));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:27 GMT", Some(NOW)), Some(0));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", None), None);
        for junk in
            ["-1", "1.5", "", "soon", "120, 30", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:00:00 GMT"]
        {
            assert_eq!(parse_retry_after(junk, Some(NOW)), None, "{junk}");
        }
    }

    #[test]
    fn two_digit_years() {
        // now = 2026: "76" is 2076 (50 years ahead), "77" is 1977.
        let now = 1_780_000_000_000; // 2026-05-28
        assert_eq!(year_of(now), 2026);
        let t76 = parse_http_date("Sunday, 01-Jan-76 00:00:00 GMT", now).unwrap();
        assert_eq!(t76, days_from_civil(2076, 1, 1) * 86_400);
        let t77 = parse_http_date("Saturday, 01-Jan-77 00:00:00 GMT", now).unwrap();
        assert_eq!(t77, days_from_civil(1977, 1, 1) * 86_400);
    }

    #[test]
    fn precedence_and_junk() {
        let a = read_headers([("Retry-After", "5"), ("retry-after-ms", "250")], None);
        assert_eq!(a.delay, Some((250 * NS_PER_MS, DelaySource::RetryAfterMs)));
        let a = read_headers([("Retry-After", "5"), ("grpc-retry-pushback-ms", "10")], None);
        assert_eq!(a.delay, Some((10 * NS_PER_MS, DelaySource::Pushback)));
        let a = read_headers([("Retry-After", "5"), ("Retry-After", "6")], None);
        assert_eq!(a.delay, None);
        let a = read_headers([("grpc-retry-pushback-ms", "-1")], None);
        assert!(a.declined_by_pushback);
        let a = read_headers([("x-should-retry", "false"), ("stripe-should-retry", "true")], None);
        assert_eq!(a.should_retry, Some(false));
    }
}
