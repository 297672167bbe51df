"""
Drive limits' three strategies on MemoryStorage with a controlled clock.

- time.time is monkeypatched (every clock read in limits/storage/memory.py,
  limits/strategies.py and flask_limiter/_extension.py is `time.time()`).
- MemoryStorage's background expiry threading.Timer is replaced by a stub that
  never fires on its own; `expire(storage)` runs the same private method by hand.
Run:  venv/bin/python verify.py
"""
from __future__ import annotations

import itertools
import math
import sys
import threading
import time
import types

import limits
import limits.storage.memory as memmod
from limits import parse, parse_many
from limits.storage import MemoryStorage
from limits.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)

# ---------------------------------------------------------------- controlled clock
T0 = 1699920000.0  # = 19675 * 86400: a multiple of 1, 10, 60, 3600 and 86400 (UTC midnight)


class Clock:
    now = T0


CLOCK = Clock()
time.time = lambda: CLOCK.now  # noqa: E731  (patches the function every module calls)


class StubTimer:
    def __init__(self, interval, fn):
        self.fn = fn

    def start(self):
        pass

    def is_alive(self):
        return True  # -> __schedule_expiry never re-arms


memmod.threading = types.SimpleNamespace(Timer=StubTimer, RLock=threading.RLock)


def expire(storage):
    storage._MemoryStorage__expire_events()


def at(off):
    CLOCK.now = T0 + off


def rel(x):
    return f"{x - T0:+.6f}"


def flask_headers(stats):
    """Exactly Flask-Limiter 4.1.1 _extension.py RequestLimit.reset_at / __inject_headers."""
    reset_at = int(stats.reset_time + 1)
    retry_after = int(reset_at - time.time())
    return reset_at, retry_after


STRATS = {
    "fixed-window": FixedWindowRateLimiter,
    "moving-window": MovingWindowRateLimiter,
    "sliding-window-counter": SlidingWindowCounterRateLimiter,
}


def run(title, strategy, rate, pattern, key="k", show_state=True):
    """pattern: list of (offset, n_hits[, cost]) ; prints each decision."""
    print(f"\n=== {title}: {strategy} '{rate}' (W={parse(rate).get_expiry()}s, L={parse(rate).amount}); t relative to T0={T0}")
    st = MemoryStorage()
    lim = STRATS[strategy](st)
    item = parse(rate)
    log = []
    for ev in pattern:
        off, n = ev[0], ev[1]
        cost = ev[2] if len(ev) > 2 else 1
        at(off)
        for _ in range(n):
            ok = lim.hit(item, key, cost=cost)
            log.append((CLOCK.now, ok, cost))
            stats = lim.get_window_stats(item, key)
            ra = flask_headers(stats)
            extra = ""
            if show_state:
                extra = "  state=" + state_of(st, strategy, item, key)
            print(f"t={rel(CLOCK.now)} cost={cost} -> {'ADMIT ' if ok else 'REJECT'}"
                  f" reset={rel(stats.reset_time)} remaining={stats.remaining}"
                  f" X-RateLimit-Reset={ra[0]-int(T0):+d}(+T0) Retry-After={ra[1]}{extra}")
    return log


def state_of(st, strategy, item, key):
    k = item.key_for(key)
    if strategy == "fixed-window":
        return f"count={st.storage.get(k, 0)} expires={rel(st.expirations[k]) if k in st.expirations else None}"
    if strategy == "moving-window":
        return "atimes=[" + ",".join(f"{e.atime - T0:g}" for e in st.events.get(k, [])) + "]"
    W = item.get_expiry()
    p, c = st.sliding_window_keys(k, W, CLOCK.now)
    pc, pttl, cc, cttl = st._get_sliding_window_info(p, c, W, CLOCK.now)
    w = pc * pttl / W + cc
    return f"prev[{p.rsplit('/',1)[1]}]={pc} prev_ttl={pttl!r} cur[{c.rsplit('/',1)[1]}]={cc} weighted={w!r}"


