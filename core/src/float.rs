//! Decimal text to the nearest double, without std's float parser.
//!
//! std's parser carries a table of 128-bit powers of five (~8.5 KB) and
//! the Eisel–Lemire algorithm; the WebAssembly package is smaller without
//! them (docs/js.md, "Size"). Numbers in documents are short ("0.5", "2.5",
//! "1e-3"): those take the exact fast path (at most 19 significant digits,
//! an integer below 2^53 times an exactly representable power of ten), the
//! rest an approximation corrected against exact big-integer comparisons
//! until it is the nearest double (ties to even), as std's is. The tests
//! hold it to std's `f64::from_str` on random and hard inputs.

use std::cmp::Ordering;

/// Digits kept: past them only whether a dropped digit is nonzero matters
/// (a halfway point between two doubles has at most 767 significant digits).
const MAX_DIGITS: usize = 800;

/// Parses `[-]digits[.digits][(e|E)[+|-]digits]` (a fraction or an integer
/// part may be empty, not both) to the nearest double, ties to even: ±∞
/// past the largest double, ±0 below the smallest. `None` for anything else.
pub(crate) fn parse_f64(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if let Some(x) = fast(b) {
        return Some(x);
    }
    let (neg, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        _ => (false, 0),
    };
    // The value is D × 10^e, D the integer of `digits`.
    let mut digits: Vec<u8> = Vec::new();
    let (mut e, mut sticky, mut seen) = (0i64, false, false);
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        seen = true;
        if digits.len() < MAX_DIGITS {
            if !digits.is_empty() || c != b'0' {
                digits.push(c - b'0');
            }
        } else {
            sticky |= c != b'0';
            e += 1;
        }
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            seen = true;
            if digits.len() < MAX_DIGITS {
                if !digits.is_empty() || c != b'0' {
                    digits.push(c - b'0');
                }
                e -= 1;
            } else {
                sticky |= c != b'0';
            }
            i += 1;
        }
    }
    if !seen {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let eneg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut x: i64 = 0;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            x = (x * 10 + i64::from(c - b'0')).min(1 << 40);
            i += 1;
        }
        if i == start {
            return None;
        }
        e += if eneg { -x } else { x };
    }
    if i != b.len() {
        return None;
    }
    let x = magnitude(&digits, e, sticky);
    Some(if neg { -x } else { x })
}

