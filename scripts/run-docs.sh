#!/usr/bin/env bash
# The executed docs (issue 27 §2): runs the shell blocks of README.md and docs/getting-started.md
# that are marked `<!-- ci: run -->` / `<!-- ci: background -->` / `<!-- ci: stop -->`
# (test/support/docs/doc-blocks.ts says how), in order, as a reader would, in a throwaway clone of
# this repository with databases, roles and ports of its own. Each step runs in a fresh bash that
# starts from the exported variables and directory the previous step left (a reader's terminal),
# with `set -eo pipefail` and a timeout; background steps (the daemon, the simulator) keep running
# in their own process group until a stop step sends them Ctrl-C (SIGINT), then SIGKILL after its
# grace. At the end (or on failure) every background group is killed and the databases and roles
# are dropped. The first failing step stops the run, naming its file and line.
# The last line is vitest-shaped ("Tests  N passed | M failed") for .ci/run's count().
# Placeholders the docs use and the run replaces (so two runs never share a name or a port):
#   vendor_dev, intake_sync_owner, intake_sync_runtime, vendor_app, ports 4010 and 8080.
# Usage: scripts/run-docs.sh [FILE...]   (default README.md docs/getting-started.md); KEEP_DOCS_RUN=1 keeps the clone.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
source scripts/ci-node.sh >/dev/null
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=(README.md docs/getting-started.md)
admin_url="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
started=$SECONDS

id="docsci_$$_$RANDOM"
work=$(mktemp -d "${TMPDIR:-/tmp}/run-docs.XXXXXX")
clone="$work/intake-sync"
# two free ports, distinct, picked as the tests pick theirs (test/support/faults/free-port.ts): below
# the kernel's ephemeral range, where no outgoing connection (npm, psql, the daemon's own pool) takes
# one before the daemon binds HEALTH_PORT. Asked of the kernel one after the other, the second was once
# the first again, and the daemon met the simulator.
free_ports() {
  node --import tsx --input-type=module -e "
    import { freePort } from '$repo/test/support/faults/free-port.ts';
    const first = await freePort();
    let second = await freePort();
    while (second === first) second = await freePort();
    console.log(first, second);"
}
read -r sandbox_port health_port < <(free_ports)
[[ -n "$sandbox_port" && -n "$health_port" && "$sandbox_port" != "$health_port" ]] || { echo "run-docs: no two free ports"; rm -rf "$work"; exit 1; }
subs=("vendor_dev=${id}_vendor_dev" "intake_sync_owner=${id}_owner" "intake_sync_runtime=${id}_runtime" "vendor_app=${id}_app"
  "4010=$sandbox_port" "8080=$health_port")

set -m # background steps get process groups of their own, and SIGINT is not ignored in them
bg_pids=()
bg_where=()
passed=0
failed=0
skipped=0

stop_background() { # $1: seconds to wait after SIGINT before SIGKILL
  local pid deadline=$((SECONDS + $1))
  for pid in "${bg_pids[@]}"; do kill -INT -- "-$pid" 2>/dev/null; done
  for pid in "${bg_pids[@]}"; do
    while kill -0 -- "-$pid" 2>/dev/null && [[ $SECONDS -lt $deadline ]]; do sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  bg_pids=()
  bg_where=()
}

