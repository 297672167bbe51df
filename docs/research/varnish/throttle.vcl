vcl 4.1;

# Research VCL: every answer is synthetic; no backend is ever contacted.
# Paths:
#   /plain  -> vsthrottle.is_denied(KEY, 15, 10s)         (no block)
#   /block  -> vsthrottle.is_denied(KEY, 15, 10s, 30s)    (block 30s) + Retry-After
#   /rem    -> like /plain but calls vsthrottle.remaining() BEFORE is_denied
#   /zero   -> vsthrottle.is_denied(KEY, 15, 0s)         (degenerate period)
#   /nullkey-> is_denied() with an unset header as key (NULL string)
# KEY = "<path>:" + (req.http.X-Key or client.identity), so every experiment can
# use a fresh bucket by sending a new X-Key.

import vsthrottle;
import std;

backend default none;

sub vcl_recv {
	if (req.http.X-Key) {
		set req.http.X-K = req.http.X-Key;
	} else {
		set req.http.X-K = client.identity;
	}
	# server-side request time (VCL `now` is real time, 1 ms resolution here)
	set req.http.X-Now = std.real(time = now);

	if (req.url ~ "^/plain") {
		if (vsthrottle.is_denied("plain:" + req.http.X-K, 15, 10s)) {
			return (synth(429, "Too Many Requests"));
		}
		return (synth(200, "OK"));
	}
	if (req.url ~ "^/block") {
		if (vsthrottle.is_denied("block:" + req.http.X-K, 15, 10s, 30s)) {
			# blocked() gives the time left of a 'block' as a DURATION;
			# Retry-After wants whole seconds, so round up.
			set req.http.X-Blocked = vsthrottle.blocked("block:" + req.http.X-K, 15, 10s, 30s);
			set req.http.X-Retry-After = std.integer(real = std.round(
			    std.real(duration = vsthrottle.blocked("block:" + req.http.X-K, 15, 10s, 30s)) + 0.499));
			return (synth(429, "Too Many Requests"));
		}
		return (synth(200, "OK"));
	}
	if (req.url ~ "^/rem") {
		set req.http.X-Remaining = vsthrottle.remaining("rem:" + req.http.X-K, 15, 10s);
		if (vsthrottle.is_denied("rem:" + req.http.X-K, 15, 10s)) {
			return (synth(429, "Too Many Requests"));
		}
		return (synth(200, "OK"));
	}
	if (req.url ~ "^/zero") {
		# degenerate period 0s (edge-case probe)
		if (vsthrottle.is_denied("zero:" + req.http.X-K, 15, 0s)) {
			return (synth(429, "Too Many Requests"));
		}
		return (synth(200, "OK"));
	}
	if (req.url ~ "^/nullkey") {
		if (vsthrottle.is_denied(req.http.X-Does-Not-Exist, 15, 10s)) {
			return (synth(429, "Too Many Requests"));
		}
		return (synth(200, "OK"));
	}
	return (synth(404, "Not Found"));
}

sub vcl_synth {
	set resp.http.X-Now = req.http.X-Now;
	if (req.http.X-Remaining) {
		set resp.http.X-RateLimit-Remaining = req.http.X-Remaining;
	}
	if (resp.status == 429 && req.http.X-Retry-After) {
		set resp.http.Retry-After = req.http.X-Retry-After;
		set resp.http.X-Blocked = req.http.X-Blocked;
	}
	set resp.http.Content-Type = "text/plain";
	synthetic(resp.status + " " + resp.reason + {"
"});
	return (deliver);
}
