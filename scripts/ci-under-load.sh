#!/usr/bin/env bash
# CI under load (issue 23): runs .ci/run with CPU burners beside it for the whole run, the way a
# shared or slower machine runs it, and says how long it took and how loaded the machine was.
#
#   bash scripts/ci-under-load.sh          two burners (CI_LOAD_BURNERS=N for another number)
#
# Each burner is a shell spinning on one core at normal priority; they start before .ci/run and are
# stopped when it ends, however it ends. The load average is sampled every minute (stderr). The last
# line is .ci/run's own: "N passed, N failed"; the exit status is .ci/run's.
set -uo pipefail
cd "$(dirname "$0")/.."

burners=${CI_LOAD_BURNERS:-2}
[[ $burners =~ ^[0-9]+$ && $burners -le 16 ]] || { echo "CI_LOAD_BURNERS must be a whole number from 0 to 16, got '$burners'" >&2; exit 2; }
log=$(mktemp -t ci-under-load.XXXXXX.log)
samples=$(mktemp -t ci-under-load.XXXXXX.load)
pids=()
stop() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done; wait "${pids[@]}" 2>/dev/null; rm -f "$samples"; }
trap stop EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 "$burners"); do
  (while :; do :; done) &
  pids+=($!)
done
(
  while :; do
    read -r one five fifteen _ </proc/loadavg
    echo "$one" >>"$samples"
    echo "ci-under-load: $(date +%T) load average $one $five $fifteen" >&2
    sleep 60
  done
) &
pids+=($!)

started=$(date +%s)
bash .ci/run 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
seconds=$(( $(date +%s) - started ))
mean=$(awk '{ s += $1; if ($1 > m) m = $1 } END { if (NR) printf "%.1f (peak %.1f, %d samples)", s / NR, m, NR }' "$samples")
echo "ci-under-load: .ci/run took $(( seconds / 60 )) min $(( seconds % 60 )) s beside $burners CPU burners; load average (1 min) mean $mean; log $log"
tail -1 "$log"
exit "$status"
