#!/usr/bin/env bash
# The Nightride server under read load: wrk with 100 connections for 60 s on GET /me/ride with a
# valid token, against the server of the benchmarks' release build in a process of its own.
# Prints wrk's figures and the server's resident memory before, during and after.
#
#   cd Benchmarks && swift build -c release --product NightrideBenchmarks && Scripts/load-run.sh
#
# Needs wrk (apt-get install wrk) and curl. DURATION and CONNECTIONS override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${DURATION:-60s}"
connections="${CONNECTIONS:-100}"
binary=".build/release/NightrideBenchmarks"
[ -x "$binary" ] || { echo "build it first: swift build -c release --product NightrideBenchmarks" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

work="$(mktemp -d)"
trap 'exec 3>&- 2>/dev/null || true; kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
mkfifo "$work/input"
# The server process lives until its standard input closes: hold the fifo open on descriptor 3.
NIGHTRIDE_BENCHMARK_SERVER=1 "$binary" < "$work/input" > "$work/output" &
server=$!
exec 3> "$work/input"
for _ in $(seq 100); do grep -q '^PORT ' "$work/output" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/^PORT //p' "$work/output")"
[ -n "$port" ] || { echo "the server did not start" >&2; exit 1; }
url="http://127.0.0.1:$port"

rss() { awk '/^VmRSS/ { print $2 " kB" }' "/proc/$server/status"; }
token="$(curl -sf -X POST "$url/login" -H 'Content-Type: application/json' \
    -d '{"name":"loadtest","password":"load-test-pw"}' | sed -n 's/.*"token" *: *"\([^"]*\)".*/\1/p')"
[ -n "$token" ] || { echo "sign-up failed" >&2; exit 1; }
curl -sf "$url/me/ride" -H "Authorization: Bearer $token" > /dev/null

echo "server $url, pid $server; RSS before: $(rss)"
# A first short run warms the server up (allocator arenas, caches); the measured run follows.
wrk -t2 -c"$connections" -d5s -H "Authorization: Bearer $token" "$url/me/ride" > /dev/null
echo "RSS after a 5 s warm-up: $(rss)"
wrk -t2 -c"$connections" -d"$duration" --latency -H "Authorization: Bearer $token" "$url/me/ride"
echo "RSS after the run: $(rss)"
wrk -t2 -c"$connections" -d"$duration" -H "Authorization: Bearer $token" "$url/me/ride" | grep -E "Requests/sec|Non-2xx|Socket errors" || true
echo "RSS after a second run of the same length: $(rss)"
