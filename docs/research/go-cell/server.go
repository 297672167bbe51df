// Minimal HTTP server rate-limited with golang.org/x/time/rate (reference
// behaviour for a Rust re-implementation).
//
// Environment:
//
//	PORT     listen port on 127.0.0.1 (default 8080)
//	RATE     limit in events/second, float64 (default 1); "inf" = rate.Inf
//	BURST    bucket size, int (default 1)
//	PER_IP   "1" = one limiter per client IP (RemoteAddr host), else one global limiter
//
// Decision: lim.AllowN(now, 1) (state untouched when refused).
// When refused: 429, and if the limiter could ever grant the token
// (Reservation OK) the header Retry-After = ceil(delay in seconds), where delay
// is ReserveN(now,1).DelayFrom(now); the reservation is then cancelled with
// CancelAt(now) (this is what echo v5's RateLimiterMemoryStore does, except
// that echo calls time.Now() separately for each step).
// Also sent (as echo v5 does): X-RateLimit-Limit = burst,
// X-RateLimit-Remaining = max(0, floor(TokensAt(now))).
//
// Build: see FINDINGS.md (go build -o server server.go).
package main

import (
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

type limiters struct {
	mu    sync.Mutex
	r     rate.Limit
	b     int
	perIP bool
	all   *rate.Limiter
	byIP  map[string]*rate.Limiter
}

func (l *limiters) get(key string) *rate.Limiter {
	if !l.perIP {
		return l.all
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.byIP[key]
	if !ok {
		lim = rate.NewLimiter(l.r, l.b)
		l.byIP[key] = lim
	}
	return lim
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func main() {
	port := env("PORT", "8080")
	var r rate.Limit
	if rs := env("RATE", "1"); strings.EqualFold(rs, "inf") {
		r = rate.Inf
	} else {
		f, err := strconv.ParseFloat(rs, 64)
		if err != nil {
			log.Fatalf("RATE: %v", err)
		}
		r = rate.Limit(f)
	}
	b, err := strconv.Atoi(env("BURST", "1"))
	if err != nil {
		log.Fatalf("BURST: %v", err)
	}
	ls := &limiters{r: r, b: b, perIP: env("PER_IP", "0") == "1",
		all: rate.NewLimiter(r, b), byIP: map[string]*rate.Limiter{}}

	http.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		host, _, err := net.SplitHostPort(req.RemoteAddr)
		if err != nil {
			host = req.RemoteAddr
		}
		lim := ls.get(host)
		now := time.Now()
		allowed := lim.AllowN(now, 1)
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(b))
		rem := math.Floor(lim.TokensAt(now))
		if rem < 0 {
			rem = 0
		}
		h.Set("X-RateLimit-Remaining", strconv.Itoa(int(rem)))
		if !allowed {
			res := lim.ReserveN(now, 1)
			if res.OK() {
				d := res.DelayFrom(now)
				h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10))
				res.CancelAt(now)
			}
			http.Error(w, "rate limit exceeded", http.StatusTooManyRequests)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	addr := "127.0.0.1:" + port
	log.Printf("listening on %s rate=%v burst=%d perIP=%v", addr, float64(r), b, ls.perIP)
	log.Fatal(http.ListenAndServe(addr, nil))
}
