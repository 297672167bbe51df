#!/usr/bin/env python3
"""Send requests to the local varnishd on fixed schedules and record answers.

Usage: python3 client.py PORT OUTDIR [EXPERIMENT...]
(The first full run, whose results are in live_*.json, was made before the
warm-up request below was added; plain_worst2 was then run alone with it.)
Each experiment runs in its own thread with its own keep-alive connection and
its own bucket key (X-Key), so they do not interfere.  Bounded: at most ~80 s
and a few hundred requests, all to 127.0.0.1.
"""
import http.client
import json
import sys
import threading
import time
import uuid

PORT = int(sys.argv[1])
OUT = sys.argv[2]
RUN = uuid.uuid4().hex[:8]


def req(conn, path, key):
    conn.request("GET", path, headers={"X-Key": key})
    r = conn.getresponse()
    r.read()
    return r.status, {k.lower(): v for k, v in r.getheaders()}


def run(name, path, offsets):
    """offsets: send times in seconds relative to the experiment start."""
    key = f"{name}-{RUN}"
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    req(conn, "/nullkey", "warmup")  # open the TCP connection before t0
    rows = []
    t0 = time.monotonic()
    for off in offsets:
        while True:
            d = t0 + off - time.monotonic()
            if d <= 0:
                break
            time.sleep(min(d, 0.05) if d > 0.002 else 0)
        ts = time.monotonic() - t0
        st, h = req(conn, path, key)
        rows.append({"i": len(rows), "sched": round(off, 6), "t_client": round(ts, 6),
                     "status": st, "x_now": h.get("x-now"),
                     "retry_after": h.get("retry-after"),
                     "x_blocked": h.get("x-blocked"),
                     "remaining": h.get("x-ratelimit-remaining")})
    conn.close()
    with open(f"{OUT}/live_{name}.json", "w") as f:
        json.dump(rows, f, indent=0)
    ok = sum(1 for r in rows if r["status"] == 200)
    print(f"{name}: {len(rows)} requests, {ok} x 200, {len(rows) - ok} x 429", flush=True)


L, P = 15, 10.0
experiments = {
    # A: 2 req/s for 60 s against is_denied(k, 15, 10s)
    "plain_2rps": ("/plain", [i * 0.5 for i in range(120)]),
    # B: worst case: burst of 15 at t=0, then one each 0.68 s (> P/L = 0.6667)
    "plain_worst": ("/plain", [0.0] * 15 + [k * 0.68 for k in range(1, 21)]),
    # B2: same, connection warmed up, pacing counted from the end of the burst
    "plain_worst2": ("/plain", [0.0] * 15 + [0.03 + k * 0.68 for k in range(1, 21)]),
    # C: 2 req/s for 75 s against is_denied(k, 15, 10s, 30s)
    "block_2rps": ("/block", [i * 0.5 for i in range(150)]),
    # D: burst of 16 at t=0, then 1 req/s at 0.5, 1.5, ... 44.5 s against the block rule
    "block_burst_then_1rps": ("/block", [0.0] * 16 + [k + 0.5 for k in range(0, 45)]),
    # E: 2 req/s for 60 s, remaining() called before is_denied on every request
    "rem_2rps": ("/rem", [i * 0.5 for i in range(120)]),
    # F: NULL key
    "nullkey": ("/nullkey", [0.0, 0.1, 0.2]),
}

only = sys.argv[3:]  # optional: names of the experiments to run
threads = [threading.Thread(target=run, args=(n, p, o))
           for n, (p, o) in experiments.items() if not only or n in only]
for t in threads:
    t.start()
for t in threads:
    t.join()
