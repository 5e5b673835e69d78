#!/usr/bin/env bash
# Fails when `npm install` would change package-lock.json (a dependency or the engines field edited
# in package.json without the lockfile): resolves the lockfile again from package.json in a scratch
# copy, without installing anything, and compares.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp package.json package-lock.json "$scratch/"
(cd "$scratch" && npm install --package-lock-only --ignore-scripts --no-audit --no-fund >/dev/null 2>&1)
if ! diff -u package-lock.json "$scratch/package-lock.json"; then
  echo "package-lock.json does not match package.json: run 'npm install' and commit package-lock.json" >&2
  exit 1
fi
echo "lockfile: matches package.json"
