//! Deterministic driver for redis-cell 0.2.2's GCRA (src/cell/mod.rs used
//! unchanged), with a fake clock (ns since epoch) and optional emulation of
//! Redis' millisecond key expiry.
extern crate redis_cell;
extern crate time;

use redis_cell::cell::store::Store;
use redis_cell::cell::{Rate, RateLimiter, RateQuota};
use redis_cell::error::CellError;
use std::collections::HashMap;

#[derive(Clone)]
struct FakeStore {
    map: HashMap<String, (i64, i64)>, // value, expire_at_ms (i64::MAX = none)
    now_ns: i64,
    emulate_expiry: bool,
}

fn tm(ns: i64) -> time::Tm {
    time::at_utc(time::Timespec::new(ns / 1_000_000_000, (ns % 1_000_000_000) as i32))
}

impl FakeStore {
    fn new(emulate_expiry: bool) -> FakeStore {
        FakeStore { map: HashMap::new(), now_ns: 0, emulate_expiry }
    }
    fn now_ms(&self) -> i64 { self.now_ns.div_euclid(1_000_000) }
    fn live(&self, key: &str) -> Option<i64> {
        match self.map.get(key) {
            Some(&(v, exp)) if !self.emulate_expiry || self.now_ms() <= exp => Some(v),
            _ => None,
        }
    }
    fn set(&mut self, key: &str, v: i64, ttl: time::Duration) {
        // RedisModule_SetExpire(key, ttl.num_milliseconds()): expires at now_ms + ttl_ms,
        // and Redis treats a key as expired once now_ms > expire_at.
        let exp = self.now_ms() + ttl.num_milliseconds();
        self.map.insert(key.to_string(), (v, exp));
    }
}

impl Store for FakeStore {
    fn compare_and_swap_with_ttl(&mut self, key: &str, old: i64, new: i64, ttl: time::Duration) -> Result<bool, CellError> {
        match self.live(key) {
            Some(v) if v == old => { self.set(key, new, ttl); Ok(true) }
            _ => Ok(false),
        }
    }
    fn get_with_time(&self, key: &str) -> Result<(i64, time::Tm), CellError> {
        Ok((self.live(key).unwrap_or(-1), tm(self.now_ns)))
    }
    fn log_debug(&self, _: &str) {}
    fn set_if_not_exists_with_ttl(&mut self, key: &str, value: i64, ttl: time::Duration) -> Result<bool, CellError> {
        if self.live(key).is_none() { self.set(key, value, ttl); Ok(true) } else { Ok(false) }
    }
}

/// Exactly what lib.rs's ThrottleCommand::run computes and replies.
fn throttle(st: &mut FakeStore, key: &str, max_burst: i64, count: i64, period: i64, qty: i64) -> [i64; 5] {
    let rate = Rate::per_period(count, time::Duration::seconds(period));
    let mut lim = RateLimiter::new(st, &RateQuota { max_burst, max_rate: rate });
    let (throttled, r) = lim.rate_limit(key, qty).unwrap();
    [if throttled { 1 } else { 0 }, r.limit, r.remaining, r.retry_after.num_seconds(), r.reset_after.num_seconds()]
}

const S: i64 = 1_000_000_000;
const T0: i64 = 1_700_000_000 * S;

fn earliest(st: &FakeStore, key: &str, a: (i64, i64, i64), from: i64) -> i64 {
    let ok = |ns: i64| { let mut c = st.clone(); c.now_ns = ns; throttle(&mut c, key, a.0, a.1, a.2, 1)[0] == 0 };
    if ok(from) { return from; }
    let (mut lo, mut hi) = (from, from + 1);
    while !ok(hi) { lo = hi; hi = from + 2 * (hi - from); }
    while hi - lo > 1 { let m = lo + (hi - lo) / 2; if ok(m) { hi = m } else { lo = m } }
    hi
}

