#!/usr/bin/env bash
# Runs the test suite N times with two CPU-burning processes beside it, and prints pass or fail per
# run with the load average: a suite that waits on readiness, not on real-time windows, stays
# green on a loaded machine.
#
#   scripts/stress-suite.sh [runs] [vitest arguments…]
#
#   scripts/stress-suite.sh            # the whole suite (vitest run), 5 times
#   scripts/stress-suite.sh 3 test/runs
#
# Builds once first (the black-box tests start the daemon from dist/). Each run's output is kept
# in a folder printed at the end; a failed run lists the test files that failed.
set -euo pipefail

runs="${1:-5}"
shift || true
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/stress-suite.sh [runs] [vitest arguments…]" >&2
  exit 2
fi
burners=2
cd "$(dirname "$0")/.."

logs="$(mktemp -d "${TMPDIR:-/tmp}/agentd-stress-XXXXXX")"
pids=()
stop_all() {
  # Only what this script started, by pid.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap stop_all EXIT INT TERM

echo "building once: npm run build"
npm run build >"$logs/build.log" 2>&1 || {
  echo "build failed: $logs/build.log" >&2
  exit 1
}

# One busy loop per burner: each keeps one core busy for as long as the runs last.
for _ in $(seq "$burners"); do
  node -e "for (;;) {}" &
  pids+=("$!")
done
# The 1-minute load average every 2 s, for the highest one seen during each run.
(while :; do cut -d' ' -f1 /proc/loadavg >>"$logs/load-samples"; sleep 2; done) &
pids+=("$!")

echo "$runs runs of: vitest run $* (with $burners CPU burners; $(nproc) cores)"
passed=0
for run in $(seq "$runs"); do
  : >"$logs/load-samples"
  started=$(date +%s)
  if npx vitest run "$@" >"$logs/run-$run.log" 2>&1; then
    verdict="pass"
    passed=$((passed + 1))
  else
    verdict="FAIL"
  fi
  seconds=$(($(date +%s) - started))
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  highest=$(sort -g "$logs/load-samples" | tail -n 1)
  summary=$(sed -E 's/\x1b\[[0-9;]*m//g' "$logs/run-$run.log" | grep -E "^ +Tests " | sed -E 's/^ +//' | tail -n 1 || true)
  echo "run $run/$runs: $verdict in ${seconds}s; load average (1/5/15 min) $load, highest 1-min seen ${highest:-?}; $summary"
  if [[ "$verdict" == "FAIL" ]]; then
    sed -E 's/\x1b\[[0-9;]*m//g' "$logs/run-$run.log" | grep -E "^ *(FAIL|×) " | sort -u | head -n 20 | sed 's/^/    /' || true
  fi
done
stop_all
echo "passed $passed of $runs; output of each run in $logs"
[[ "$passed" -eq "$runs" ]]