/// The common case without allocating: `[-]digits[.digits]` of at most 15
/// significant digits and no exponent, which is an integer below 2^53
/// times an exact power of ten; `None` for anything else.
fn fast(b: &[u8]) -> Option<f64> {
    let (neg, rest) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    let (mut m, mut n, mut frac, mut dot, mut any) = (0u64, 0u32, 0usize, false, false);
    for &c in rest {
        match c {
            b'0'..=b'9' => {
                any = true;
                if m > 0 || c != b'0' {
                    n += 1;
                }
                m = m * 10 + u64::from(c - b'0');
                frac += usize::from(dot);
                if n > 15 {
                    return None;
                }
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if !any || frac > 22 {
        return None;
    }
    let x = m as f64 / POW10[frac];
    Some(if neg { -x } else { x })
}

/// The double nearest D × 10^e (plus a little when `sticky`).
fn magnitude(digits: &[u8], e: i64, sticky: bool) -> f64 {
    if digits.is_empty() {
        return 0.0;
    }
    let n = digits.len() as i64;
    // 10^(scale-1) <= value < 10^scale
    let scale = n + e;
    if scale > 310 {
        return f64::INFINITY;
    }
    if scale < -325 {
        return 0.0;
    }
    let e = e as i32;
    let lead = digits.iter().take(19).fold(0u64, |a, d| a * 10 + u64::from(*d));
    if n <= 19 && !sticky && lead < 1 << 53 {
        let m = lead as f64;
        if (0..=22).contains(&e) {
            return m * POW10[e as usize];
        }
        if (-22..0).contains(&e) {
            return m / POW10[(-e) as usize];
        }
        // 123e30 = 123_000_000 × 1e22, exactly, while the integer fits.
        if e > 22 && e <= 22 + 15 {
            if let Some(big) = lead.checked_mul(10u64.pow((e - 22) as u32)).filter(|x| *x < 1 << 53) {
                return big as f64 * POW10[22];
            }
        }
    }
    // An approximation within a few units in the last place, corrected.
    let e19 = e + (n - n.min(19)) as i32;
    let (e1, e2) = (e19 / 2, e19 - e19 / 2);
    let mut z = lead as f64 * 10f64.powi(e1) * 10f64.powi(e2);
    let d = Big::from_digits(digits);
    let value = Value { d: &d, e, sticky };
    // The approximation is a few units off at most: each turn moves one. The
    // bound only keeps a bug from looping; the tests never reach it.
    for _ in 0..256 {
        if z.is_infinite() {
            // Halfway between the largest double and 2^1024 rounds up (its mantissa is odd).
            if value.cmp(&Big::from_u64((1 << 54) - 1), 970) == Ordering::Less {
                z = f64::MAX;
                continue;
            }
            return f64::INFINITY;
        }
        let (m, k) = parts(z);
        let odd = m & 1 == 1;
        // Above the midpoint to the next double up (at it: to the even one)?
        let up = value.cmp(&Big::from_u64(2 * m + 1), k - 1);
        if up == Ordering::Greater || (up == Ordering::Equal && odd) {
            z = f64::from_bits(z.to_bits() + 1);
            continue;
        }
        if m == 0 {
            return z;
        }
        // Below the midpoint to the next double down? The gap below a power
        // of two (not the smallest normal's) is half the gap above it.
        let down = if m == 1 << 52 && k > -1074 {
            value.cmp(&Big::from_u64(4 * m - 1), k - 2)
        } else {
            value.cmp(&Big::from_u64(2 * m - 1), k - 1)
        };
        if down == Ordering::Less || (down == Ordering::Equal && odd) {
            z = f64::from_bits(z.to_bits() - 1);
            continue;
        }
        return z;
    }
    z
}

/// `z` (finite, >= 0) as m × 2^k, m an integer below 2^53.
fn parts(z: f64) -> (u64, i32) {
    let bits = z.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    if exp == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, exp - 1075)
    }
}

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// The decimal value D × 10^e, a little more when `sticky`.
struct Value<'a> {
    d: &'a Big,
    e: i32,
    sticky: bool,
}

impl Value<'_> {
    /// Compares the value with m × 2^k, exactly.
    fn cmp(&self, m: &Big, k: i32) -> Ordering {
        let mut lhs = self.d.clone();
        let mut rhs = m.clone();
        if self.e >= 0 {
            lhs.mul_pow10(self.e as u32);
        } else {
            rhs.mul_pow10(self.e.unsigned_abs());
        }
        if k >= 0 {
            rhs.shl(k as u32);
        } else {
            lhs.shl(k.unsigned_abs());
        }
        match lhs.cmp(&rhs) {
            Ordering::Equal if self.sticky => Ordering::Greater,
            o => o,
        }
    }
}

/// An unsigned big integer, 32-bit limbs, least significant first.
#[derive(Clone)]
pub(crate) struct Big(Vec<u32>);

impl Big {
    pub(crate) fn from_u64(x: u64) -> Big {
        Big(vec![x as u32, (x >> 32) as u32])
    }

    fn from_digits(digits: &[u8]) -> Big {
        let mut b = Big(Vec::with_capacity(digits.len() / 9 + 1));
        for chunk in digits.chunks(9) {
            let v = chunk.iter().fold(0u32, |a, d| a * 10 + u32::from(*d));
            b.mul_add(10u32.pow(chunk.len() as u32), v);
        }
        b
    }

