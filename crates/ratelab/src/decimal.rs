//! Decimal text of an `f64`, exactly as `format!("{v:.N}")` and `format!("{v}")` write it,
//! without the standard library's float formatting (Grisu, Dragon and the exponent forms:
//! about 9 KB gzipped in each wasm module). Exact arithmetic on a small big integer: a value
//! is `m · 2^e`, and everything follows from integers.
//!
//! - [`fixed`]: `N` decimals, rounded half to even on the exact binary value, as std does.
//! - [`shortest`]: the fewest significant digits that read back as the same `f64`, as std's
//!   `Display` does (never an exponent).
//! - [`parse`]: a plain decimal read as `str::parse::<f64>` reads it, without std's float
//!   parser (about 2 KB gzipped in each module), by an exact test of which `f64` a decimal
//!   rounds to.

/// A non-negative big integer, base 2^32, least significant limb first.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn mul_small(&mut self, k: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let x = u64::from(*limb) * u64::from(k) + carry;
            *limb = x as u32;
            carry = x >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn add_small(&mut self, k: u32) {
        let mut carry = u64::from(k);
        for limb in &mut self.0 {
            if carry == 0 {
                return;
            }
            let x = u64::from(*limb) + carry;
            *limb = x as u32;
            carry = x >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn shl(&mut self, bits: u32) {
        let (limbs, bits) = ((bits / 32) as usize, bits % 32);
        if bits > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let x = (u64::from(*limb) << bits) | u64::from(carry);
                *limb = x as u32;
                carry = (x >> 32) as u32;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        if !self.is_zero() {
            self.0.splice(0..0, std::iter::repeat_n(0, limbs));
        }
    }

    /// Bit `i`.
    fn bit(&self, i: u32) -> bool {
        self.0
            .get((i / 32) as usize)
            .is_some_and(|l| l >> (i % 32) & 1 == 1)
    }

    /// Whether any bit below `i` is set.
    fn any_below(&self, i: u32) -> bool {
        let (limbs, bits) = ((i / 32) as usize, i % 32);
        self.0.iter().take(limbs).any(|&l| l != 0)
            || (bits > 0
                && self
                    .0
                    .get(limbs)
                    .is_some_and(|&l| l & ((1 << bits) - 1) != 0))
    }

    /// `self >> bits`, rounded down.
    fn shr_floor(&self, bits: u32) -> Big {
        let (limbs, sh) = ((bits / 32) as usize, bits % 32);
        let mut out: Vec<u32> = self.0.iter().skip(limbs).copied().collect();
        if sh > 0 {
            for i in 0..out.len() {
                let hi = out.get(i + 1).copied().unwrap_or(0);
                out[i] = (out[i] >> sh) | ((u64::from(hi) << (32 - sh)) as u32);
            }
        }
        let mut q = Big(out);
        q.trim();
        q
    }

    /// `self >> bits`, rounded up.
    fn shr_ceil(&self, bits: u32) -> Big {
        let mut q = self.shr_floor(bits);
        if self.any_below(bits) {
            q.add_small(1);
        }
        q
    }

    /// `self >> bits`, rounded half to even (or, `even` false, half up).
    fn shr_round(&self, bits: u32, even: bool) -> Big {
        if bits == 0 {
            return self.clone();
        }
        let mut q = self.shr_floor(bits);
        let half = self.bit(bits - 1);
        let rest = self.any_below(bits - 1);
        let odd = q.0.first().is_some_and(|l| l & 1 == 1);
        if half && (rest || odd || !even) {
            q.add_small(1);
        }
        q
    }

    /// Divides by `k` in place, returning the remainder.
    fn div_small(&mut self, k: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let x = (rem << 32) | u64::from(*limb);
            *limb = (x / u64::from(k)) as u32;
            rem = x % u64::from(k);
        }
        self.trim();
        rem as u32
    }

    /// Compares two trimmed big integers.
    fn cmp(&self, other: &Big) -> std::cmp::Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// Decimal digits.
    fn to_decimal(&self) -> String {
        if self.is_zero() {
            return "0".into();
        }
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_small(1_000_000_000));
        }
        let mut s = chunks.pop().map_or(String::new(), |c| c.to_string());
        for c in chunks.iter().rev() {
            s += &format!("{c:09}");
        }
        s
    }
}

/// `v` as `m · 2^e` with `m` an integer below 2^53 (`v` finite and non-negative).
fn parts(v: f64) -> (u64, i32) {
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), exp - 1075)
    }
}

