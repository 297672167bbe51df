package main

import (
	"time"
	"golang.org/x/time/rate"
)

// ten a second, bursts of five
var limiter = rate.NewLimiter(rate.Every(100*time.Millisecond), 5)