fn greedy(a: (i64, i64, i64), horizon: i64, emulate: bool) -> Vec<i64> {
    let mut st = FakeStore::new(emulate);
    let mut v = vec![];
    let mut t = T0;
    loop {
        let e = earliest(&st, "g", a, t);
        if e > T0 + horizon { return v; }
        st.now_ns = e;
        assert_eq!(throttle(&mut st, "g", a.0, a.1, a.2, 1)[0], 0);
        v.push(e - T0);
        t = e;
    }
}

fn max_in_window(ts: &[i64], w: i64) -> (usize, i64) {
    let (mut best, mut bt, mut j) = (0, 0, 0);
    for i in 0..ts.len() {
        while ts[j] <= ts[i] - w { j += 1; }
        if i - j + 1 > best { best = i - j + 1; bt = ts[i]; }
    }
    (best, bt)
}

fn main() {
    for &emulate in &[false, true] {
        println!("\n######## emulate Redis ms expiry = {}", emulate);
        println!("== CL.THROTTLE k 3 30 60 (T = {} ns)", Rate::per_period(30, time::Duration::seconds(60)).period.num_nanoseconds().unwrap());
        let mut st = FakeStore::new(emulate);
        let seq: Vec<(&str, i64)> = vec![
            ("t0", 0), ("t0+100us", 100_000), ("t0+200us", 200_000), ("t0+300us", 300_000),
            ("5th t0+400us", 400_000), ("t0+400us+1s (waited retry_after)", 400_000 + S),
            ("t0+2s-1ns", 2 * S - 1), ("t0+2s", 2 * S), ("t0+2s+1ns", 2 * S + 1),
        ];
        for (label, off) in seq {
            let mut c = st.clone();
            c.now_ns = T0 + off;
            let r = throttle(&mut c, "k", 3, 30, 60, 1);
            // only commit the "t0+2s-1ns" and "t0+2s" probes to show each individually
            if off != 2 * S - 1 && off != 2 * S + 1 { st = c; }
            println!("  {:<36} -> {:?}   stored tat-t0 = {:?} ns", label, r, st.map.get("k").map(|&(v, _)| v - T0));
        }
        let a = (3, 30, 60);
        let mut st2 = FakeStore::new(emulate);
        for i in 0..4 { st2.now_ns = T0 + i * 100_000; throttle(&mut st2, "k", 3, 30, 60, 1); }
        println!("  earliest admission after 4 at t0..t0+300us: t0 + {} ns", earliest(&st2, "k", a, T0) - T0);

        println!("== quantity / peek / oversize examples on a fresh key (max_burst=4, 1 per 1 s)");
        let mut st3 = FakeStore::new(emulate);
        for &(off, q) in &[(0, 6), (0, 0), (0, 1), (0, 5), (0, 4), (S / 2, 1), (S, 1), (10 * S, 0)] {
            st3.now_ns = T0 + off;
            println!("  t0+{:>6}ms qty={} -> {:?}", off / 1_000_000, q, throttle(&mut st3, "q", 4, 1, 1, q));
        }

        println!("== worst case in any trailing window (t-W, t], W = period, greedy client at 1 ns resolution");
        println!("  {:>16} {:>12} {:>5} {:>26}  at", "args (b,n,P)", "T ns", "max", "b+1+floor((W-1ns)/T)");
        for &a in &[(3, 30, 60), (0, 1, 1), (2, 5, 1), (2, 3, 1), (0, 7, 1), (4, 1, 1), (15, 30, 60), (1, 3, 10), (0, 1500, 1), (0, 2000, 1), (1, 1500, 1), (0, 3000, 3)] {
            let t = Rate::per_period(a.1, time::Duration::seconds(a.2)).period.num_nanoseconds().unwrap();
            let w = a.2 * S;
            let ts = greedy(a, 3 * w, emulate);
            let (m, at) = max_in_window(&ts, w);
            println!("  {:>16} {:>12} {:>5} {:>26}  t0+{:.9}s", format!("{:?}", a), t, m, a.0 + 1 + (w - 1) / t, at as f64 / 1e9);
        }
    }
}
