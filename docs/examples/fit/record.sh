#!/bin/sh
# Records the three logs beside this script from Debian's nginx 1.22 and HAProxy 2.6, each
# limiting one client, sent to by `ratelab probe` (a release build on the PATH):
#   nginx: limit_req_zone rate=10r/s, limit_req burst=5 nodelay, the combined log with $msec;
#   HAProxy: http_req_rate(10s), deny over 10, option httplog to stdout.
# Run from the repository root: sh docs/examples/fit/record.sh
set -e
dir=$(mktemp -d)
mkdir -p "$dir/tmp"
sed "s#PREFIX#$dir#g" docs/examples/fit/nginx.conf > "$dir/nginx.conf"
/usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" &
sleep 1
ratelab probe --target http://127.0.0.1:18391/api --traffic steady:load=2 --limit 10 --window 1s --duration 20s --seed 7
kill "$(cat "$dir/nginx.pid")"
cp "$dir/access.log" docs/examples/fit/nginx-msec.log
/usr/sbin/haproxy -f docs/examples/fit/haproxy.cfg -db > "$dir/haproxy.log" 2>&1 &
pid=$!
sleep 1
ratelab probe --target http://127.0.0.1:18392/ --traffic steady:load=2 --limit 10 --window 10s --duration 40s --seed 3
kill "$pid"
sleep 0.5
cp "$dir/haproxy.log" docs/examples/fit/haproxy.log
# nginx again, queueing: rate=4r/s, burst=8 without nodelay (nginx-queue.conf), so that each
# admitted request is logged when it is served, up to two seconds after it arrived.
sed "s#PREFIX#$dir#g" docs/examples/fit/nginx-queue.conf > "$dir/nginx-queue.conf"
rm -f "$dir/access.log"
/usr/sbin/nginx -c "$dir/nginx-queue.conf" -p "$dir" &
sleep 1
ratelab probe --target http://127.0.0.1:18393/api --traffic steady:load=2 --limit 4 --window 1s --duration 30s --seed 5
sleep 3
kill "$(cat "$dir/nginx.pid")"
cp "$dir/access.log" docs/examples/fit/nginx-queue.log
