"""Python's limits for ratelab's probe tests, as PyPI installs it (limits==5.8.0, the version
in tests/probe/requirements.txt): its in-memory storage and its three strategies at 5 a
second, the rate string "5/second", each on its own path, keyed on the probe's X-Probe-Key
header so that every probe starts from an empty limiter:

  /fixed    FixedWindowRateLimiter          ratelab's limits:rate=5/second,strategy=fixed-window
  /moving   MovingWindowRateLimiter         ratelab's limits:rate=5/second,strategy=moving-window
  /counter  SlidingWindowCounterRateLimiter ratelab's limits:rate=5/second,strategy=sliding-window-counter

A request is admitted if hit() says so, and refused with 429 otherwise; /free is not limited.
Started by `cargo xtask test` with the port as its one argument; it prints "listening" once
it accepts connections. Decisions are taken one at a time, as one worker process would.
"""

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)

if len(sys.argv) != 2 or not sys.argv[1].isdigit():
    sys.exit("usage: python3 limits_server.py PORT")
PORT = int(sys.argv[1])
ITEM = parse("5/second")
storage = MemoryStorage()
LIMITERS = {
    "/fixed": FixedWindowRateLimiter(storage),
    "/moving": MovingWindowRateLimiter(storage),
    "/counter": SlidingWindowCounterRateLimiter(storage),
}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body are two writes: without this, Nagle's algorithm holds the
    # body until the client's delayed ACK, some 40 ms.
    disable_nagle_algorithm = True

    def do_GET(self):
        limiter = LIMITERS.get(self.path)
        if limiter is None and self.path != "/free":
            self.answer(404, b"not found\n")
            return
        if limiter is not None:
            key = self.headers.get("X-Probe-Key", "no-key")
            with LOCK:
                admitted = limiter.hit(ITEM, self.path, key)
            if not admitted:
                self.answer(429, b"Too Many Requests\n")
                return
        self.answer(200, b"ok\n")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print("listening", flush=True)
server.serve_forever()
