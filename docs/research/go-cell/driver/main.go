// Deterministic driver for golang.org/x/time/rate (Debian 0.3.0).
// Every call uses an explicit time.Time built with time.Unix (wall clock only,
// no monotonic reading), so the run is reproducible.
//
//	go run ./driver            (from /tmp/research/go-cell, see FINDINGS.md for env)
package main

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"
)

var base = time.Unix(1_700_000_000, 0)

func at(ns int64) time.Time { return base.Add(time.Duration(ns)) }

func secs(s float64) int64 { return int64(math.Round(s * 1e9)) }

// A limiter whose whole history is known, so that a probe (a fresh limiter
// replaying the same AllowN calls) can be asked for ReserveN without
// disturbing the real one.
type tracked struct {
	r    rate.Limit
	b    int
	lim  *rate.Limiter
	hist []int64
}

func newTracked(r rate.Limit, b int) *tracked {
	return &tracked{r: r, b: b, lim: rate.NewLimiter(r, b)}
}

func (t *tracked) replay() *rate.Limiter {
	return clone(t.lim)
}

// clone copies the limiter's whole state (mutex is unlocked, so copying is safe
// at run time; `go vet` would flag it as copylocks, which is intended here).
func clone(l *rate.Limiter) *rate.Limiter {
	c := new(rate.Limiter)
	*c = *l
	return c
}

func (t *tracked) allow(ns int64) bool {
	t.hist = append(t.hist, ns)
	return t.lim.AllowN(at(ns), 1)
}

// delay a ReserveN(t,1) would report right now (on a replayed copy).
func (t *tracked) probeDelay(ns int64) (time.Duration, bool) {
	p := t.replay()
	res := p.ReserveN(at(ns), 1)
	return res.DelayFrom(at(ns)), res.OK()
}

func retryAfter(d time.Duration) int64 { // ceil to whole seconds
	return int64(math.Ceil(d.Seconds()))
}

func scenario(title string, r rate.Limit, b int, times []int64) {
	fmt.Printf("\n== %s  (limit=%v ev/s, burst=%d)\n", title, float64(r), b)
	fmt.Printf("%14s %6s %22s %16s %s\n", "t(s)", "allow", "tokens after", "reserve delay", "Retry-After(ceil s)")
	tr := newTracked(r, b)
	for _, ns := range times {
		// the delay is probed *before* the call, i.e. what Reserve would say instead of AllowN
		d, ok := tr.probeDelay(ns)
		allowed := tr.allow(ns)
		tok := tr.lim.TokensAt(at(ns))
		ds := "-"
		ra := "-"
		if !ok {
			ds = "InfDuration(!OK)"
		} else if !allowed {
			ds = d.String()
			ra = fmt.Sprint(retryAfter(d))
		} else if d != 0 {
			ds = "ALLOWED-BUT-DELAY=" + d.String()
		}
		fmt.Printf("%14.9f %6v %22.17g %16s %s\n", float64(ns)/1e9, allowed, tok, ds, ra)
	}
}

// earliest admission time >= from (ns resolution) for the limiter state lim
// (probed on clones, lim itself is not touched).
func earliest(lim *rate.Limiter, from int64) int64 {
	ok := func(ns int64) bool { return clone(lim).AllowN(at(ns), 1) }
	if ok(from) {
		return from
	}
	lo, hi := from, from+1
	for !ok(hi) {
		lo = hi
		hi = from + 2*(hi-from)
	}
	for hi-lo > 1 { // invariant: !ok(lo), ok(hi)
		m := lo + (hi-lo)/2
		if ok(m) {
			hi = m
		} else {
			lo = m
		}
	}
	return hi
}

// Greedy client: admitted as early as possible (1 ns resolution), starting
// with a full bucket at t=0. Returns admission times.
func greedy(r rate.Limit, b int, horizon int64) []int64 {
	lim := rate.NewLimiter(r, b)
	var hist []int64
	t := int64(0)
	for {
		e := earliest(lim, t)
		if e > horizon {
			return hist
		}
		if !lim.AllowN(at(e), 1) {
			panic("probe/real mismatch")
		}
		hist = append(hist, e)
		t = e
	}
}

