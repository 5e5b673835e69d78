#!/usr/bin/env bash
# Fails when src/db/schema/ has changes that no committed migration in drizzle/ covers:
# runs drizzle-kit generate against a scratch copy of drizzle/ and checks that it wrote nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.drizzle-check
rm -rf "$scratch"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch"
cp -r drizzle "$scratch/drizzle"
# drizzle-kit wants a relative `out`; a plain object config needs no import resolution
echo "export default { dialect: 'postgresql', schema: './src/db/schema', out: './$scratch/drizzle' };" >"$scratch/drizzle.config.ts"
if ! npx drizzle-kit generate --config "$scratch/drizzle.config.ts" --name schema_drift >"$scratch/out.txt" 2>&1; then
  cat "$scratch/out.txt"
  echo "drizzle-kit generate failed" >&2
  exit 1
fi
if ls "$scratch"/drizzle/*_schema_drift.sql >/dev/null 2>&1; then
  cat "$scratch"/drizzle/*_schema_drift.sql
  echo
  echo "drizzle-kit generate would write a new migration: run 'npx drizzle-kit generate' and commit it" >&2
  exit 1
fi
echo "migrations: up to date with src/db/schema/"
