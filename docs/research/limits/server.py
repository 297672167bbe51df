"""
Minimal stdlib HTTP server reproducing Flask-Limiter 4.1.1 (+ limits 5.8.0, memory://) decisions
and headers for ONE path.

Env vars:
  PORT      listen port on 127.0.0.1 (default 8080)
  STRATEGY  fixed-window | moving-window | sliding-window-counter   (default fixed-window,
            Flask-Limiter's default RATELIMIT_STRATEGY)
  RATE      limits rate string, e.g. "10/minute", "3 per 10 seconds", "1/second;5/minute" (default 10/minute)
  ROUTE     the limited path (default "/"); other paths answer 404 and are not limited

Behaviour mirrored from flask_limiter/_extension.py (4.1.1):
  * limits evaluated in sorted(limits, key=item) order (RateLimitItem.__lt__ compares
    GRANULARITY.seconds only, stable sort), each one hit()'s storage, stop at first breach
    (RATELIMIT_FAIL_ON_FIRST_BREACH default True)                          -> __evaluate_limits
  * header limit = the breached one, else the first evaluated (non-shared) one
  * headers (as with RATELIMIT_HEADERS_ENABLED=True), on 200 AND 429:
      X-RateLimit-Limit     = item.amount
      X-RateLimit-Remaining = get_window_stats(...).remaining
      X-RateLimit-Reset     = reset_at = int(reset_time + 1)               -> RequestLimit.reset_at
      Retry-After           = int(reset_at - time.time())                  -> __inject_headers
  * key = (client IP, scope) like get_remote_address + a per-route scope.
Single-threaded HTTPServer: decisions are made sequentially.
"""
from __future__ import annotations

import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

from limits import parse_many
from limits.storage import MemoryStorage
from limits.strategies import STRATEGIES

PORT = int(os.environ.get("PORT", "8080"))
STRATEGY = os.environ.get("STRATEGY", "fixed-window")
RATE = os.environ.get("RATE", "10/minute")
ROUTE = os.environ.get("ROUTE", "/")

if STRATEGY not in STRATEGIES:
    raise SystemExit(f"STRATEGY must be one of {sorted(STRATEGIES)}")

ITEMS = sorted(parse_many(RATE))  # same ordering Flask-Limiter uses (by granularity seconds)
storage = MemoryStorage()
limiter = STRATEGIES[STRATEGY](storage)


def decide(client: str) -> tuple[int, dict[str, str]]:
    """Returns (status, headers) exactly as Flask-Limiter would for one request."""
    args = [client, "root"]
    header_item, breached = None, False
    for item in ITEMS:
        if not limiter.hit(item, *args, cost=1):
            header_item, breached = item, True
            break  # fail_on_first_breach=True
    if header_item is None:
        header_item = ITEMS[0]
    stats = limiter.get_window_stats(header_item, *args)
    reset_at = int(stats.reset_time + 1)
    headers = {
        "X-RateLimit-Limit": str(header_item.amount),
        "X-RateLimit-Remaining": str(stats.remaining),
        "X-RateLimit-Reset": str(reset_at),
        "Retry-After": str(int(reset_at - time.time())),
    }
    return (429 if breached else 200), headers


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        if self.path.split("?", 1)[0] != ROUTE:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, headers = decide(self.client_address[0])
        body = (b"ok\n" if status == 200 else
                f"429 Too Many Requests: {RATE}\n".encode())
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt: str, *a: object) -> None:
        if os.environ.get("QUIET") is None:
            super().log_message(fmt, *a)


if __name__ == "__main__":
    srv = HTTPServer(("127.0.0.1", PORT), Handler)
    print(f"listening on 127.0.0.1:{PORT} route={ROUTE} strategy={STRATEGY} rate={RATE!r} items={ITEMS}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
