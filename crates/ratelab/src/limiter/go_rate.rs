//! Go's `golang.org/x/time/rate` Limiter, `rate.NewLimiter(r, b)`, deciding `Allow()`: a
//! token bucket with `float64` tokens on a nanosecond clock, read from golang.org/x/time
//! v0.3.0 as Debian ships it (`docs/research/go-cell/FINDINGS.md`), its arithmetic kept
//! step for step:
//!
//! ```text
//! advance(t): elapsed = max(t - last, 0) ns; tokens = min(tokens + secs(elapsed) * r, b)
//! allow(t):   tok = advance(t) - 1
//!             wait = tok < 0 ? trunc(1e9 * ((-tok) / r)) ns : 0
//!             admit iff 1 <= b and wait <= 0; then last = t, tokens = tok
//! ```
//!
//! `secs(d)` is Go's `Duration.Seconds()`: whole seconds plus the rest over 1e9. A refused
//! request changes nothing. The bucket starts full (Go's first call sees centuries since its
//! zero time, which fills any bucket whose rate is not below `b` in 292 years).

use super::decide::{admitted_at, Decide, Decision, Rate, State};
use crate::time::Micros;

/// See the module's documentation.
#[derive(Debug, Clone)]
pub struct GoRate {
    /// Events per second (`rate.Limit`), above 0.
    pub(super) rate: f64,
    /// The burst `b`, at least 1.
    pub(super) burst: u64,
    /// Tokens after the last admission, as Go keeps them (negative by less than a
    /// nanosecond's refill at most).
    pub(super) tokens: f64,
    /// The last admission's time, ns.
    pub(super) last: i64,
}

/// Go's `Duration.Seconds()` of `d` ns.
#[inline]
fn seconds(d: i64) -> f64 {
    let (s, ns) = (d / 1_000_000_000, d % 1_000_000_000);
    s as f64 + ns as f64 / 1e9
}

impl GoRate {
    /// `rate.NewLimiter(r, b)` for a rate kept as ratelab keeps rates: `count` per `per` µs
    /// is `rate.Every(per)` when `count` is 1 (`1 / per.Seconds()`, as Go computes it) and
    /// the decimal `count / (per / 1e6)` otherwise (how `r=2.5` is kept: 25 per 10 s), each
    /// the `float64` Go would hold.
    pub fn from_rate(rate: Rate, burst: u64) -> Self {
        let r = if rate.count == 1 {
            1.0 / seconds(Self::ns(rate.per))
        } else {
            rate.count as f64 / (rate.per as f64 / 1e6)
        };
        Self::new(r, burst)
    }

    /// `rate.NewLimiter(rate, burst)`, full.
    pub fn new(rate: f64, burst: u64) -> Self {
        GoRate {
            rate,
            burst,
            tokens: burst as f64,
            last: 0,
        }
    }

    /// `t` µs as Go's nanoseconds.
    #[inline]
    fn ns(t: Micros) -> i64 {
        i64::try_from(t.saturating_mul(1000)).unwrap_or(i64::MAX)
    }

    /// The tokens at `t` ns, as `advance` gives them.
    #[inline]
    fn advance(&self, t: i64) -> f64 {
        let elapsed = t.saturating_sub(self.last).max(0);
        let tokens = self.tokens + seconds(elapsed) * self.rate;
        tokens.min(self.burst as f64)
    }

    /// Whether a request at `t` ns would be admitted, and the tokens it would leave.
    #[inline]
    fn allow(&self, t: i64) -> (bool, f64) {
        let tok = self.advance(t) - 1.0;
        let wait = if tok < 0.0 {
            // Go converts with truncation toward zero; a wait past i64 cannot be admitted.
            let w = 1e9 * (-tok / self.rate);
            if w >= 9.2e18 {
                i64::MAX
            } else {
                w as i64
            }
        } else {
            0
        };
        (self.burst >= 1 && wait <= 0, tok)
    }

    /// What the limiter holds at `now`.
    pub fn state(&self, now: Micros) -> State {
        State::Tokens {
            tokens: self.advance(Self::ns(now)).max(0.0),
            capacity: self.burst,
        }
    }

    /// The earliest time from `t` at which a request would be admitted if nothing else
    /// arrived: searched over µs from where the exact refill would come (the float
    /// arithmetic can move it by a few ns).
    pub fn retry_after(&self, t: Micros) -> Micros {
        if self.allow(Self::ns(t)).0 {
            return t;
        }
        if self.burst == 0 {
            return Micros::MAX;
        }
        let short = 1.0 - self.advance(Self::ns(t));
        let guess = t.saturating_add((short / self.rate * 1e6).max(0.0) as Micros);
        let mut at = guess.saturating_sub(2).max(t);
        while !self.allow(Self::ns(at)).0 && at < guess.saturating_add(1_000_000) {
            at += 1;
        }
        at
    }

