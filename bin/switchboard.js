#!/usr/bin/env node
// The `switchboard` command: runs the compiled CLI in dist/, with no loader. `npm ci`
// builds dist/ (the `prepare` script); after changing src/, `npm run build`.
let cli;
try {
  cli = await import('../dist/cli/main.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('dist/cli/main.js')) throw err;
  process.stderr.write('switchboard: dist/ is missing; run `npm run build` (or `npm ci`) in the package folder\n');
  process.exit(1);
}
await cli.runCli(process.argv);