def max_trailing(log, W):
    """max #admitted hits in any (t-W, t]; the max is attained with t = an admitted hit time."""
    ts = sorted(t for t, ok, cost in log if ok for _ in range(cost))
    best, arg = 0, None
    for t in ts:
        n = sum(1 for u in ts if t - W < u <= t)
        if n > best:
            best, arg = n, t
    return best, arg


# ---------------------------------------------------------------- 1. parsing
def parsing():
    print("=== parse / parse_many")
    cases = ["10/minute", "10 per minute", "10/2 minutes", "10 PER 2 Hours", " 3 / 10 seconds ",
             "10per minute", "1/second;5/minute,100/hour|1000/day", "10/month", "2/years",
             "10/0 minutes", "0/second", "10/minute:,5/hour", "007/ 01 minute",
             "10/minute;", "10/min", "10 minutes", "10/ minute ;", "-1/second", "1.5/second",
             "10/ſecond", "10/\u212aminute", "10/minute\n", "5/day;1/second"]
    for s in cases:
        try:
            many = parse_many(s)
            print(f"{s!r:42} -> " + "; ".join(f"{i!r} [{type(i).__name__} amount={i.amount} multiples={i.multiples} expiry={i.get_expiry()}s]" for i in many))
        except Exception as e:
            print(f"{s!r:42} -> {type(e).__name__}: {e}")


# ---------------------------------------------------------------- 2. fixed window
def fixed():
    R = "3 per 10 seconds"
    run("FW basic: window starts at first hit (t=+3.5, not epoch-aligned), ends at +13.5, hit at exactly +13.5 opens a new one",
        "fixed-window", R, [(3.5, 1), (4, 2), (5, 1), (13.499999, 1), (13.5, 1), (14, 2), (20, 1)])
    run("FW rejected hits are counted (cost>1 rejected hit still consumes)", "fixed-window", R,
        [(0, 1, 2), (1, 1, 2), (2, 1, 1), (10, 1, 5), (10, 1, 1)])
    log = run("FW worst case 2L-1 in (t-W,t]", "fixed-window", R, [(0, 1), (9.5, 2), (10, 3)], show_state=False)
    print("max admitted in any (t-W,t]:", max_trailing(log, 10))
    # Retry-After check: rejected at fractional times; wait exactly Retry-After seconds
    print("\n--- FW: client waits exactly Retry-After after a 429")
    for first, rej in [(0.0, 1.2), (0.9, 1.5), (0.5, 9.9), (0.25, 10.0)]:
        st = MemoryStorage(); lim = FixedWindowRateLimiter(st); item = parse(R)
        at(first); [lim.hit(item, "k") for _ in range(3)]
        at(rej); ok = lim.hit(item, "k"); stats = lim.get_window_stats(item, "k"); ra = flask_headers(stats)[1]
        at(rej + ra); ok2 = lim.hit(item, "k")
        print(f"  first hit +{first}, 429 at +{rej} ok={ok}: reset={rel(stats.reset_time)} Retry-After={ra} -> retry at +{rej+ra}: {'ADMIT' if ok2 else 'REJECT'}")