    /// The `Retry-After` a server built on it sends (the reservation's delay rounded up to
    /// whole seconds, as echo's middleware does), in µs from `t`.
    pub fn header(&self, t: Micros) -> Micros {
        let wait = self.retry_after(t) - t;
        wait.div_ceil(1_000_000) * 1_000_000
    }

    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(super) fn peek(&self, t: Micros) -> bool {
        self.allow(Self::ns(t)).0
    }

    /// Records an admission made elsewhere: its token taken, into debt if need be.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(super) fn force(&mut self, t: Micros) {
        let t = Self::ns(t);
        let tokens = self.advance(t) - 1.0;
        self.last = t.max(self.last);
        self.tokens = tokens;
    }
}

impl Decide for GoRate {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        let t = Self::ns(t);
        let (ok, tok) = self.allow(t);
        if ok {
            self.last = t;
            self.tokens = tok;
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    #[test]
    fn a_full_bucket_passes_its_burst_then_one_per_refill() {
        // rate.NewLimiter(10, 5): five at once, then one every 100 ms.
        let mut l = GoRate::new(10.0, 5);
        assert!((0..5).all(|_| l.admit(0)));
        assert!(!l.admit(0) && !l.admit(99_999));
        assert_eq!(l.retry_after(50_000), 100_000);
        assert!(l.admit(100_000));
        assert!(!l.admit(150_000));
        assert_eq!(
            l.header(150_000),
            SECOND,
            "50 ms to wait, rounded up to a second"
        );
    }

    /// Go's own decisions, from the driver in `docs/research/go-cell/driver` (golang.org/x/time
    /// v0.3.0, `AllowN(t, 1)` at nanosecond times), and the tokens it left, bit for bit.
    #[test]
    // (The tokens are as Go printed them, every digit kept.)
    #[allow(clippy::excessive_precision)]
    fn it_decides_as_go_does_to_the_nanosecond() {
        let check = |mut l: GoRate, calls: &[(f64, bool)], tokens: &[(usize, f64)]| {
            for (i, &(t, want)) in calls.iter().enumerate() {
                let ns = (t * 1e9).round() as i64;
                let (ok, tok) = l.allow(ns);
                assert_eq!(ok, want, "call {i} at {t} s");
                if ok {
                    l.last = ns;
                    l.tokens = tok;
                }
                if let Some(&(_, after)) = tokens.iter().find(|&&(k, _)| k == i) {
                    assert_eq!(
                        l.advance(ns).to_bits(),
                        after.to_bits(),
                        "tokens after call {i}"
                    );
                }
            }
        };
        let (t, f) = (true, false);
        check(
            GoRate::from_rate(
                Rate {
                    count: 1,
                    per: SECOND,
                },
                3,
            ),
            &[
                (0.0, t),
                (0.0, t),
                (0.0, t),
                (0.0, f),
                (0.5, f),
                (0.999_999_999, t),
                (1.0, f),
                (1.0, f),
                (1.5, f),
                (2.0, t),
                (2.25, f),
                (3.0, t),
                (3.0, f),
                (10.0, t),
                (10.0, t),
                (10.0, t),
                (10.0, f),
                (10.0, f),
            ],
            &[
                (5, -9.999_999_717_180_685e-10),
                (6, 2.828_193_152_570_687_2e-17),
            ],
        );
        check(
            GoRate::from_rate(
                Rate {
                    count: 2,
                    per: SECOND,
                },
                1,
            ),
            &[
                (0.0, t),
                (0.000_000_001, f),
                (0.499_999_999, f),
                (0.5, t),
                (0.75, f),
                (1.0, t),
                (1.2, f),
                (1.5, t),
            ],
            &[(2, 0.999_999_997_999_999_95)],
        );
        check(
            GoRate::from_rate(
                Rate {
                    count: 3,
                    per: SECOND,
                },
                1,
            ),
            &[
                (0.0, t),
                (0.333_333_332, f),
                (0.333_333_333, t),
                (0.333_333_334, f),
            ],
            &[(2, -9.999_999_717_180_685e-10)],
        );
    }

    #[test]
    fn burst_zero_refuses_everything() {
        let mut l = GoRate::new(10.0, 0);
        assert!(!l.admit(0) && !l.admit(10 * SECOND));
    }
}