/// Whether the decimal `int.frac` (digits only) reads back as `a` (finite, non-negative) under
/// round-to-nearest, ties to even: whether it lies strictly between the midpoints to `a`'s
/// neighbours, or on one of them with `a`'s mantissa even. Exact, on big integers.
fn reads_back(int: &str, frac: &str, a: f64) -> bool {
    let mut n = Big(Vec::new());
    for b in int.bytes().chain(frac.bytes()) {
        n.mul_small(10);
        n.add_small(u32::from(b - b'0'));
    }
    let (m, e) = parts(a);
    // The midpoints below and above, as `x · 2^f`: below a power of two the gap under it is
    // half the gap over it.
    let lopsided = m == 1 << 52 && e > -1074;
    let above = (2 * m + 1, e - 1);
    // `n / 10^k` against `x · 2^f`: `n · 2^-f` against `x · 10^k` (or `n` against
    // `x · 10^k · 2^f`).
    let against = |(x, f): (u64, i32)| {
        let mut left = n.clone();
        let mut right = Big::from_u64(x);
        for _ in 0..frac.len() {
            right.mul_small(10);
        }
        if f < 0 {
            left.shl((-f) as u32);
        } else {
            right.shl(f as u32);
        }
        left.cmp(&right)
    };
    let even = m % 2 == 0;
    let high = against(above);
    use std::cmp::Ordering::{Equal, Greater, Less};
    if m == 0 {
        // Zero: up to half the least subnormal, that tie included (zero is even).
        return high != Greater;
    }
    let below = if lopsided {
        (4 * m - 1, e - 2)
    } else {
        (2 * m - 1, e - 1)
    };
    let low = against(below);
    (low == Greater || (low == Equal && even)) && (high == Less || (high == Equal && even))
}

/// The powers of ten an `f64` holds exactly.
const EXACT_TENS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The longest decimal [`parse`] reads: 1,100 digits (an `f64`'s exact decimal has at most
/// 767 significant digits, 1,074 decimals).
pub const MAX_PARSED_DIGITS: usize = 1100;

/// A plain decimal (digits with at most one point, a digit on at least one side of it; no
/// sign or exponent) as `str::parse::<f64>` reads it: `None` where std refuses it, and where
/// it would be infinite or longer than [`MAX_PARSED_DIGITS`]. Up to 2^53 in all digits and
/// 22 decimals it is one exact division, correctly rounded; beyond, an estimate within a few
/// units in the last place, then the neighbour the decimal reads back as, found by an exact
/// test (`reads_back`).
pub fn parse(text: &str) -> Option<f64> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return None;
    }
    if int.len() + frac.len() > MAX_PARSED_DIGITS {
        return None;
    }
    let (int, frac) = (int.trim_start_matches('0'), frac.trim_end_matches('0'));
    // The first 18 significant digits, and how many more were left out.
    let (mut w, mut dropped) = (0u64, 0i32);
    for b in int.bytes().chain(frac.bytes()) {
        if w < 100_000_000_000_000_000 {
            w = w * 10 + u64::from(b - b'0');
        } else {
            dropped += 1;
        }
    }
    if w == 0 {
        return Some(0.0);
    }
    let k = frac.len();
    if dropped == 0 && w <= 1 << 53 && k < EXACT_TENS.len() {
        return Some(w as f64 / EXACT_TENS[k]);
    }
    // `w · 10^(dropped − k)`, step by step (each step off by at most half a unit).
    let mut c = w as f64;
    let mut shift = dropped - k as i32;
    while shift > 0 {
        let s = shift.min(22);
        c *= EXACT_TENS[s as usize];
        shift -= s;
    }
    while shift < 0 {
        let s = (-shift).min(22);
        c /= EXACT_TENS[s as usize];
        shift += s;
    }
    // An estimate past the largest `f64` may be a decimal that still rounds down to it (std
    // reads it as `f64::MAX`): the search starts there, and finds nothing for one that
    // rounds to infinity.
    if !c.is_finite() {
        c = f64::MAX;
    }
    let (mut up, mut down) = (c, c);
    for _ in 0..64 {
        for v in [up, down] {
            if v >= 0.0 && v.is_finite() && reads_back(int, frac, v) {
                return Some(v);
            }
        }
        // The neighbours of non-negative values, by their bits (`next_up` is Rust 1.86).
        up = f64::from_bits(up.to_bits() + 1);
        if down > 0.0 {
            down = f64::from_bits(down.to_bits() - 1);
        }
    }
    None
}

/// How a value is rounded to an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    /// To the nearest, a tie to even.
    HalfEven,
    /// To the nearest, a tie up.
    HalfUp,
    /// Up.
    Up,
}

