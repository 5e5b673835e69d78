#!/usr/bin/env bash
# Fails when src/db/schema.ts has changes that no committed migration in drizzle/ covers:
# runs drizzle-kit generate against a copy of drizzle/ and checks that it wrote nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r drizzle "$tmp/drizzle"
cat > "$tmp/drizzle.config.ts" <<CFG
export default { dialect: 'postgresql', schema: '$PWD/src/db/schema.ts', out: '$tmp/drizzle' };
CFG
if ! npx drizzle-kit generate --config "$tmp/drizzle.config.ts" --name schema_drift >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"; echo "drizzle-kit generate failed" >&2; exit 1
fi
if ls "$tmp"/drizzle/*_schema_drift.sql >/dev/null 2>&1; then
  cat "$tmp/out.txt"
  echo "drizzle-kit generate would write a new migration: run 'npx drizzle-kit generate' and commit it" >&2
  exit 1
fi
echo "migrations: up to date with src/db/schema.ts"
