// Go's golang.org/x/time/rate for ratelab's probe tests, as its documentation sets it up and
// as Debian installs it (golang-go, golang-golang-x-time-dev): one rate.Limiter per value of
// the probe's X-Probe-Key header (so every probe starts from a full bucket), r = 5 a second
// and b = 3, that is ratelab's go-rate:r=5,b=3. A request is admitted if Allow() says so;
// refused, it gets 429 and Retry-After = ceil(ReserveN(now, 1).DelayFrom(now)) seconds (the
// reservation cancelled), as echo's rate-limiter middleware sends. /free is not limited.
// Started by `cargo xtask test` with the port as its one argument; it prints "listening"
// once it accepts connections. Built with: GO111MODULE=off GOPATH=/usr/share/gocode go build.
package main

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go-rate PORT")
		os.Exit(2)
	}
	port, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: go-rate PORT")
		os.Exit(2)
	}
	var mu sync.Mutex
	limiters := map[string]*rate.Limiter{}
	http.HandleFunc("/limited", func(w http.ResponseWriter, req *http.Request) {
		key := req.Header.Get("X-Probe-Key")
		mu.Lock()
		lim, ok := limiters[key]
		if !ok {
			lim = rate.NewLimiter(5, 3)
			limiters[key] = lim
		}
		mu.Unlock()
		now := time.Now()
		if lim.AllowN(now, 1) {
			fmt.Fprintln(w, "ok")
			return
		}
		res := lim.ReserveN(now, 1)
		if res.OK() {
			wait := res.DelayFrom(now)
			res.CancelAt(now)
			w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
		}
		http.Error(w, "rate limit exceeded", http.StatusTooManyRequests)
	})
	http.HandleFunc("/free", func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("listening")
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
