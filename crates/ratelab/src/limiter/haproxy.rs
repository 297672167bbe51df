//! HAProxy's stick-table request rate (`http_req_rate(period)`, read by `sc_http_req_rate`),
//! in HAProxy's own arithmetic (`freq_ctr.c` and `freq_ctr.h`, HAProxy 2.6): a
//! sliding-window counter on a millisecond clock whose periods start at the key's first
//! request rather than on the calendar.
//!
//! The estimate is Cloudflare's (this period's count plus the previous period's, weighted by
//! the part of the previous period still inside the trailing period), with these
//! differences from [`super::SlidingWindowCounter`]:
//! - periods are counted from the key's first request (`curr_tick = now`), then follow each
//!   other every `period` ms; after two periods or more without a request the next request
//!   starts them again from itself;
//! - the tick is kept even (its lowest bit is a lock), so a period starts up to 1 ms early,
//!   and with an odd period each rotation comes 1 ms earlier than the last;
//! - the clock is HAProxy's millisecond clock;
//! - the common recipe (`track-sc0` then `deny if { sc_http_req_rate(0) gt N }`) counts every
//!   request it tracks, denied ones included: `record-rejects=true`, the default here. The
//!   recipe that reads before it tracks (`deny if { ...,table_http_req_rate(t) ge N }`, then
//!   `track-sc0`) counts only what it lets through, and HAProxy then reads a previous period
//!   of at most one request, with nothing in this one, as that whole request
//!   (`read_freq_ctr_period`'s correction for low rates).
//!
//! The read is `(past × remain + curr × period) / period`, rounded down; since the limit and
//! the counts are whole numbers, the rounding never changes a decision.

use super::decide::{Decide, Decision, State};
use crate::time::Micros;

/// One stick-table entry's `http_req_rate` counter, and the rule that denies above `limit`.
#[derive(Debug, Clone)]
pub struct Haproxy {
    /// `N` of `gt N` (counted including the request) or `ge N` (counted before it).
    limit: u64,
    /// The period, in ms.
    period: u64,
    /// `curr_tick`, in ms; `None` for a key HAProxy has not seen.
    tick: Option<u64>,
    /// `prev_ctr`.
    prev: u64,
    /// `curr_ctr`.
    curr: u64,
    record_rejects: bool,
}

impl Haproxy {
    /// Denies above `limit` requests per `period` (µs, a whole number of milliseconds, at
    /// least 2); `record_rejects`: whether denied requests are counted (the common recipe).
    pub fn new(limit: u64, period: Micros, record_rejects: bool) -> Self {
        Haproxy {
            limit,
            period: (period / 1000).max(2),
            tick: None,
            prev: 0,
            curr: 0,
            record_rejects,
        }
    }

    /// `update_freq_ctr_period`'s rotation at `now` (ms), before it counts.
    #[inline]
    fn rotate(&mut self, now: u64) {
        match self.tick {
            Some(tick) if now - tick < self.period => {}
            Some(tick) if now - (tick + self.period) < self.period => {
                self.prev = self.curr;
                self.curr = 0;
                self.tick = Some((tick + self.period) & !1);
            }
            // A new key, or two periods or more missed.
            _ => {
                self.prev = 0;
                self.curr = 0;
                self.tick = Some(now & !1);
            }
        }
    }

    /// `freq_ctr_total` at `now` (ms): the period times the estimate, the periods moved on
    /// if `now` is past this one. With `correct`, `read_freq_ctr_period`'s correction for low
    /// rates: nothing in this period and at most one in the last reads as `past × period`.
    #[inline]
    fn total(&self, now: u64, correct: bool) -> u128 {
        let Some(tick) = self.tick else { return 0 };
        let p = self.period;
        let (mut past, mut curr) = (self.prev, self.curr);
        // `remain = tick + period - now`, moved on a period if this one is over.
        // (`remain < 0`: a period that ends exactly now is still this one.)
        let remain = if now <= tick + p {
            tick + p - now
        } else if now <= tick + 2 * p {
            past = curr;
            curr = 0;
            tick + 2 * p - now
        } else {
            past = 0;
            curr = 0;
            0
        };
        if correct && curr == 0 && past <= 1 {
            return u128::from(past) * u128::from(p);
        }
        u128::from(past) * u128::from(remain) + u128::from(curr) * u128::from(p)
    }

    /// An admission made elsewhere, counted as a tracked request.
    #[cfg(feature = "fleet")]
    pub(super) fn force_at(&mut self, t: Micros) {
        self.rotate(t / 1000);
        self.curr += 1;
    }

    /// Both periods' counts at `now` and the estimate, read without counting a request.
    pub fn state(&self, now: Micros) -> State {
        let now = now / 1000;
        let total = self.total(now, false);
        let (previous, current) = match self.tick {
            Some(tick) if now <= tick + self.period => (self.prev, self.curr),
            Some(tick) if now <= tick + 2 * self.period => (self.curr, 0),
            _ => (0, 0),
        };
        State::Estimate {
            current,
            previous,
            estimate: total as f64 / self.period as f64,
            limit: self.limit,
        }
    }
}

