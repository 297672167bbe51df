#!/usr/bin/env python3
"""Replay the live request times through ./sim (the C arithmetic) and compare
decisions with what varnishd answered.  Two clocks are tried: the client's
send time (time.monotonic) and the server's VCL `now` (X-Now, 1 ms)."""
import json, subprocess, sys
D = "/tmp/research/varnish"
cases = {"plain_2rps": ("15", "10", "0", None), "plain_worst": ("15", "10", "0", None),
         "plain_worst2": ("15", "10", "0", None),
         "block_2rps": ("15", "10", "30", None), "block_burst_then_1rps": ("15", "10", "30", None),
         "rem_2rps": ("15", "10", "0", "rem")}

def maxwin(ts, W):
    best, j, span = 0, 0, None
    for i in range(len(ts)):
        while ts[j] <= ts[i] - W:
            j += 1
        if i - j + 1 > best:
            best, span = i - j + 1, (ts[j], ts[i])
    return best, span

for name, (L, P, B, mode) in cases.items():
    rows = json.load(open(f"{D}/live_{name}.json"))
    live = [r["status"] for r in rows]
    print(f"== {name}: is_denied(k, {L}, {P}s, {B}s){' + remaining() first' if mode else ''}")
    for clock in ("t_client", "x_now"):
        t0 = float(rows[0][clock])
        ts = [float(r[clock]) - t0 for r in rows]
        args = [f"{D}/sim", "replay", L, P, B] + ([mode] if mode else [])
        out = subprocess.run(args, input="\n".join(f"{t:.6f}" for t in ts) + "\n",
                             capture_output=True, text=True).stdout.split("\n")
        sim = [int(l.split()[1]) for l in out if l.strip()]
        diff = [i for i in range(len(live)) if live[i] != sim[i]]
        print(f"  clock={clock:8s} live 200s={live.count(200):3d} sim 200s={sim.count(200):3d} "
              f"mismatches={len(diff)} at {[(i, round(ts[i], 3), live[i], sim[i]) for i in diff]}")
    adm = [float(r["x_now"]) - float(rows[0]["x_now"]) for r in rows if r["status"] == 200]
    n, span = maxwin(adm, float(P))
    print(f"  live max 200s in any (t-{P}, t] window (server clock): {n}  span={span}")
    pat = " ".join(f"{float(r['t_client']):.2f}{'+' if r['status'] == 200 else 'x'}"
                   + (f"(RA={r['retry_after']},blk={r['x_blocked']})" if r['retry_after'] else "")
                   + (f"(rem={r['remaining']})" if r['remaining'] else "")
                   for r in rows)
    print("  live: " + pat)
rows = json.load(open(f"{D}/live_nullkey.json"))
print("== nullkey: statuses", [r["status"] for r in rows])
