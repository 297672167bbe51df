//! Varnish's vsthrottle, `vsthrottle.is_denied(key, limit, period)`, as Debian's
//! varnish-modules 0.20.0 builds it (`docs/research/varnish/FINDINGS.md`, the source read at
//! the commit the binary was built from): a bucket per key made full (`limit` tokens) at its
//! first request, refilled at each call by `(long)((now − last_used) / period · limit)` whole
//! tokens (the fraction thrown away), capped at `limit`; a request is admitted when a token is
//! left, and only an admission moves `last_used` on. The clock is `VTIM_mono`, seconds as a
//! double. So a client that sends faster than a token a gap loses the fraction each time:
//! at 2 a second against 15 per 10 s it gets exactly one a second, not 1.5.
//!
//! With a `block` (`is_denied(key, limit, period, block)`), a denial blocks the key for that
//! long: every call until then is denied, yet takes a token if one is there and restarts the
//! refill clock; a call once the block is over is judged afresh, and denied, blocks again; an
//! admission lifts the block. A client that keeps sending through its block is never let back.

use super::decide::{admitted_at, Decide, Decision, State};
use crate::time::{Micros, SECOND};

/// See the module's documentation.
#[derive(Debug, Clone)]
pub struct Vsthrottle {
    pub(super) limit: i64,
    /// The period, s.
    pub(super) period: f64,
    /// Whole tokens, after the last call that stored them.
    pub(super) tokens: i64,
    /// The last admission's time, s; `None` before the key's first request.
    pub(super) last_used: Option<f64>,
    /// The block, s (0: none).
    pub(super) block: f64,
    /// When the block in force ends, s (0: none in force).
    pub(super) blocked_until: f64,
}

impl Vsthrottle {
    /// `is_denied(key, limit, period)`, `period` in µs.
    pub fn new(limit: u64, period: Micros) -> Self {
        Vsthrottle {
            limit: i64::try_from(limit).unwrap_or(i64::MAX),
            period: period as f64 / 1e6,
            tokens: 0,
            last_used: None,
            block: 0.0,
            blocked_until: 0.0,
        }
    }

    /// The same with `is_denied`'s fourth argument, `block` µs (0: none).
    pub fn with_block(mut self, block: Micros) -> Self {
        self.block = block as f64 / 1e6;
        self
    }

    /// Whether a block is in force at `now` s.
    #[inline]
    fn blocked(&self, now: f64) -> bool {
        self.block > 0.0 && now < self.blocked_until
    }

    /// `t` µs as the clock's seconds.
    #[inline]
    fn seconds(t: Micros) -> f64 {
        t as f64 / 1e6
    }

    /// The bucket's tokens at `now` s (`calc_tokens`), and its `last_used`.
    #[inline]
    fn refilled(&self, now: f64) -> (i64, f64) {
        match self.last_used {
            None => (self.limit, now),
            Some(last) => {
                let delta = now - last;
                // C's conversion truncates toward zero (the delta is never negative here).
                let add = ((delta / self.period) * self.limit as f64) as i64;
                (self.tokens.saturating_add(add).min(self.limit), last)
            }
        }
    }

    /// What the limiter holds at `now`.
    pub fn state(&self, now: Micros) -> State {
        State::Tokens {
            tokens: self.refilled(Self::seconds(now)).0.max(0) as f64,
            capacity: u64::try_from(self.limit).unwrap_or(0),
        }
    }

    /// The earliest time from `t` at which a request would be admitted if nothing else
    /// arrived: when a whole token has come since the last admission.
    pub fn retry_after(&self, t: Micros) -> Micros {
        if self.peek(t) {
            return t;
        }
        let Some(last) = self.last_used else { return t };
        // A token takes `period / limit`; search the µs around it (the double arithmetic).
        let guess = ((last + self.period / self.limit.max(1) as f64) * 1e6) as Micros;
        // Not before a block in force ends.
        let guess = guess.max((self.blocked_until * 1e6).ceil() as Micros);
        let mut at = guess.saturating_sub(2).max(t);
        while !self.peek(at) && at < guess.saturating_add(SECOND) {
            at += 1;
        }
        at
    }

