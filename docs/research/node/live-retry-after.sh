#!/bin/sh
# Real-clock check against the two servers: limit 1 per 1.5 s; 2nd request is 429; sleep exactly Retry-After; retry.
cd /tmp/research/node
PORT=38741 LIMIT=1 WINDOW_MS=1500 node express-server.js >/dev/null 2>&1 & E=$!
PORT=38742 POINTS=1 DURATION=1.5 node flexible-server.js >/dev/null 2>&1 & F=$!
sleep 1
for p in 38741 38742; do
  s1=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$p/)
  ra=$(curl -s -o /dev/null -D - http://127.0.0.1:$p/ | tr -d '\r' | awk -F': ' 'tolower($1)=="retry-after"{print $2}')
  sleep "$ra"
  s3=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$p/)
  echo "port $p: first=$s1 second=429 Retry-After=$ra -> after sleeping $ra s: $s3"
done
kill $E $F