/// `v · 10^digits` rounded to an integer, for finite non-negative `v`.
fn scaled(v: f64, digits: u32, round: Round) -> Big {
    let (m, e) = parts(v);
    let mut n = Big::from_u64(m);
    for _ in 0..digits {
        n.mul_small(10);
    }
    if e >= 0 {
        n.shl(e as u32);
        n
    } else if round == Round::Up {
        n.shr_ceil((-e) as u32)
    } else {
        n.shr_round((-e) as u32, round == Round::HalfEven)
    }
}

/// `v / 10^k` rounded half up (or, `round` [`Round::Up`], up) to an integer, for finite
/// non-negative `v`.
fn rounded_to_tens(v: f64, k: u32, round: Round) -> Big {
    let mut n = scaled(v, 0, Round::HalfEven);
    if n.is_zero() {
        return n;
    }
    // Exact only when `v` is an integer (it is, wherever the shortest form drops digits
    // before the point: `v` ≥ 10^16 > 2^53).
    let (mut top, mut rest) = (0, false);
    for i in 0..k {
        let d = n.div_small(10);
        if i + 1 == k {
            top = d;
        } else {
            rest |= d != 0;
        }
    }
    let up = match round {
        Round::Up => top > 0 || rest,
        _ => top >= 5,
    };
    if up {
        n.add_small(1);
    }
    n
}

/// Inserts a point `digits` from the end of `int` (zero-padded).
fn with_point(int: &str, digits: usize) -> String {
    if digits == 0 {
        return int.to_owned();
    }
    let padded = if int.len() <= digits {
        format!("{}{int}", "0".repeat(digits + 1 - int.len()))
    } else {
        int.to_owned()
    };
    let (a, b) = padded.split_at(padded.len() - digits);
    format!("{a}.{b}")
}

