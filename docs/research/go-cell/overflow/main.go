// Edge case: durationFromTokens overflow (float64 -> int64 conversion of a
// value > MaxInt64) in x/time/rate v0.3.0 on amd64.
package main

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

func main() {
	base := time.Unix(1_700_000_000, 0)
	for _, r := range []rate.Limit{1e-9, 1e-10, 1e-11, 1e-12} {
		lim := rate.NewLimiter(r, 1)
		fmt.Printf("r=%g b=1:", float64(r))
		for i := 0; i < 5; i++ {
			t := base.Add(time.Duration(i) * time.Millisecond)
			res := rate.NewLimiter(r, 1) // fresh, just to show first Reserve's delay
			_ = res
			fmt.Printf(" %v", lim.AllowN(t, 1))
		}
		fmt.Printf("  tokens now=%g\n", lim.TokensAt(base))
		l2 := rate.NewLimiter(r, 1)
		rv := l2.ReserveN(base, 1)
		fmt.Printf("    first ReserveN: ok=%v delay=%v\n", rv.OK(), rv.DelayFrom(base))
	}
}
