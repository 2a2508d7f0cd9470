// initdb failing under the embedded default: the start rejects with initdb's own words
// and the data dir, and leaves no half-made cluster behind.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startEmbedded } from '../../src/db/embedded.js';

test('initdb refusing the cluster folder fails the start with its reason, and the folder is removed', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-initdb-'));
  after(() => rm(dataDir, { recursive: true, force: true }));
  // As root the server runs as the postgres user, which must be able to enter the folder.
  await chmod(dataDir, 0o755);
  // A cluster folder holding something that is not a cluster: initdb will not touch it.
  await mkdir(join(dataDir, 'pg'));
  await writeFile(join(dataDir, 'pg', 'stray.txt'), 'not a cluster\n');
  await chmod(join(dataDir, 'pg'), 0o777);

  const err = await startEmbedded({ dataDir }).then(
    () => assert.fail('the start should fail'),
    (e: Error) => e,
  );
  assert.match(err.message, new RegExp(`^initdb failed in ${join(dataDir, 'pg')}: `));
  assert.match(err.message, /exists but is not empty/);
  assert.doesNotMatch(err.message, /removing the half-made cluster failed/);
  assert.equal(existsSync(join(dataDir, 'pg')), false, 'no half-made cluster is left');
  // The lock is released: the next start is not refused as busy.
  assert.equal(existsSync(join(dataDir, 'switchboard.pid')), false);
});
