// Pins the README's "The CLI on your PATH": a global install of the clone (what `npm link`
// does) puts `switchboard` in the prefix's bin folder, and from that PATH alone the
// command runs — the command the bridge's `.mcp.json` names (src/domain/guidance.ts).
// npm installs a folder as a link, so nothing is fetched; --ignore-scripts keeps it from
// rebuilding dist/ under the other test files that run it.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { connectGuidance } from '../../src/domain/guidance.js';
import { versionInfo } from '../../src/version.js';
import { ROOT } from '../helpers/cli.js';

const run = promisify(execFile);
const prefix = await mkdtemp(join(tmpdir(), 'switchboard-global-'));
after(() => rm(prefix, { recursive: true, force: true }));

test('npm install --global of the clone puts a working `switchboard` on PATH, as .mcp.json expects', async () => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  await run(
    npm,
    ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--offline', '--ignore-scripts', ROOT],
    {
      cwd: prefix,
      timeout: 120_000,
    },
  );
  const bin = join(prefix, 'bin', 'switchboard');
  assert.match(await readlink(bin), /bin\/switchboard\.js$/);

  const path = `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`;
  const env = { ...process.env, PATH: path };
  const { stdout } = await run('switchboard', ['version', '--json'], { env, cwd: prefix });
  assert.deepEqual(JSON.parse(stdout), versionInfo());

  const guide = connectGuidance('http://127.0.0.1:8080', 'reviewer-x1');
  const server = Object.values(guide.bridge.mcp_json.mcpServers)[0]!;
  assert.equal(server.command, 'switchboard');
  const help = await run(server.command, [server.args[0]!, '--help'], { env, cwd: prefix });
  assert.match(help.stdout, /Usage: switchboard bridge/);
});