# ---------------------------------------------------------------- 3. moving window
def moving():
    R = "3 per 10 seconds"
    run("MW basic: entry exactly W old still counts (>=); admitted only when 3rd-newest atime < now-W",
        "moving-window", R, [(0, 1), (1, 1), (2, 1), (5, 1), (10, 1), (10.000001, 1), (11, 1), (12, 1), (12.5, 1)])
    log = run("MW worst case: L in any window", "moving-window", R,
              [(0, 3), (9.999, 2), (10, 2), (10.5, 3), (20.5, 1), (20.75, 3)], show_state=False)
    print("max admitted in any (t-W,t]:", max_trailing(log, 10))
    print("\n--- MW: client waits exactly (reset - now) and exactly Retry-After after a 429")
    for hits, rej in [((0, 1, 2), 5.0), ((0.3, 1, 2), 5.6), ((0.5, 1, 2), 9.9), ((0.25, 1, 2), 3.5), ((0.9, 1, 2), 1.5)]:
        st = MemoryStorage(); lim = MovingWindowRateLimiter(st); item = parse(R)
        for h in hits:
            at(h); lim.hit(item, "k")
        at(rej); ok = lim.hit(item, "k"); stats = lim.get_window_stats(item, "k"); ra = flask_headers(stats)[1]
        at(stats.reset_time - T0); ok_exact = lim.test(item, "k")
        # use a fresh copy of state for each probe: test() does not consume, hit() does
        import copy
        st2 = copy.deepcopy(st); lim2 = MovingWindowRateLimiter(st2)
        at(stats.reset_time - T0); ok_reset = lim2.hit(item, "k")
        st3 = copy.deepcopy(st); lim3 = MovingWindowRateLimiter(st3)
        at(rej + ra); ok_ra = lim3.hit(item, "k")
        print(f"  hits at {hits}, 429 at +{rej}: reset={rel(stats.reset_time)} Retry-After={ra}; hit() at reset exactly: "
              f"{'ADMIT' if ok_reset else 'REJECT'} (test()={ok_exact}); hit() at +{rej}+{ra}: {'ADMIT' if ok_ra else 'REJECT'}")
    print("\n--- MW: get_window_stats when no entry is inside the window (stale list), before/after the expiry timer")
    st = MemoryStorage(); lim = MovingWindowRateLimiter(st); item = parse(R)
    for h in (0, 1, 2):
        at(h); lim.hit(item, "k")
    at(30)
    print("  at +30 no timer:", "reset", rel(lim.get_window_stats(item, "k").reset_time), "remaining", lim.get_window_stats(item, "k").remaining)
    expire(st)
    print("  at +30 after timer:", "reset", rel(lim.get_window_stats(item, "k").reset_time), "remaining", lim.get_window_stats(item, "k").remaining)
    print("\n--- MW: acquire_entry counts atime >= now-W, get_moving_window counts atime > now-W (boundary)")
    st = MemoryStorage(); lim = MovingWindowRateLimiter(st); item = parse(R)
    for h in (0, 1, 2):
        at(h); lim.hit(item, "k")
    at(10)
    print("  at +10: test() =", lim.test(item, "k"), " get_window_stats =", lim.get_window_stats(item, "k"),
          " hit() =", lim.hit(item, "k"))
    print("\n--- MW: 429 at exactly atime+W of the L-th newest entry: stats see an empty window (stale reset, remaining=L)")
    st = MemoryStorage(); lim = MovingWindowRateLimiter(st); item = parse(R)
    for h in (0, 0, 0, 10.5, 10.5, 10.5):
        at(h); lim.hit(item, "k")
    at(20.5); ok = lim.hit(item, "k"); stats = lim.get_window_stats(item, "k")
    print(f"  hits 3x+0, 3x+10.5; hit at +20.5 -> {ok}; stats reset={rel(stats.reset_time)} remaining={stats.remaining} "
          f"-> Flask X-RateLimit-Reset/Retry-After = {flask_headers(stats)}")
    print("\n--- MW: the expiry timer can flip a decision only at the exact float boundary (timer runs at the same clock value)")
    for run_timer in (False, True):
        st = MemoryStorage(); lim = MovingWindowRateLimiter(st); item = parse(R)
        for h in (0, 1, 2):
            at(h); lim.hit(item, "k")
        at(10)
        if run_timer:
            expire(st)
        print(f"  timer ran at +10: {run_timer} -> hit at +10: {lim.hit(item, 'k')}")


