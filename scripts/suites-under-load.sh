#!/usr/bin/env bash
# The unit and SQL suites, RUNS times back to back, with CPU burners beside them the whole time
# (issue 32 §7): a test that races the clock shows up here long before it turns CI red.
#
#   bash scripts/suites-under-load.sh            5 runs, 4 burners
#   RUNS=2 LOAD_BURNERS=2 bash scripts/suites-under-load.sh
#
# The unit and SQL suites are every test file but the process-level ones (test/process, test/deploy,
# test/faults, test/package, test/cli, test/docs, test/bench), as test/layout/no-clock-races.test.ts
# draws the line. Each run's totals and time are printed; the last line is "N passed, N failed" over
# all runs, and the exit status is 1 when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
burners=${LOAD_BURNERS:-4}
[[ $runs =~ ^[0-9]+$ && $runs -ge 1 && $runs -le 50 ]] || { echo "RUNS must be a whole number from 1 to 50, got '$runs'" >&2; exit 2; }
[[ $burners =~ ^[0-9]+$ && $burners -le 16 ]] || { echo "LOAD_BURNERS must be a whole number from 0 to 16, got '$burners'" >&2; exit 2; }

pids=()
stop() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done; wait "${pids[@]}" 2>/dev/null; }
trap stop EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 "$burners"); do
  (while :; do :; done) &
  pids+=($!)
done

excludes=()
for suite in process deploy faults package cli docs bench; do excludes+=(--exclude "test/$suite/**"); done

passed=0
failed=0
status=0
log=$(mktemp -t suites-under-load.XXXXXX.log)
for run in $(seq 1 "$runs"); do
  started=$(date +%s)
  npx vitest run "${excludes[@]}" >"$log" 2>&1
  code=$?
  totals=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^\s+Tests\s' | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$totals" | grep -oE '[0-9]+' || echo 0)
  f=$(grep -oE '[0-9]+ failed' <<<"$totals" | grep -oE '[0-9]+' || echo 0)
  [[ $code -ne 0 && $f -eq 0 ]] && f=1 # a run that failed outside any test still counts
  passed=$((passed + p))
  failed=$((failed + f))
  [[ $code -eq 0 ]] || status=1
  read -r load _ </proc/loadavg
  echo "run $run/$runs: ${p} passed, ${f} failed in $(( $(date +%s) - started )) s (load average $load, $burners burners)"
  [[ $code -eq 0 ]] || sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '(FAIL|×) ' | sort -u | head -20
done
rm -f "$log"
echo "$passed passed, $failed failed"
exit $status
