"""Float edge checks for the sliding-window-counter arithmetic (limits 5.8.0 memory.py / base.py)."""
import math, random
random.seed(1)
T = 1699920000.0
bad_keys = 0; n = 0
for W in (1, 2, 10, 60, 120, 3600, 86400, 2592000, 31104000):
    for k in range(20000):
        base = max(int(T / W) + random.randint(-1000, 1000), 2) * W
        for d in (0.0, 5e-7, -5e-7, 2.4e-7, -2.4e-7, 1e-9, -1e-9):
            at = base + d
            if at == base and d != 0: pass
            n += 1
            if int((at - W) / W) != int(at / W) - 1:
                bad_keys += 1
                if bad_keys <= 3: print("key mismatch", W, repr(at), int((at - W) / W), int(at / W))
print(f"sliding_window_keys: previous != current-1 in {bad_keys}/{n} boundary samples")

# second check in acquire_sliding_window_entry: floor(y+c)+a<=L but floor(y+c+a)>L  (y = p*ttl/W)
found = 0; n = 0
for W in (1, 10, 60, 3600):
    for p in range(1, 60):
        for j in range(1, p):
            # instants where p*ttl/W is (almost) integer: ttl = j*W/p
            center = (int(T / W) + 1) * W - j * W / p
            for u in range(-8, 9):
                now = center + u * 2.384185791015625e-07
                ttl = (1 - (((now - W) / W) % 1)) * W
                y = p * ttl / W
                for c in range(0, 40):
                    n += 1
                    if math.floor(y + c) + 1 <= 10**9 and math.floor(p * ttl / W + (c + 1)) > math.floor(y + c) + 1:
                        found += 1
                        if found <= 3: print("double-check divergence", W, p, repr(now), repr(y), c)
print(f"floor(y+c+1) > floor(y+c)+1 (would trigger the decr/reject path single-threaded): {found}/{n}")
