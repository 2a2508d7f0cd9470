// Pins `switchboard todo push` (alias `add`)'s work-model flags: --priority, and --at
// (RFC 3339 time) or --in (a duration from now) for not_before, checked before any request.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pushBody, type PushOptions } from '../../src/cli/todo.js';
import { CliError, EXIT } from '../../src/cli/exit.js';

const base: PushOptions = { title: 'Review PR 7', queue: 'inbox' };
const NOW = Date.parse('2030-01-31T18:00:00Z');

async function usage(opts: PushOptions, message: RegExp): Promise<void> {
  await assert.rejects(
    () => pushBody(opts, NOW),
    (err: unknown) => err instanceof CliError && err.exitCode === EXIT.usage && message.test(err.message),
  );
}

test('--priority, --at and --in become priority and not_before in the body', async () => {
  assert.deepEqual(await pushBody({ ...base, priority: '-100' }, NOW), { ...body(), priority: -100 });
  assert.deepEqual(await pushBody({ ...base, priority: '+42' }, NOW), { ...body(), priority: 42 });
  assert.deepEqual(await pushBody({ ...base, at: '2030-02-01T09:30:00+01:00' }, NOW), {
    ...body(),
    not_before: '2030-02-01T08:30:00.000Z',
  });
  assert.deepEqual(await pushBody({ ...base, in: '2h' }, NOW), { ...body(), not_before: '2030-01-31T20:00:00.000Z' });
  assert.deepEqual(await pushBody({ ...base, in: '90s' }, NOW), { ...body(), not_before: '2030-01-31T18:01:30.000Z' });
});

test('a bad --priority, --at or --in, or --at with --in, is a usage error naming the flag', async () => {
  for (const bad of ['101', '-101', '1.5', 'high', ''])
    await usage({ ...base, priority: bad }, /^--priority: must be an integer from -100 to 100/);
  await usage({ ...base, at: 'tomorrow' }, /^--at: "tomorrow" is not a time/);
  await usage({ ...base, at: '2030-02-01T09:30:00' }, /^--at: /);
  for (const bad of ['2', 'soon', '-5m']) await usage({ ...base, in: bad }, /^--in: ".*" is not a duration/);
  await usage({ ...base, at: '2030-02-01T09:30:00Z', in: '2h' }, /^--at and --in: give one, not both/);
});

function body(): Record<string, unknown> {
  return { queue: 'inbox', title: 'Review PR 7' };
}
