// Writes build-info.json (commit and time) for /version. Runs on `npm ci`/`npm install`
// through the `prepare` script; outside a git checkout the commit is "unknown".
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  // Not a checkout (an installed tarball): keep "unknown".
}
writeFileSync(
  new URL('../build-info.json', import.meta.url),
  JSON.stringify({ commit, build_time: new Date().toISOString() }) + '\n',
);
