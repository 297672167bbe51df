#!/usr/bin/env python3
"""Measure redis-cell 0.2.2 CL.THROTTLE timing. Minimal RESP client (no deps).
Usage: measure.py PORT"""
import socket, sys, time

port = int(sys.argv[1]) if len(sys.argv) > 1 else 6399
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")

def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    s.sendall(out)
    return read()

def read():
    line = f.readline().rstrip(b"\r\n")
    t, rest = line[:1], line[1:]
    if t == b"*":
        return [read() for _ in range(int(rest))]
    if t == b":":
        return int(rest)
    if t == b"$":
        n = int(rest)
        if n < 0:
            return None
        d = f.read(n + 2)[:-2]
        return d.decode()
    if t == b"+":
        return rest.decode()
    raise RuntimeError(line)

def throttle(key, *a):
    t = time.time()
    r = cmd("CL.THROTTLE", key, *a)
    tat = cmd("GET", key)
    pttl = cmd("PTTL", key)
    return t, r, tat, pttl

def show(t0, label, t, r, tat, pttl):
    tat_rel = "" if tat is None else "%+.6f" % ((int(tat) / 1e9) - t0)
    print("%-28s t=%+.6fs reply=%s  tat-t0=%s pttl=%s" % (label, t - t0, r, tat_rel, pttl))

key = "measure:%d" % time.time_ns()
print("# CL.THROTTLE %s 3 30 60   (T = 60s/30 = 2s, DVT = 2s*(3+1) = 8s, limit 4)" % key)
t0 = time.time()
for i in range(5):
    show(t0, "burst #%d" % (i + 1), *throttle(key, 3, 30, 60))
# the 5th was limited: wait exactly retry_after seconds and retry
t, r, tat, pttl = throttle(key, 3, 30, 60)
show(t0, "6th (immediately)", t, r, tat, pttl)
ra = r[3]
time.sleep(ra)
t, r, tat, pttl = throttle(key, 3, 30, 60)
show(t0, "after sleeping retry_after=%ds" % ra, t, r, tat, pttl)
# now poll every 50 ms until admitted
while True:
    time.sleep(0.05)
    t, r, tat, pttl = throttle(key, 3, 30, 60)
    if r[0] == 0:
        show(t0, "first admission (poll 50ms)", t, r, tat, pttl)
        break
    last = (t, r, tat, pttl)
show(t0, "last refusal before it", *last)