fn special(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f64::INFINITY {
        Some("inf")
    } else if v == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

/// `format!("{v:.digits$}")`.
pub fn fixed(v: f64, digits: usize) -> String {
    if let Some(s) = special(v) {
        return s.into();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    format!("{sign}{}", unsigned(v.abs(), digits, Round::HalfEven))
}

/// `v` (finite, non-negative) with `digits` decimals, rounded as `round` says.
fn unsigned(v: f64, digits: usize, round: Round) -> String {
    with_point(&scaled(v, digits as u32, round).to_decimal(), digits)
}

/// `format!("{v}")`: the shortest decimal that reads back as `v`, never with an exponent.
pub fn shortest(v: f64) -> String {
    if let Some(s) = special(v) {
        return s.into();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let a = v.abs();
    if a == 0.0 {
        return format!("{sign}0");
    }
    // The fewest decimals (or, for large values, the most trailing zeros) at which `a`,
    // rounded (an exact tie up, as std's shortest form does), reads back as itself: the
    // shortest form, and the nearest to `a` of that length. At a power of two the gap to the
    // next value below is half the gap above, so a form of that length above `a` may read back
    // though the nearest one, below, does not: there the next one up is tried too. The decimal
    // exponent estimate may be off by one either way.
    let (m, e) = parts(a);
    let lopsided = m == 1 << 52 && e > -1074;
    let log10 = ((64 - m.leading_zeros()) as i32 - 1 + e) as f64 * std::f64::consts::LOG10_2;
    let point = log10.floor() as i32 + 1;
    let rounds: &[Round] = if lopsided {
        &[Round::HalfUp, Round::Up]
    } else {
        &[Round::HalfUp]
    };
    for keep in (-point - 1)..=1100 {
        for &round in rounds {
            let text = if keep >= 0 {
                unsigned(a, keep as usize, round)
            } else {
                let int = rounded_to_tens(a, (-keep) as u32, round).to_decimal();
                if int == "0" {
                    continue;
                }
                format!("{int}{}", "0".repeat((-keep) as usize))
            };
            let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
            if reads_back(int, frac, a) {
                return format!("{sign}{}", trim(&text));
            }
        }
    }
    format!("{sign}{}", trim(&unsigned(a, 1100, Round::HalfUp)))
}

/// `format!("{v:.digits$e}")`: `digits` decimals after the first significant digit and an
/// exponent (`1.235e10`, `5e-324`), rounded half to even on the exact binary value, as std does.
pub fn exponential(v: f64, digits: usize) -> String {
    if let Some(s) = special(v) {
        return s.into();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let a = v.abs();
    if a == 0.0 {
        let zeros = "0".repeat(digits);
        let point = if digits > 0 { "." } else { "" };
        return format!("{sign}0{point}{zeros}e0");
    }
    // The exact decimal expansion of `a`: `a · 10^frac` is an integer for `frac` = -e.
    let (_, e) = parts(a);
    let frac = (-e).max(0) as u32;
    let all = scaled(a, frac, Round::HalfEven).to_decimal().into_bytes();
    // The first `digits + 1` significant digits, rounded half to even on the rest.
    let mut kept: Vec<u8> = all.iter().take(digits + 1).map(|d| d - b'0').collect();
    let mut exp = all.len() as i32 - 1 - frac as i32;
    kept.resize(digits + 1, 0);
    let rest = all.get(digits + 1..).unwrap_or(&[]);
    let first = rest.first().map_or(0, |d| d - b'0');
    let beyond = rest.iter().skip(1).any(|&d| d != b'0');
    let odd = kept[digits] % 2 == 1;
    if first > 5 || (first == 5 && (beyond || odd)) {
        let mut i = digits;
        loop {
            if kept[i] < 9 {
                kept[i] += 1;
                break;
            }
            kept[i] = 0;
            if i == 0 {
                // 9.99… rounded up to 10.0…: one more power of ten.
                kept.insert(0, 1);
                kept.pop();
                exp += 1;
                break;
            }
            i -= 1;
        }
    }
    let text: String = kept.iter().map(|&d| char::from(b'0' + d)).collect();
    let (lead, tail) = text.split_at(1);
    let point = if digits > 0 { "." } else { "" };
    format!("{sign}{lead}{point}{tail}e{exp}")
}

/// `format!("{v:+.digits$}")`: [`fixed`] with a `+` before a value that is not negative.
pub fn fixed_signed(v: f64, digits: usize) -> String {
    plus(v, fixed(v, digits))
}

/// `format!("{v:+}")`: [`shortest`] with a `+` before a value that is not negative.
pub fn shortest_signed(v: f64) -> String {
    plus(v, shortest(v))
}

/// A `+` before `text` unless `v` is negative (`-0.0` included) or NaN, as std writes `{:+}`.
fn plus(v: f64, text: String) -> String {
    if v.is_sign_negative() || v.is_nan() {
        text
    } else {
        format!("+{text}")
    }
}

/// Drops a fraction's trailing zeros (and a bare point).
fn trim(text: &str) -> String {
    // (A byte search: `str::contains` brought the substring searcher into the page's wasm.)
    if !text.bytes().any(|b| b == b'.') {
        return text.to_owned();
    }
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::{
        exponential, fixed, fixed_signed, parse, shortest, shortest_signed, MAX_PARSED_DIGITS,
    };
    use proptest::prelude::*;

    #[test]
    fn parse_reads_as_std_on_chosen_decimals() {
        for text in [
            "0", "0.0", "00.000", ".5", "5.", "0.8", "80", "100", "0.1", "0.3", "2.5",
            "0.30000000000000004", "0.1000000000000000055511151231257827",
            "9007199254740993", "9007199254740992", "9007199254740994", "9007199254740995",
            "123456789012345678901234567890",
            "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792", // 2^1024 − 2^970: a tie, to inf
            "0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000004940656458412465441765687928682213723651",
            "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000002470328229206232720882",
        ] {
            assert_eq!(parse(text), text.parse::<f64>().ok().filter(|v| v.is_finite()), "{text}");
        }
        // Not plain decimals (std reads some), or too long.
        for text in [
            "",
            ".",
            "1.2.3",
            "-1",
            "+1",
            "1e5",
            "1.7976931348623157e308",
            "inf",
            "NaN",
            " 1",
            "1_0",
            "0x10",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
        assert_eq!(parse(&"1".repeat(MAX_PARSED_DIGITS + 1)), None);
        // The largest `f64`'s shortest and exact decimals, one below the tie above it (std
        // rounds it down), and one far past it.
        let max = f64::MAX;
        for text in [
            shortest(max),
            fixed(max, 0),
            "1".repeat(309),
            "9".repeat(309),
        ] {
            assert_eq!(parse(&text), as_std(&text), "{text}");
        }
        let tie = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
        let below = format!("{}1", &tie[..tie.len() - 1]);
        assert_eq!(parse(&below), Some(f64::MAX), "just under the tie");
        assert_eq!(parse(&format!("{below}.9")), Some(f64::MAX));
        assert_eq!(
            parse(&format!("0.{}1", "0".repeat(MAX_PARSED_DIGITS - 2))),
            Some(0.0)
        );
    }

    /// `parse` against std: the same `f64` for a plain decimal up to [`MAX_PARSED_DIGITS`]
    /// digits, `None` beyond.
    fn as_std(text: &str) -> Option<f64> {
        if text.len() - usize::from(text.contains('.')) > MAX_PARSED_DIGITS {
            None
        } else {
            text.parse::<f64>().ok().filter(|v| v.is_finite())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// Every `f64`'s shortest and exact decimals, and both with digits added or cut.
        #[test]
        fn parse_reads_as_std_on_random_values(bits in 0u64..0x7ff0_0000_0000_0000, cut in 0usize..30, extra in "[0-9]{0,30}") {
            let v = f64::from_bits(bits);
            let short = shortest(v);
            let exact = fixed(v, 1074);
            for text in [short.clone(), exact.clone(), format!("{short}{extra}"), exact[..exact.len().saturating_sub(cut).max(1)].to_owned()] {
                let text = if text.contains('.') || extra.is_empty() { text } else { format!("{text}.{extra}") };
                prop_assert_eq!(parse(&text), as_std(&text), "{}", text);
            }
        }

        /// Decimals of page-sized values: up to 20 digits before and 25 after the point.
        #[test]
        fn parse_reads_as_std_on_random_decimals(int in "[0-9]{0,20}", frac in "[0-9]{0,25}", point in any::<bool>()) {
            let text = if point { format!("{int}.{frac}") } else { format!("{int}{frac}") };
            prop_assert_eq!(parse(&text), as_std(&text), "{}", text);
        }
    }

    #[test]
    fn fixed_matches_std_on_chosen_values() {
        for v in [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.25,
            0.35,
            1e-7,
            123.456,
            1e21,
            9.995,
            0.045,
            9.5,
            99.5,
            125.0,
            1e10,
            12_345_678_901.0,
            1.0 / 3.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            4503599627370496.5,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
        ] {
            for d in 0..=20 {
                assert_eq!(fixed(v, d), format!("{v:.d$}"), "{v:e} at {d}");
                assert_eq!(fixed_signed(v, d), format!("{v:+.d$}"), "{v:e} at {d}");
                assert_eq!(exponential(v, d), format!("{v:.d$e}"), "{v:e} at {d}");
            }
        }
    }

    #[test]
    fn shortest_matches_std_on_chosen_values() {
        for v in [
            0.0,
            -0.0,
            0.1,
            0.2,
            0.3,
            1.0 / 3.0,
            123.456,
            1e21,
            1e22,
            1e-7,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            2f64.powi(60),
            2f64.powi(-60),
            100.0,
            0.30000000000000004,
            f64::NAN,
            f64::INFINITY,
        ] {
            assert_eq!(shortest(v), format!("{v}"), "{v:e}");
            assert_eq!(shortest_signed(v), format!("{v:+}"), "{v:e}");
            assert_eq!(shortest_signed(-v), format!("{:+}", -v), "{v:e}");
        }
    }

    /// Every power of two, where the gap below a value is half the gap above it (a shortest
    /// form may then lie above the value though a nearer one of its length lies below), and
    /// its neighbours.
    #[test]
    fn shortest_matches_std_at_every_power_of_two() {
        for e in -1074..=1023 {
            let bits: u64 = if e >= -1022 {
                ((e + 1023) as u64) << 52
            } else {
                1 << (e + 1074)
            };
            for v in [bits, bits + 1, bits - 1].map(f64::from_bits) {
                assert_eq!(shortest(v), format!("{v}"), "{v:e}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn fixed_matches_std(bits in any::<u64>(), d in 0usize..=12) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(fixed(v, d), format!("{v:.d$}"));
        }

        #[test]
        fn fixed_matches_std_on_page_sized_values(v in -1e7f64..1e7, d in 0usize..=6) {
            prop_assert_eq!(fixed(v, d), format!("{v:.d$}"));
        }

        #[test]
        fn shortest_matches_std(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(shortest(v), format!("{v}"));
        }

        #[test]
        fn exponential_matches_std(bits in any::<u64>(), d in 0usize..=17) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(exponential(v, d), format!("{v:.d$e}"));
        }

        #[test]
        fn exponential_matches_std_on_page_sized_values(v in -1e12f64..1e12, d in 0usize..=6) {
            prop_assert_eq!(exponential(v, d), format!("{v:.d$e}"));
        }

        #[test]
        fn signed_forms_match_std(bits in any::<u64>(), d in 0usize..=6) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(fixed_signed(v, d), format!("{v:+.d$}"));
            prop_assert_eq!(shortest_signed(v), format!("{v:+}"));
        }

        #[test]
        fn shortest_matches_std_on_page_sized_values(v in -1e7f64..1e7) {
            prop_assert_eq!(shortest(v), format!("{v}"));
        }
    }
}