    /// self = self × m + add.
    fn mul_add(&mut self, m: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let x = u64::from(*limb) * u64::from(m) + carry;
            *limb = x as u32;
            carry = x >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    pub(crate) fn mul_pow10(&mut self, mut e: u32) {
        while e >= 9 {
            self.mul_add(1_000_000_000, 0);
            e -= 9;
        }
        self.mul_add(10u32.pow(e), 0);
    }

    fn shl(&mut self, bits: u32) {
        let (words, bits) = ((bits / 32) as usize, bits % 32);
        if bits > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let x = (*limb << bits) | carry;
                carry = *limb >> (32 - bits);
                *limb = x;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        if words > 0 {
            self.0.splice(0..0, std::iter::repeat_n(0, words));
        }
    }

    fn trimmed(&self) -> &[u32] {
        let n = self.0.iter().rposition(|l| *l != 0).map_or(0, |i| i + 1);
        &self.0[..n]
    }

    fn cmp(&self, other: &Big) -> Ordering {
        let (a, b) = (self.trimmed(), other.trimmed());
        a.len().cmp(&b.len()).then_with(|| a.iter().rev().cmp(b.iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same(s: &str) {
        let theirs = s.parse::<f64>().ok();
        let ours = parse_f64(s);
        assert_eq!(ours.map(f64::to_bits), theirs.map(f64::to_bits), "{s:?}: {ours:?} vs std's {theirs:?}");
    }

    /// The exact decimal of m × 2^k: (m × 5^-k) × 10^k when k < 0.
    fn exact(m: u64, k: i32) -> String {
        let mut b = Big::from_u64(m);
        if k >= 0 {
            b.shl(k as u32);
        } else {
            for _ in 0..k.unsigned_abs() {
                b.mul_add(5, 0);
            }
        }
        let mut digits = Vec::new();
        while !b.trimmed().is_empty() {
            let mut rem = 0u64;
            for limb in b.0.iter_mut().rev() {
                let x = (rem << 32) | u64::from(*limb);
                *limb = (x / 10) as u32;
                rem = x % 10;
            }
            digits.push(b'0' + rem as u8);
        }
        digits.reverse();
        format!("{}e{}", String::from_utf8(digits).unwrap(), k.min(0))
    }

    #[test]
    fn edges() {
        for s in [
            "0",
            "-0",
            "0.0",
            "1",
            "-1",
            "0.1",
            "0.5",
            "2.5",
            "1e-3",
            "1E+3",
            "123456789012345678901234567890",
            "9007199254740993",
            "9007199254740992.5",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e309",
            "2e-324",
            "3e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "4.9406564584124654e-324",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "1e-400",
            "1e400",
            "0.000000000000000000000000001",
            "1e23",
            "8.5e22",
            "5e-1",
            "4.35",
            "1.5e16",
            "123e30",
            "1e0000000000000000000001",
            "1e-99999999999999999999",
            ".5",
            "5.",
            "",
            "-",
            ".",
            "e5",
            "1e",
            "1e+",
            "1x",
            "--1",
            "1.2.3",
        ] {
            same(s);
        }
        // What std reads beyond decimals, this parser does not: its callers hand it JSON numbers.
        for s in ["+1", "inf", "-infinity", "NaN"] {
            assert!(s.parse::<f64>().is_ok() && parse_f64(s).is_none(), "{s}");
        }
        same(&format!("0.{}1", "0".repeat(2000)));
        same(&format!("1{}", "0".repeat(400)));
        same(&format!("{}e-1000", "9".repeat(1200)));
        // A halfway point, then a hair above it far past the kept digits.
        let half = exact((1 << 53) + 1, -53 - 1);
        same(&half);
        let (d, e) = half.split_once('e').unwrap();
        same(&format!("{d}{}1e{e}", "0".repeat(1000)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]
        #[test]
        fn doubles_in_every_spelling(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            if x.is_finite() {
                for s in [format!("{x:e}"), format!("{x:.17e}"), format!("{x:.3e}"), format!("{x}"), format!("{x:.40}")] {
                    same(&s);
                }
            }
        }

        /// Halfway points between neighbours, and one digit off them.
        #[test]
        fn halfway_points(bits in 1u64..0x7fef_ffff_ffff_ffff) {
            let (m, k) = parts(f64::from_bits(bits));
            let h = exact(2 * m + 1, k - 1);
            same(&h);
            let (d, e) = h.split_once('e').unwrap();
            let last = d.as_bytes()[d.len() - 1];
            if last > b'0' {
                same(&format!("{}{}e{e}", &d[..d.len() - 1], (last - 1) as char));
            }
            same(&format!("{d}1e{}", e.parse::<i64>().unwrap() - 1));
        }

        #[test]
        fn random_decimals(int in "[0-9]{0,25}", frac in "[0-9]{0,25}", exp in -400i32..400) {
            same(&format!("{int}.{frac}e{exp}"));
            same(&format!("-{int}{frac}e{exp}"));
        }
    }
}
