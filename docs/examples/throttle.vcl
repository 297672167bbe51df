vcl 4.1;
import vsthrottle;

sub vcl_recv {
    # 15 requests per 10 seconds per client
    if (vsthrottle.is_denied(client.identity, 15, 10s)) {
        return (synth(429, "Too Many Requests"));
    }
}