cleanup() {
  stop_background 5
  local dbs
  dbs=$(psql "$admin_url" -Atqc "select datname from pg_database where datname like '${id}%'" 2>/dev/null)
  for db in $dbs; do psql "$admin_url" -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1; done
  for role in owner runtime app; do psql "$admin_url" -qc "drop role if exists \"${id}_$role\"" >/dev/null 2>&1; done
  if [[ -n "${KEEP_DOCS_RUN:-}" ]]; then echo "run-docs: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "run-docs: cloning $(git rev-parse --short HEAD) into $clone (names ${id}_*, ports $sandbox_port $health_port)"
git clone -q "$repo" "$clone" || { echo "run-docs: git clone failed"; exit 1; }
# the same dependencies as this checkout, hard-linked: the README's `npm install` then builds without the network
cp -al "$repo/node_modules" "$clone/node_modules" 2>/dev/null || cp -a "$repo/node_modules" "$clone/node_modules"

mkdir -p "$work/steps"
(cd "$clone" && node --import tsx "$repo/scripts/docs-steps.ts" "$work/steps" "${files[@]}") || {
  echo "      Tests  0 passed | 1 failed (1)"
  exit 1
}
sed_args=()
for sub in "${subs[@]}"; do sed_args+=(-e "s/\\b${sub%%=*}\\b/${sub#*=}/g"); done

# a reader's terminal: no deployment variables (the demo must look like one), node 24 on PATH
# (the machine's network settings pass: `npm install` may ask the registry)
passed_env=()
for name in NODE_EXTRA_CA_CERTS HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
  [[ -n "${!name:-}" ]] && passed_env+=("$name=${!name}")
done
env -i HOME="$HOME" PATH="$PATH" LANG=C.UTF-8 TERM=dumb USER="${USER:-ci}" HEALTH_PORT="$health_port" CI_DOCS_CWD="$clone" \
  "${passed_env[@]}" bash -c 'export -p' >"$work/state.sh"

report_failure() { # $1 where, $2 log, $3 why
  echo "run-docs: FAILED $1: $3"
  echo "--- output of $1 (last 40 lines)"
  tail -n 40 "$2"
  for i in "${!bg_pids[@]}"; do
    echo "--- background step ${bg_where[$i]} (last 15 lines)"
    tail -n 15 "$work/bg-${bg_pids[$i]}.log" 2>/dev/null
  done
}

status=0
while IFS=$'\t' read -r index kind timeout where script; do
  if [[ $status -ne 0 ]]; then skipped=$((skipped + 1)); continue; fi
  sed -i "${sed_args[@]}" "$script"
  log="$work/steps/$index.log"
  step_started=$SECONDS
  case "$kind" in
    run)
      cat >"$work/steps/$index.run" <<RUN
set -eo pipefail
source "$work/state.sh"
cd "\$CI_DOCS_CWD"
source "$script"
export CI_DOCS_CWD="\$PWD"
export -p >"$work/state.next"
RUN
      timeout --kill-after=5 "$timeout" env -i bash "$work/steps/$index.run" </dev/null >"$log" 2>&1
      code=$?
      if [[ $code -eq 0 ]]; then
        mv "$work/state.next" "$work/state.sh"
      elif [[ $code -eq 124 || $code -eq 137 ]]; then
        report_failure "$where" "$log" "timed out after ${timeout}s"
        status=1
      else
        report_failure "$where" "$log" "exit $code"
        status=1
      fi
      ;;
    background)
      printf 'source "%s"\ncd "$CI_DOCS_CWD"\nsource "%s"\n' "$work/state.sh" "$script" >"$work/steps/$index.run"
      env -i bash "$work/steps/$index.run" </dev/null >"$log" 2>&1 &
      bg_pids+=($!)
      bg_where+=("$where")
      ln -sf "$log" "$work/bg-$!.log"
      ;;
    stop)
      for i in "${!bg_pids[@]}"; do
        if ! kill -0 "${bg_pids[$i]}" 2>/dev/null; then
          report_failure "${bg_where[$i]}" "$work/bg-${bg_pids[$i]}.log" "the background step exited before $where stopped it"
          status=1
        fi
      done
      stop_background "$timeout"
      ;;
  esac
  if [[ $status -eq 0 ]]; then
    passed=$((passed + 1))
    echo "run-docs: ok $where ($kind, $((SECONDS - step_started))s)"
  else
    failed=$((failed + 1))
  fi
done <"$work/steps/steps.tsv"

total=$((passed + failed + skipped))
echo "run-docs: $((SECONDS - started))s in all"
if [[ $skipped -gt 0 ]]; then
  echo "      Tests  $passed passed | $failed failed | $skipped skipped ($total)"
else
  echo "      Tests  $passed passed | $failed failed ($total)"
fi
exit "$status"
