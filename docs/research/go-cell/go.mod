module example.com/gocell

go 1.19

require golang.org/x/time v0.3.0

// Debian bookworm's golang-golang-x-time-dev 0.3.0-1 (no network module proxy here)
replace golang.org/x/time => /usr/share/gocode/src/golang.org/x/time
