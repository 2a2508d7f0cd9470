// Pins the CLI's lazy start-up: the stubs in COMMAND_GROUPS list each command exactly as
// its module registers it (so the root help is the same whichever group is loaded), and
// `version` and `--help` import no command module (none of the server, the MCP SDK or
// the HTTP client), which is what keeps them near bare node's start-up time.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { Help } from 'commander';
import { buildProgram, COMMAND_GROUPS } from '../../src/cli/main.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');
const TRACE = fileURLToPath(new URL('./fixtures/trace-imports.mjs', import.meta.url));

const listed = COMMAND_GROUPS.flatMap((g) => g.commands.map((c) => c.term.replace(/ .*/, '')));
const argv = (...words: string[]) => ['node', 'switchboard', ...words];

test('each group, loaded, registers the commands its stubs list, with the same terms and descriptions', async () => {
  for (const group of COMMAND_GROUPS) {
    const first = group.commands[0]?.term.replace(/ .*/, '') ?? '';
    const program = await buildProgram(argv(first, '--help'));
    assert.deepEqual(
      program.commands.map((c) => c.name()),
      [...listed, 'version'],
      `loading ${first}'s group registers no command the table lacks`,
    );
    for (const { term, description } of group.commands) {
      const real = program.commands.find((c) => c.name() === term.replace(/ .*/, ''));
      assert.ok(real);
      assert.equal(new Help().subcommandTerm(real), term);
      assert.equal(real.description(), description);
    }
  }
});

test('the root help is the same with every group a stub as with one loaded', async () => {
  const stubs = (await buildProgram(argv('--help'))).helpInformation();
  for (const name of ['serve', 'todo', 'doctor']) {
    assert.equal((await buildProgram(argv(name))).helpInformation(), stubs, name);
  }
});

test('version and --help import no command module', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-lazy-'));
  try {
    for (const args of [['version'], ['--help'], ['help']]) {
      const file = join(dir, `${args.join('')}.txt`);
      const child = spawn(process.execPath, ['--import', TRACE, BIN, ...args], {
        env: { ...process.env, SWITCHBOARD_TRACE_IMPORTS: file },
        stdio: 'ignore',
      });
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0);
      const modules = (await readFile(file, 'utf8'))
        .split('\n')
        .filter((url) => url.startsWith('file:'))
        .map((url) => url.replace(`file://${ROOT}`, ''));
      assert.ok(modules.includes('dist/cli/main.js'), `the trace saw the CLI load: ${modules.join(' ')}`);
      assert.deepEqual(
        modules.filter((m) => !/^(bin\/switchboard\.js|dist\/cli\/(main|exit)\.js|dist\/version\.js)$/.test(m)),
        modules.filter((m) => m.startsWith('node_modules/commander/')),
        `switchboard ${args.join(' ')} loads only the CLI's entry, the version and commander`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
