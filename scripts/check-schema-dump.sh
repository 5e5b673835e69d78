#!/usr/bin/env bash
# Fails when sql/current-schema.sql is not what a fresh `migrate` leaves: dumps a freshly migrated
# scratch database into a temporary file (scripts/db-dump.ts) and diffs it with the committed one.
set -euo pipefail
cd "$(dirname "$0")/.."
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
node --import tsx scripts/db-dump.ts --out "$fresh"
if ! diff -u sql/current-schema.sql "$fresh"; then
  echo
  echo "sql/current-schema.sql differs from a fresh dump of the migrated schema: run npm run db:dump and commit it" >&2
  exit 1
fi
echo "schema dump: sql/current-schema.sql is current"
