#!/usr/bin/env python3
"""Greedy client against a live redis-cell: calls CL.THROTTLE key b n P in a
loop (optional sleep between calls) for `dur` seconds and reports the largest
number of admissions in any trailing window (t-W, t], W = P seconds, using the
client-side send timestamps (time.time_ns()).
Usage: greedy.py PORT b n P dur_s sleep_s"""
import socket, sys, time
port, b, n, P, dur, slp = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
s = socket.create_connection(("127.0.0.1", port)); f = s.makefile("rb")
def cmd(*a):
    out = b"*%d\r\n" % len(a)
    for x in a:
        x = str(x).encode(); out += b"$%d\r\n%s\r\n" % (len(x), x)
    s.sendall(out)
    line = f.readline()
    assert line[:1] == b"*", line
    return [int(f.readline()[1:]) for _ in range(int(line[1:]))]
key = "greedy:%d" % time.time_ns()
adm, calls = [], 0
end = time.time_ns() + int(dur * 1e9)
while time.time_ns() < end:
    t = time.time_ns(); r = cmd("CL.THROTTLE", key, b, n, P); calls += 1
    if r[0] == 0: adm.append(t)
    if slp: time.sleep(slp)
W = P * 10**9; best, bt, j = 0, 0, 0
for i in range(len(adm)):
    while adm[j] <= adm[i] - W: j += 1
    if i - j + 1 > best: best, bt = i - j + 1, adm[i]
print("CL.THROTTLE k %d %d %d: %d calls, %d admitted in %.1fs; max in any (t-%ds, t] = %d (window ending %.6fs after first admission)" % (b, n, P, calls, len(adm), dur, P, best, (bt - adm[0]) / 1e9))
print("  first admissions (s after first):", ["%.6f" % ((x - adm[0]) / 1e9) for x in adm[:10]])
