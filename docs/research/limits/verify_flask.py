"""
Cross-check: real Flask-Limiter 4.1.1 (test client, headers enabled, memory://) vs server.decide(),
same controlled clock, same arrival sequence, for each strategy. Prints status + headers.
"""
import importlib
import os
import sys
import threading
import time
import types

T0 = 1699920000.0


class Clock:
    now = T0


time.time = lambda: Clock.now

import limits.storage.memory as memmod  # noqa: E402


class StubTimer:
    def __init__(self, *a):
        pass

    def start(self):
        pass

    def is_alive(self):
        return True


memmod.threading = types.SimpleNamespace(Timer=StubTimer, RLock=threading.RLock)

import flask  # noqa: E402
import flask_limiter  # noqa: E402
from flask_limiter import Limiter  # noqa: E402
from flask_limiter.util import get_remote_address  # noqa: E402

SEQ = [0.0, 0.4, 0.4, 0.9, 3.25, 9.999, 10.0, 10.4, 10.9, 12.0, 19.5, 20.4, 20.41, 31.0, 59.0, 60.0, 60.5]
mismatch = 0
for strategy in ("fixed-window", "moving-window", "sliding-window-counter"):
    for rate in ("3 per 10 seconds", "2/10 seconds;5/minute"):
        Clock.now = T0
        app = flask.Flask("t")
        limiter = Limiter(get_remote_address, app=app, storage_uri="memory://", strategy=strategy,
                          headers_enabled=True)

        @app.route("/")
        @limiter.limit(rate)
        def root():
            return "ok"

        os.environ.update(STRATEGY=strategy, RATE=rate)
        sys.modules.pop("server", None)
        server = importlib.import_module("server")
        client = app.test_client()
        print(f"\n=== {strategy} {rate!r} (flask_limiter {flask_limiter.__version__})")
        for off in SEQ:
            Clock.now = T0 + off
            r = client.get("/")
            fl = (r.status_code, {k: r.headers.get(k) for k in ("X-RateLimit-Limit", "X-RateLimit-Remaining",
                                                                 "X-RateLimit-Reset", "Retry-After")})
            sv = server.decide("127.0.0.1")
            same = fl == sv
            mismatch += not same
            print(f"t=+{off:<7} flask={fl[0]} L={fl[1]['X-RateLimit-Limit']} rem={fl[1]['X-RateLimit-Remaining']} "
                  f"reset=T0+{int(fl[1]['X-RateLimit-Reset']) - int(T0)} Retry-After={fl[1]['Retry-After']}"
                  f"   server.py {'SAME' if same else 'DIFF ' + repr(sv)}")
print("\nmismatches:", mismatch)