# ---------------------------------------------------------------- 4. sliding window counter
def sliding():
    R = "10/minute"
    run("SWC: 10 hits at -1 (prev window [-60,0)), then probes in the current window [0,60)",
        "sliding-window-counter", R,
        [(-1, 10), (0, 1), (5.999, 1), (6, 2), (12, 1), (30, 4), (30, 1), (59.999, 1), (60, 1), (61, 1)])
    log = run("SWC worst case 2L: 10 at -1, 10 at +58", "sliding-window-counter", R,
              [(-1, 10), (58, 10), (58.5, 1)], show_state=False)
    print("max admitted in any (t-W,t]:", max_trailing(log, 60))
    print("\n--- SWC: Retry-After / reset at rejection, and a client waiting exactly that long")
    import copy
    cases = [([(-30, 10)], 0.0), ([(-30, 10), (7.5, 2)], 7.5), ([(-30, 4), (20, 8)], 20.0),
             ([(0, 10)], 20.25), ([(-30, 7), (33.3, 7)], 33.3), ([(-30, 7), (33.9, 7)], 33.9),
             ([(-45, 5), (2.7, 9)], 2.7)]
    for hits, rej in cases:
        st = MemoryStorage(); lim = SlidingWindowCounterRateLimiter(st); item = parse(R)
        adm = 0
        for t, n in hits:
            at(t); adm += sum(lim.hit(item, "k") for _ in range(n))
        at(rej); ok = lim.hit(item, "k"); stats = lim.get_window_stats(item, "k"); ra = flask_headers(stats)[1]
        probe = lambda off: SlidingWindowCounterRateLimiter(copy.deepcopy(st)).hit(item, "k") if not at(off) else None
        r_at, r_after, r_ra = probe(stats.reset_time - T0), probe(stats.reset_time - T0 + 1e-6), probe(rej + ra)
        f = lambda b: "ADMIT" if b else "REJECT"
        print(f"  hits {hits} ({adm} admitted); hit at +{rej}: {f(ok)} reset={rel(stats.reset_time)} remaining={stats.remaining} "
              f"Retry-After={ra}; hit at reset: {f(r_at)}, at reset+1us: {f(r_after)}, at +{rej}+Retry-After: {f(r_ra)}")
    print("\n--- SWC float details")
    W = 60
    for off in (0.0, 0.1, 6.0, 30.0, 59.9):
        now = T0 + off
        prev_ttl = (1 - (((now - W) / W) % 1)) * W
        cur_ttl = (1 - ((now / W) % 1)) * W + W
        print(f"  now=T0+{off}: keys={MemoryStorage.sliding_window_keys('k', W, now)} prev_ttl={prev_ttl!r} "
              f"cur_ttl={cur_ttl!r} 10*prev_ttl/60={10*prev_ttl/W!r}")
    print("  near the epoch (now < W) the previous key is NOT current-1:",
          MemoryStorage.sliding_window_keys("k", 60, 10.0), MemoryStorage.sliding_window_keys("k", 60, 70.0))


# ---------------------------------------------------------------- 5. exhaustive worst case on a grid
def exhaustive():
    print("\n=== exhaustive search: L=2, W=1s, 10 grid instants T0-0.375 .. T0+0.75 step 0.125, 0..2 hit attempts each (3^10 patterns)")
    grid = [-0.375 + 0.125 * i for i in range(10)]
    item = parse("2/second")
    for name, cls in STRATS.items():
        best, best_pat = -1, None
        for counts in itertools.product(range(3), repeat=len(grid)):
            st = MemoryStorage(); lim = cls(st)
            log = []
            for off, n in zip(grid, counts):
                CLOCK.now = T0 + off
                for _ in range(n):
                    log.append((CLOCK.now, lim.hit(item, "k"), 1))
            m, t = max_trailing(log, 1)
            if m > best:
                best, best_pat = m, [(g, c) for g, c in zip(grid, counts) if c]
        print(f"  {name:24}: max admitted in any (t-1,t] = {best}  e.g. attempts {best_pat}")


if __name__ == "__main__":
    print("limits", limits.__version__, "python", sys.version.split()[0])
    parsing(); fixed(); moving(); sliding()
    if "--no-exhaustive" not in sys.argv:
        exhaustive()
