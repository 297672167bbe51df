//! nginx's `limit_req` in nginx's own arithmetic (`ngx_http_limit_req_module.c`, nginx 1.22):
//! the excess in thousandths of a request, a millisecond clock, the rate stored as
//! `r × 1000 / scale` in integers, and the three ways an admitted request leaves (`nodelay`,
//! the default queue, and `delay=N`).
//!
//! [`super::LeakyBucket`] is the same algorithm in exact rational arithmetic. The two agree
//! decision for decision when every time is a whole millisecond and the rate is a whole number
//! of thousandths a second that leaks whole thousandths each millisecond (`r/s` rates); they
//! part where nginx rounds: `rate=1r/m` is stored as 16 thousandths a second, one request per
//! 62.5 s rather than 60 s, and `7r/m` as 116, one per 8.621 s rather than 8.571 s.

use super::decide::{Decide, Decision, Rate, State};
use crate::time::{Micros, SECOND};

/// nginx's `delay=` for `nodelay`: no admitted request ever waits.
const NODELAY: u64 = u64::MAX;

/// One `limit_req` zone entry (one key), as nginx keeps it.
#[derive(Debug, Clone)]
pub struct Nginx {
    /// nginx's `lr->excess`: thousandths of a request above the rate.
    excess: u64,
    /// nginx's `lr->last`, in ms: when the excess was last updated; `None` for a key nginx
    /// has not seen (its first request is admitted with an excess of zero).
    last: Option<u64>,
    /// nginx's `ctx->rate`: thousandths of a request a second, `r × 1000 / scale` rounded down.
    rate: u64,
    /// `burst × 1000`.
    burst: u64,
    /// `delay × 1000`; [`NODELAY`] for `nodelay`.
    delay: u64,
}

impl Nginx {
    /// `limit_req` with `rate=` (`count` per `per`, where `per` is a second or a minute),
    /// `burst=`, and `delay=` (`None` for `nodelay`; `Some(0)` is nginx's default, every
    /// excess request waits).
    pub fn new(rate: Rate, burst: u64, delay: Option<u64>) -> Self {
        Nginx {
            excess: 0,
            last: None,
            rate: thousandths_per_second(rate),
            burst: burst.saturating_mul(1000),
            delay: delay.map_or(NODELAY, |d| d.saturating_mul(1000)),
        }
    }

    /// Whether any admitted request can wait: nginx delays those whose excess is above
    /// `delay`, and admits none above `burst`.
    pub fn delays(&self) -> bool {
        self.delay < self.burst
    }

    /// The excess at `now`, leaked in nginx's arithmetic from its last update (what the next
    /// request would find before adding its own thousand), in requests, against the burst.
    pub fn state(&self, now: Micros) -> State {
        let excess = match self.last {
            None => 0,
            Some(last) => self
                .excess
                .saturating_sub(self.leaked((now / 1000).saturating_sub(last))),
        };
        State::Excess {
            excess: excess as f64 / 1000.0,
            burst: self.burst / 1000,
        }
    }

    /// An admission made elsewhere, recorded as nginx records one it admits (excess above the
    /// burst included).
    #[cfg(feature = "fleet")]
    pub(super) fn force_at(&mut self, t: Micros) {
        let now = t / 1000;
        self.excess = match self.last {
            None => 0,
            Some(last) => (self.excess + 1000).saturating_sub(self.leaked(now - last)),
        };
        self.last = Some(now);
    }

    /// The excess, `last` (ms), the rate and the burst (both in thousandths), once the key
    /// has been seen.
    pub(super) fn parts(&self) -> Option<(u64, u64, u64, u64)> {
        self.last
            .map(|last| (self.excess, last, self.rate, self.burst))
    }

    /// `ctx->rate * ms / 1000`: thousandths leaked over `ms` milliseconds, rounded down
    /// (everything, if the product does not fit: the excess is then long gone).
    #[inline]
    fn leaked(&self, ms: u64) -> u64 {
        self.rate.checked_mul(ms).map_or(u64::MAX, |p| p / 1000)
    }
}