// max count of admissions in any window (t-W, t]; the max is attained with t
// equal to an admission time.
func maxInWindow(ts []int64, w int64) (int, int64) {
	best, bestT := 0, int64(0)
	j := 0
	for i := range ts {
		for ts[j] <= ts[i]-w {
			j++
		}
		if c := i - j + 1; c > best {
			best, bestT = c, ts[i]
		}
	}
	return best, bestT
}

func main() {
	fmt.Println("golang.org/x/time/rate v0.3.0 (Debian), base =", base.UTC().Format(time.RFC3339Nano))

	// 1. r = 1/s, b = 3
	scenario("Every(1s), b=3", rate.Every(time.Second), 3, []int64{
		0, 0, 0, 0, secs(0.5), secs(1) - 1, secs(1), secs(1), secs(1.5), secs(2), secs(2.25),
		secs(3), secs(3), secs(10), secs(10), secs(10), secs(10), secs(10),
	})

	// 2. r = 2/s (0.5 s per token), b = 1: the trailing-window example
	scenario("r=2/s, b=1", 2, 1, []int64{0, 1, secs(0.5) - 1, secs(0.5), secs(0.75), secs(1), secs(1.2), secs(1.5)})

	// 3. rate with a non-terminating binary expansion: r = 3/s, b = 1
	scenario("r=3/s, b=1 (1/3 s per token)", 3, 1, []int64{0, secs(1.0/3) - 1, 333333333, 333333334, 666666666, 666666667, 999999999, 1000000000})

	// 4. special cases
	scenario("Inf limit, burst 0", rate.Inf, 0, []int64{0, 0, 0})
	scenario("finite limit, burst 0", 10, 0, []int64{0, secs(100)})
	scenario("limit 0, burst 2 (burst is decremented!)", 0, 2, []int64{0, 0, 0, secs(1000)})
	fmt.Println("\nEvery(0) =", float64(rate.Every(0)), " Every(-1s) =", float64(rate.Every(-time.Second)),
		" Every(3s) =", float64(rate.Every(3*time.Second)), " Every(1ms) =", float64(rate.Every(time.Millisecond)),
		" Every(3ms) = ", float64(rate.Every(3*time.Millisecond)))

	// 5. time going backwards: AllowN at t, then at t-1s
	scenario("Every(1s), b=1, clock goes backwards", rate.Every(time.Second), 1, []int64{secs(5), secs(4), secs(5), secs(5.5), secs(6)})

	// 6. initial state: last == zero Time. First call near the zero time -> bucket not full
	{
		lim := rate.NewLimiter(1, 5)
		z := time.Time{}.Add(2 * time.Second)
		fmt.Printf("\n== NewLimiter(1,5), first call at zeroTime+2s: TokensAt = %v (starts at 0 tokens, not full)\n", lim.TokensAt(z))
		lim2 := rate.NewLimiter(1e-10, 1)
		fmt.Printf("   NewLimiter(1e-10,1), first AllowN(now-ish) = %v, TokensAt = %v (elapsed saturates at maxDuration ~292y)\n",
			lim2.AllowN(base, 1), lim2.TokensAt(base))
	}

	// 7. earliest admission after draining, for awkward rates: compare with exact k/r
	fmt.Println("\n== earliest admission times (greedy, 1 ns resolution) vs exact k/r after the initial burst at t=0")
	for _, c := range []struct {
		r rate.Limit
		b int
	}{{1, 1}, {3, 1}, {7, 2}, {10, 1}, {0.3, 1}, {1000, 5}, {rate.Every(time.Second / 3), 1}} {
		h := greedy(c.r, c.b, secs(3))
		fmt.Printf("r=%-20v b=%d:", float64(c.r), c.b)
		k := 0
		for i, ns := range h {
			if i < c.b {
				continue
			}
			k++
			exact := float64(k) / float64(c.r) * 1e9
			if k <= 8 || i == len(h)-1 {
				fmt.Printf(" %d(%+.3gns)", ns, float64(ns)-exact)
			}
		}
		fmt.Printf("  [%d admissions in 3 s]\n", len(h))
	}

	// 8. worst case in trailing windows (t-W, t]
	fmt.Println("\n== worst case: max admissions in any window (t-W, t], greedy client, horizon 3W")
	fmt.Printf("%-22s %3s %8s %6s %22s %s\n", "r", "b", "W", "max", "b+ceil(rW)-1 (exact)", "at t=")
	for _, c := range []struct {
		r rate.Limit
		b int
		w time.Duration
	}{
		{1, 1, time.Second}, {1, 3, time.Second}, {2, 1, time.Second}, {3, 1, time.Second},
		{rate.Every(time.Second / 3), 1, time.Second}, {7, 2, time.Second}, {10, 5, time.Second},
		{0.5, 3, 10 * time.Second}, {rate.Every(2 * time.Second), 4, 60 * time.Second},
		{1, 1, 1500 * time.Millisecond}, {0.3, 1, 10 * time.Second},
	} {
		h := greedy(c.r, c.b, 3*int64(c.w))
		m, t := maxInWindow(h, int64(c.w))
		rw := float64(c.r) * c.w.Seconds()
		pred := c.b + int(math.Ceil(rw)) - 1
		fmt.Printf("%-22v %3d %8v %6d %22d %.9f\n", float64(c.r), c.b, c.w, m, pred, float64(t)/1e9)
	}

	// 9. Does "Reserve then Cancel on delay>0" (echo v5 style) decide like AllowN?
	fmt.Println("\n== AllowN vs AllowN+ReserveN/CancelAt on reject (echo v5) vs ReserveN/CancelAt-only, LCG arrivals")
	for _, c := range []struct {
		r rate.Limit
		b int
	}{{3, 2}, {1, 1}, {7, 3}, {rate.Every(time.Second / 3), 1}, {0.3, 2}} {
		a := rate.NewLimiter(c.r, c.b)
		e := rate.NewLimiter(c.r, c.b)
		rc := rate.NewLimiter(c.r, c.b)
		x := uint64(12345)
		ns := int64(0)
		mismE, mismR, allowedA := 0, 0, 0
		firstE, firstR := int64(-1), int64(-1)
		for i := 0; i < 200000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
			gap := float64(x>>11) / float64(1<<53) * 2 / float64(c.r) // mean 1/r
			ns += int64(gap * 1e9 / 2)                                // offered ~2r
			t := at(ns)
			da := a.AllowN(t, 1)
			de := e.AllowN(t, 1)
			if !de {
				res := e.ReserveN(t, 1)
				_ = res.DelayFrom(t)
				res.CancelAt(t)
			}
			res := rc.ReserveN(t, 1)
			dr := res.DelayFrom(t) == 0
			if !dr {
				res.CancelAt(t)
			}
			if da {
				allowedA++
			}
			if da != de {
				mismE++
				if firstE < 0 {
					firstE = ns
				}
			}
			if da != dr {
				mismR++
				if firstR < 0 {
					firstR = ns
				}
			}
		}
		fmt.Printf("r=%-18v b=%d: 200000 arrivals, AllowN admitted %d; mismatches: echo-style %d (first at %dns), reserve/cancel-only %d (first at %dns)\n",
			float64(c.r), c.b, allowedA, mismE, firstE, mismR, firstR)
	}

	// 10. same comparison with arrivals clustered at ns boundaries (k/(2r) + {-2..+1} ns)
	fmt.Println("\n== same, arrivals at k/(2r)+{-2,-1,0,+1}ns (boundary-heavy)")
	for _, c := range []struct {
		r rate.Limit
		b int
	}{{3, 2}, {1, 1}, {7, 3}, {rate.Every(time.Second / 3), 1}, {0.3, 2}, {10, 1}} {
		a := rate.NewLimiter(c.r, c.b)
		e := rate.NewLimiter(c.r, c.b)
		mism, allowedA, first := 0, 0, int64(-1)
		for k := 1; k <= 50000; k++ {
			c0 := int64(math.Round(float64(k) * 1e9 / (2 * float64(c.r))))
			for _, j := range []int64{-2, -1, 0, 1} {
				t := at(c0 + j)
				da := a.AllowN(t, 1)
				de := e.AllowN(t, 1)
				if !de {
					res := e.ReserveN(t, 1)
					res.CancelAt(t)
				}
				if da {
					allowedA++
				}
				if da != de {
					mism++
					if first < 0 {
						first = c0 + j
					}
				}
			}
		}
		fmt.Printf("r=%-18v b=%d: 200000 arrivals, AllowN admitted %d, echo-style mismatches %d (first at %dns)\n", float64(c.r), c.b, allowedA, mism, first)
	}
}
