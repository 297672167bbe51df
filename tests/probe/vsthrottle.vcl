vcl 4.1;

# Varnish's vsthrottle (Debian's varnish-modules) for ratelab's probe tests, as its manual
# sets it up: /limited denies a key over 5 requests in 1 s, vsthrottle.is_denied(KEY, 5, 1s),
# that is ratelab's vsthrottle:limit=5,period=1s, keyed on the probe's X-Probe-Key header so
# that every probe starts from a full bucket. Every answer is synthetic: no backend. Started
# by `cargo xtask test` (varnishd -F, PORT filled in).

import vsthrottle;

backend default none;

sub vcl_recv {
	if (req.url == "/limited") {
		if (vsthrottle.is_denied("limited:" + req.http.X-Probe-Key, 5, 1s)) {
			return (synth(429, "Too Many Requests"));
		}
		return (synth(200, "OK"));
	}
	if (req.url == "/free") {
		return (synth(200, "OK"));
	}
	return (synth(404, "Not Found"));
}

sub vcl_synth {
	set resp.http.Content-Type = "text/plain";
	synthetic(resp.status + " " + resp.reason + {"
"});
	return (deliver);
}