/// `ctx->rate = rate * 1000 / scale`, scale 1 for `r/s` and 60 for `r/m`.
pub fn thousandths_per_second(rate: Rate) -> u64 {
    let scale = (rate.per / SECOND).max(1);
    rate.count.saturating_mul(1000) / scale
}

impl Decide for Nginx {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        // `ngx_current_msec`; the model's clock starts at zero.
        let now = t / 1000;
        let excess = match self.last {
            // A new key: admitted, with an excess of zero and `last = now`.
            None => {
                self.last = Some(now);
                self.excess = 0;
                return Decision::Admit { at: t };
            }
            // `excess = lr->excess - ctx->rate * ms / 1000 + 1000`, at least zero.
            Some(last) => (self.excess + 1000).saturating_sub(self.leaked(now - last)),
        };
        if excess > self.burst {
            // NGX_BUSY: rejected, the entry left as it was.
            return Decision::Reject;
        }
        self.excess = excess;
        // `if (ms) lr->last = now;`: the same thing, since time never goes back here.
        self.last = Some(now);
        if excess <= self.delay {
            return Decision::Admit { at: t };
        }
        // `(excess - delay) * 1000 / ctx->rate` ms on a timer set from `ngx_current_msec`.
        let wait = (excess - self.delay).saturating_mul(1000) / self.rate.max(1);
        Decision::Admit {
            at: (now.saturating_add(wait)).saturating_mul(1000).max(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{LeakyBucket, LeakyMode};
    use proptest::prelude::*;

    fn per(count: u64, unit: Micros) -> Rate {
        Rate { count, per: unit }
    }

    /// The admitted requests' times of a flood of one request every `every` µs for `span`.
    fn admitted(l: &mut Nginx, every: Micros, span: Micros) -> Vec<Micros> {
        (0..span / every)
            .map(|i| i * every)
            .filter(|&t| l.decide(t).admitted())
            .collect()
    }

    fn gaps(times: &[Micros]) -> Vec<Micros> {
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }

    proptest! {
        #[test]
        fn where_nginx_rounds_nothing_it_is_the_leaky_bucket(
            ms_gaps in proptest::collection::vec(0u64..400, 1..300),
            count in 1u64..120,
            per_minute in any::<bool>(),
            burst in 0u64..12,
            how in 0u8..3,
        ) {
            // `r/s` rates, and `r/m` rates that are whole requests a second, leak whole
            // thousandths every millisecond; at whole-millisecond times nginx's arithmetic is
            // then exact.
            let rate = if per_minute { per(60 * count, 60 * SECOND) } else { per(count, SECOND) };
            let (delay, mode) = match how {
                0 => (None, LeakyMode::Meter),
                _ => (Some(0), LeakyMode::Queue),
            };
            let mut nginx = Nginx::new(rate, burst, delay);
            let mut ideal = LeakyBucket::new(burst, rate, mode);
            let mut t = 0;
            for g in ms_gaps {
                t += g * 1000;
                let (a, b) = (nginx.decide(t), ideal.decide(t));
                prop_assert_eq!(a.admitted(), b.admitted(), "at {} ms", t / 1000);
                if let (Decision::Admit { at: x }, Decision::Admit { at: y }) = (a, b) {
                    // nginx's timer counts whole milliseconds down from its clock.
                    prop_assert_eq!(x, y / 1000 * 1000, "at {} ms", t / 1000);
                }
            }
        }
    }

    #[test]
    fn one_request_a_minute_is_one_per_62_5_seconds() {
        // `rate=1r/m` is stored as 1000 / 60 = 16 thousandths a second: a request leaks away
        // in 62.5 s.
        let mut l = Nginx::new(per(1, 60 * SECOND), 0, None);
        let times = admitted(&mut l, 100 * 1000, 10 * 60 * SECOND);
        assert_eq!(times.len(), 10, "{times:?}");
        assert!(gaps(&times).iter().all(|&g| g == 62_500_000), "{times:?}");
        // `7r/m` is 116 a second: 8,621 ms per request, where the exact rate takes 8,571.4.
        let mut l = Nginx::new(per(7, 60 * SECOND), 0, None);
        let times = admitted(&mut l, 1000, 60 * SECOND);
        assert!(gaps(&times).iter().all(|&g| g == 8_621_000), "{times:?}");
        let mut exact = LeakyBucket::new(0, per(7, 60 * SECOND), LeakyMode::Meter);
        let ideal: Vec<Micros> = (0..60_000)
            .map(|i| i * 1000)
            .filter(|&t| exact.admit(t))
            .collect();
        assert!(gaps(&ideal).iter().all(|&g| g == 8_572_000), "{ideal:?}");
    }

    #[test]
    fn delay_lets_the_first_excess_through_at_once_and_delays_the_rest() {
        // burst=10 delay=3 at 10r/s: a burst of 20 at one instant. The first request finds an
        // empty entry, the next three an excess of 1 to 3 (at most `delay`): four at once.
        // Seven more fit in the burst and wait (excess − 3) / 10 s each; nine are rejected.
        let mut l = Nginx::new(per(10, SECOND), 10, Some(3));
        let t = 5_000_123;
        let d: Vec<Decision> = (0..20).map(|_| l.decide(t)).collect();
        let at_once = d
            .iter()
            .filter(|x| **x == Decision::Admit { at: t })
            .count();
        let waits: Vec<Micros> = d
            .iter()
            .filter_map(|x| match x {
                Decision::Admit { at } if *at > t => Some(at - 5_000_000),
                _ => None,
            })
            .collect();
        assert_eq!(at_once, 4);
        assert_eq!(waits, (1..=7).map(|k| k * 100_000).collect::<Vec<_>>());
        assert_eq!(d.iter().filter(|x| !x.admitted()).count(), 9);
        // `delay=0` (nginx's default) makes every excess request wait; `nodelay` none.
        let mut queue = Nginx::new(per(10, SECOND), 10, Some(0));
        let mut meter = Nginx::new(per(10, SECOND), 10, None);
        let q: Vec<Decision> = (0..12).map(|_| queue.decide(0)).collect();
        let m: Vec<Decision> = (0..12).map(|_| meter.decide(0)).collect();
        assert_eq!(
            q.iter()
                .filter(|x| **x == Decision::Admit { at: 0 })
                .count(),
            1
        );
        assert_eq!(
            m.iter()
                .filter(|x| **x == Decision::Admit { at: 0 })
                .count(),
            11
        );
        assert_eq!(q.iter().filter(|x| x.admitted()).count(), 11);
        assert!(queue.delays() && !meter.delays());
        assert!(!Nginx::new(per(10, SECOND), 3, Some(3)).delays());
    }

    #[test]
    fn the_clock_is_whole_milliseconds_and_a_reject_changes_nothing() {
        // 20r/s, no burst: 50 ms a request. 49.999 ms after a request at 0.999 ms is ms 50
        // by nginx's clock, a whole request leaked: admitted, where the exact bucket rejects.
        let mut l = Nginx::new(per(20, SECOND), 0, None);
        let mut exact = LeakyBucket::new(0, per(20, SECOND), LeakyMode::Meter);
        assert!(l.admit(999) && exact.admit(999));
        assert!(l.admit(50_998) && !exact.admit(50_998));
        // At ms 49 it is not.
        let mut l = Nginx::new(per(20, SECOND), 0, None);
        assert!(l.admit(0));
        assert!(!l.admit(49_999));
        // The rejected request did not move `last`: 50 ms after the admission passes.
        assert!(l.admit(50_000));
        assert_eq!(
            l.state(50_000),
            State::Excess {
                excess: 0.0,
                burst: 0
            }
        );
    }
}