    /// Whether a request at `t` would be admitted; changes nothing.
    pub(super) fn peek(&self, t: Micros) -> bool {
        let now = Self::seconds(t);
        !self.blocked(now) && self.refilled(now).0 > 0
    }

    /// Records an admission made elsewhere: its token taken, into debt if need be.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(super) fn force(&mut self, t: Micros) {
        let now = Self::seconds(t);
        let (tokens, _) = self.refilled(now);
        self.tokens = tokens - 1;
        self.last_used = Some(now);
        self.blocked_until = 0.0;
    }
}

impl Decide for Vsthrottle {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        let now = Self::seconds(t);
        let (tokens, _) = self.refilled(now);
        if self.block > 0.0 {
            // `vmod_is_denied` with a block (lines 182-196).
            let blocked = self.blocked(now);
            if blocked {
                self.tokens = tokens;
                self.last_used = Some(now);
            }
            if tokens > 0 {
                self.tokens = tokens - 1;
                self.last_used = Some(now);
                if !blocked {
                    self.blocked_until = 0.0;
                }
                return !blocked;
            }
            if !blocked {
                self.blocked_until = now + self.block;
            }
            return false;
        }
        // `calc_tokens` stores what it refilled, and `last_used` moves only with a token
        // taken; a refusal had nothing to refill (a whole token would have been taken), so
        // storing it changes nothing and is left out: a refusal changes nothing, and an
        // admission is `peek` then `force` (which a fleet's debt relies on).
        if tokens > 0 {
            self.tokens = tokens - 1;
            self.last_used = Some(now);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_a_second_against_fifteen_per_ten_seconds_gets_one_a_second() {
        // Measured on Debian's varnishd and in the C arithmetic: the first 15 (0 to 7 s)
        // admitted, then every other request, 67 in the first minute.
        let mut l = Vsthrottle::new(15, 10 * SECOND);
        let admitted: Vec<bool> = (0..120).map(|i| l.admit(i * SECOND / 2)).collect();
        assert!(admitted[..15].iter().all(|&ok| ok));
        assert_eq!(admitted.iter().filter(|&&ok| ok).count(), 67);
        assert!(
            admitted[15..].chunks_exact(2).all(|c| c == [false, true]),
            "{admitted:?}"
        );
    }

    #[test]
    fn a_block_locks_out_a_client_that_keeps_sending_as_varnishd_did() {
        // `is_denied(K, 15, 10s, 30s)`, measured on Debian's varnishd
        // (docs/research/varnish/FINDINGS.md): at 2 a second, the first 15 and then nothing
        // for two minutes; at 1 a second, every request.
        let mut l = Vsthrottle::new(15, 10 * SECOND).with_block(30 * SECOND);
        let admitted = (0..240).filter(|&i| l.admit(i * SECOND / 2)).count();
        assert_eq!(admitted, 15);
        let mut l = Vsthrottle::new(15, 10 * SECOND).with_block(30 * SECOND);
        assert!((0..120).all(|i| l.admit(i * SECOND)));
        // 16 at 0.01 s, then one a second from 0.5 s: the 16th blocks the key until 30.01 s;
        // the 30 requests meanwhile are denied, each taking the token a second brings; from
        // 30.5 s each is admitted. Live: 30 admitted, 31 denied, the same requests.
        let mut l = Vsthrottle::new(15, 10 * SECOND).with_block(30 * SECOND);
        let burst: Vec<bool> = (0..16).map(|_| l.admit(10_000)).collect();
        assert_eq!(burst.iter().filter(|&&ok| ok).count(), 15);
        assert!(!burst[15]);
        let after: Vec<bool> = (0..45).map(|i| l.admit(500_000 + i * SECOND)).collect();
        assert!(after[..30].iter().all(|&ok| !ok), "{after:?}");
        assert!(after[30..].iter().all(|&ok| ok), "{after:?}");
        // While blocked nothing is admitted however long the wait is said to be, and the
        // earliest admission is the block's end.
        let mut l = Vsthrottle::new(2, SECOND).with_block(5 * SECOND);
        assert!(l.admit(0) && l.admit(1) && !l.admit(2));
        assert!(!l.peek(4 * SECOND));
        assert_eq!(l.retry_after(3), 5 * SECOND + 2);
        assert!(l.admit(5 * SECOND + 2));
    }
}