impl Decide for Haproxy {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        let now = t / 1000;
        let p = u128::from(self.period);
        let ok = if self.record_rejects {
            // track-sc0 counts it, then `sc_http_req_rate(0) gt N` reads the rate with it.
            self.rotate(now);
            self.curr += 1;
            self.total(now, true) / p <= u128::from(self.limit)
        } else {
            // `table_http_req_rate ge N` reads it first; track-sc0 counts only what passes.
            let ok = self.total(now, true) / p < u128::from(self.limit);
            if ok {
                self.rotate(now);
                self.curr += 1;
            }
            ok
        };
        if ok {
            Decision::Admit { at: t }
        } else {
            Decision::Reject
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::SlidingWindowCounter;
    use crate::time::SECOND;
    use proptest::prelude::*;

    fn admitted(l: &mut Haproxy, times: impl Iterator<Item = Micros>) -> usize {
        times.filter(|&t| l.decide(t).admitted()).count()
    }

    proptest! {
        #[test]
        fn with_periods_on_the_calendar_it_is_the_sliding_window_counter(
            ms_gaps in proptest::collection::vec(0u64..999, 1..400),
            limit in 2u64..12,
            record_rejects in any::<bool>(),
        ) {
            // A first request at 0 starts HAProxy's periods on the calendar's boundaries
            // (1,000 ms is even), and gaps under a period never restart them; at whole
            // milliseconds the two are then the same estimator. (Limits of 2 or more: the
            // low-rate correction changes nothing there.)
            let mut h = Haproxy::new(limit, SECOND, record_rejects);
            let mut c = SlidingWindowCounter::new(limit, SECOND, record_rejects);
            let mut t = 0;
            for (i, g) in std::iter::once(0).chain(ms_gaps).enumerate() {
                t += g * 1000;
                prop_assert_eq!(h.admit(t), c.admit(t), "request {} at {} ms", i, t / 1000);
            }
        }
    }

    #[test]
    fn periods_start_at_the_first_request() {
        // 2 per second, both at 0.7 s. At 1.2 s the calendar counter is in a new window
        // (the last one weighted 0.8: 1.6 < 2); HAProxy's period runs from 0.7 s to 1.7 s.
        let mut h = Haproxy::new(2, SECOND, false);
        let mut c = SlidingWindowCounter::new(2, SECOND, false);
        for t in [700_000, 700_000] {
            assert!(h.admit(t) && c.admit(t));
        }
        assert!(!h.admit(1_200_000));
        assert!(c.admit(1_200_000));
        // From 1.7 s on the last period (2) is weighted by what of it is still inside.
        assert!(h.admit(2_300_000)); // 2 · 0.4 + 0 < 2
    }

    #[test]
    fn the_common_recipe_counts_what_it_denies() {
        // Measured against HAProxy 2.6 with `ratelab probe` (shared notes): 20 a second for
        // 30 s against `gt 20` per 10 s was admitted 20 times, where a counter of admissions
        // alone lets 60 through.
        let flood = || (0..600u64).map(|i| i * 50_000);
        let mut recorded = Haproxy::new(20, 10 * SECOND, true);
        assert_eq!(admitted(&mut recorded, flood()), 20);
        let mut not = Haproxy::new(20, 10 * SECOND, false);
        assert_eq!(admitted(&mut not, flood()), 60);
    }

    #[test]
    fn one_a_period_without_records_is_one_every_two_periods() {
        // `read_freq_ctr_period` reads a previous period of one request, with nothing in this
        // one, as that whole request: with a limit of 1 a steady client gets one request
        // through every other period.
        let mut h = Haproxy::new(1, SECOND, false);
        let every_100ms = (0..100u64).map(|i| i * 100_000);
        assert_eq!(admitted(&mut h, every_100ms), 5);
        // The tick is kept even: a key first seen at 3 ms has periods from 2 ms.
        let mut h = Haproxy::new(1, SECOND, true);
        assert!(h.admit(3_000));
        assert_eq!(
            h.state(1_001_999),
            State::Estimate {
                current: 1,
                previous: 0,
                estimate: 1.0,
                limit: 1
            }
        );
        let State::Estimate {
            previous, current, ..
        } = h.state(1_002_001)
        else {
            unreachable!("haproxy's state is an estimate")
        };
        assert_eq!(
            (previous, current),
            (0, 1),
            "ms 1002 ends the period: remain 0"
        );
        let State::Estimate {
            previous, current, ..
        } = h.state(1_003_000)
        else {
            unreachable!("haproxy's state is an estimate")
        };
        assert_eq!((previous, current), (1, 0));
    }
}
