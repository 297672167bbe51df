"""A million nginx log lines (combined with $msec) for timing `ratelab fit`: Poisson
arrivals at 20 a second per client, each client behind its own token bucket of 10 a second
and a burst of 5. Usage: python3 docs/examples/fit/million.py CLIENTS SEED > LOG"""
import random, sys, time
random.seed(int(sys.argv[2]))
keys = int(sys.argv[1])
t = 1796000000.0
state = {}
out = sys.stdout
for i in range(1_000_000):
    t += random.expovariate(20.0 * keys)
    k = random.randrange(keys)
    tokens, last = state.get(k, (5.0, t))
    tokens = min(5.0, tokens + (t - last) * 10.0)
    ok = tokens >= 1.0
    if ok: tokens -= 1.0
    state[k] = (tokens, t)
    ms = int(t * 1000)
    out.write('10.0.0.%d - - [%s +0000] "GET / HTTP/1.1" %d 43 "-" "c%d" %d.%03d\n' % (k, time.strftime('%d/%b/%Y:%H:%M:%S', time.gmtime(ms // 1000)), 200 if ok else 429, k, ms // 1000, ms % 1000))
