#!/usr/bin/env bash
# Proves a production install works: `npm pack`, install the tarball with --omit=dev into an
# empty folder, start `intake-sync sandbox` from that install, and drain it with
# `intake-sync run --once` into a fresh database (its seeded events quarantine as unmatched: no
# local prescriptions) (Postgres at 127.0.0.1:5432 when it answers,
# embedded PGlite otherwise). Exits non-zero on any failure; cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
db_name="check_pack_$$"
admin_url="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
sandbox_pid=""
use_postgres=""

cleanup() {
  if [[ -n "$sandbox_pid" ]]; then kill "$sandbox_pid" 2>/dev/null || true; wait "$sandbox_pid" 2>/dev/null || true; fi
  if [[ -n "$use_postgres" ]]; then psql "$admin_url" -qc "drop database if exists \"$db_name\" with (force)" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "check-pack: packing"
tarball=$(npm pack --silent --pack-destination "$work" | tail -1)

echo "check-pack: installing $tarball with --omit=dev into an empty folder"
mkdir "$work/install"
cd "$work/install"
npm init -y >/dev/null
npm install --omit=dev --no-audit --no-fund "$work/$tarball" >/dev/null
bin="$work/install/node_modules/.bin/intake-sync"

echo "check-pack: starting the sandbox from the installed package"
"$bin" sandbox --port 0 --seed-events 40 --reject-every 5 --json >"$work/sandbox.json" 2>"$work/sandbox.log" &
sandbox_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/sandbox.json" ]] && break; sleep 0.1; done
[[ -s "$work/sandbox.json" ]] || { cat "$work/sandbox.log"; echo "check-pack: the sandbox did not start" >&2; exit 1; }
read_json() { node -e "process.stdout.write(String(JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8').split('\n')[0])[process.argv[2]]))" "$work/sandbox.json" "$1"; }

if command -v psql >/dev/null && psql "$admin_url" -qc "create database \"$db_name\"" >/dev/null 2>&1; then
  use_postgres=1
  database_url=$(node -e "const u = new URL(process.argv[1]); u.pathname = '/' + process.argv[2]; process.stdout.write(u.toString())" "$admin_url" "$db_name")
  echo "check-pack: draining into Postgres database $db_name"
else
  database_url=""
  echo "check-pack: no Postgres at $admin_url; draining into embedded PGlite"
fi

echo "check-pack: run --once from the installed package"
INTAKE_API_BASE_URL=$(read_json base_url) INTAKE_API_KEY=$(read_json key) INTAKE_API_SECRET=$(read_json secret) \
  DATABASE_URL="$database_url" DATA_DIR="$work/data" LOG_LEVEL=warn \
  "$bin" run --once --json >"$work/summary.json"
node -e "const s = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')); if (!s.drained || !(s.events >= 40)) { console.error('check-pack: expected a drain of at least 40 events', s); process.exit(1); } console.log('check-pack: ok', JSON.stringify(s))" "$work/summary.json"
cd "$repo"
