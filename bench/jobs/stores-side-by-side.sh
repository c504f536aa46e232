#!/bin/bash
# bench/jobs/stores-side-by-side.sh: svc's memory and SQLite job stores up side by side, loaded
# in turn with wrk (POST /noop with `Prefer: wait=30`), so both see the same machine.
# bench/jobs/run.js measures the stores too, but its Node client tops out near 2,600 jobs/s
# here, below what either store does; wrk does not.
#
# Usage: bench/jobs/stores-side-by-side.sh [ROUNDS=5] [CONNECTIONS=16] [SECONDS=4]
# Needs wrk and the CLI bundle (`node scripts/bundle.js`). Prints jobs/s per round and the
# median of the per-round ratios.
set -euo pipefail
ROUNDS=${1:-5}; CONNECTIONS=${2:-16}; SECONDS_EACH=${3:-4}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
state=$(mktemp -d)
script="$state/noop.lua"
cat > "$script" <<'LUA'
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Prefer"] = "wait=30"
LUA
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start() {
  node "$root/bin/svc.js" start "$here/svc/service.py" --compute serverless --port "$1" --workers 1 \
    --queue-size 100000 --max-jobs 100000 --job-store "$2" > "$state/$1.log" 2>&1 &
  echo $!
}
memory_port=$(free_port); memory=$(start "$memory_port" memory)
sqlite_port=$(free_port); sqlite=$(start "$sqlite_port" "sqlite:$state/jobs.sqlite")
trap 'kill $memory $sqlite 2>/dev/null; wait 2>/dev/null; rm -rf "$state"' EXIT
for port in "$memory_port" "$sqlite_port"; do
  for _ in $(seq 100); do curl -sf "localhost:$port/health" | grep -q READY && break; sleep 0.2; done
done
echo "svc job stores side by side: wrk -t1 -c$CONNECTIONS -d${SECONDS_EACH}s, POST /noop, Prefer: wait=30, $ROUNDS rounds"
ratios=()
for round in $(seq "$ROUNDS"); do
  rates=()
  for port in "$memory_port" "$sqlite_port"; do
    rates+=("$(wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" -s "$script" "http://127.0.0.1:$port/noop" | awk '/Requests\/sec/{print $2}')")
  done
  ratio=$(python3 -c "print(f'{${rates[1]} / ${rates[0]}:.2f}')")
  ratios+=("$ratio")
  echo "round $round: memory ${rates[0]} jobs/s, sqlite ${rates[1]} jobs/s, sqlite / memory ${ratio}x"
done
echo "sqlite / memory, median of the rounds: $(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c 'import sys, statistics; print(statistics.median(float(line) for line in sys.stdin))')x"
