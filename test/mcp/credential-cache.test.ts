// Pins the credential cache as an object its owner holds (endpoints/credentials.ts): two
// caches share nothing — a reuse, a forget or an eviction in one is not seen by the
// other — an entry is reused for the cache's window, forgetting an endpoint or one of its
// sessions drops only those answers, and the entry bound evicts the oldest first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Queryable } from '../../src/db/pool.js';
import {
  CREDENTIAL_CACHE_ENTRIES,
  CREDENTIAL_REUSE_MS,
  CredentialCache,
  type Endpoint,
} from '../../src/endpoints/credentials.js';
import { newSecret } from '../../src/identity/secrets.js';

/** A stand-in database: every credential names the endpoint `endpointOf` gives it, every session is live. */
function database(endpointOf: (credential: string) => string) {
  const hashes = new Map<string, string>();
  const reads: Array<{ endpoint: string; session: string }> = [];
  const db = {
    async query(q: { name: string; values: [Buffer, string] }) {
      assert.equal(q.name, 'authenticate_endpoint_session');
      const [hash, session] = q.values;
      const endpoint = hashes.get(hash.toString('hex'));
      if (!endpoint) return { rows: [] };
      reads.push({ endpoint, session });
      const row: Endpoint & Record<string, unknown> = {
        id: endpoint,
        human_id: 'hu_1',
        name: endpoint,
        slug: endpoint,
        queues: ['inbox'],
        verbs: [],
        default_lease_seconds: null,
        accept_agent_messages: false,
        credential_prefix: null,
        expires_at: null,
        revoked_at: null,
        last_seen_at: new Date(),
        created_at: new Date(),
        session_live: true,
        session_stale: false,
        endpoint_stale: false,
      };
      return { rows: [row] };
    },
  } as unknown as Queryable;
  const vend = () => {
    const { secret, hash } = newSecret('sbk');
    hashes.set(hash.toString('hex'), endpointOf(secret));
    return secret;
  };
  return { db, reads, vend };
}

test('two caches are independent: each reads once, reuses its own answer, and forgets only its own', async () => {
  let n = 0;
  const { db, reads, vend } = database(() => `ep_${++n}`);
  const credential = vend();
  const a = new CredentialCache({ reuseMs: 60_000 });
  const b = new CredentialCache({ reuseMs: 60_000 });

  assert.equal((await a.endpointFor(db, credential, 'ms_1'))?.endpoint.id, 'ep_1');
  assert.equal((await a.endpointFor(db, credential, 'ms_1'))?.sessionLive, true);
  assert.equal(reads.length, 1, 'a reuses its answer');
  assert.equal(b.size, 0, 'b holds nothing a learned');
  await b.endpointFor(db, credential, 'ms_1');
  assert.equal(reads.length, 2, 'b reads for itself');

  a.forget('ep_1');
  assert.equal(a.size, 0);
  assert.equal(b.size, 1, 'forgetting in a leaves b alone');
  await b.endpointFor(db, credential, 'ms_1');
  assert.equal(reads.length, 2, 'b still reuses');
  await a.endpointFor(db, credential, 'ms_1');
  assert.equal(reads.length, 3, 'a reads again');
});

test('forgetting a session drops only its answers; forgetting the endpoint drops all of them', async () => {
  const { db, reads, vend } = database(() => 'ep_1');
  const credential = vend();
  const cache = new CredentialCache({ reuseMs: 60_000 });
  for (const session of ['ms_1', 'ms_2', 'ms_3']) await cache.endpointFor(db, credential, session);
  cache.forget('ep_other');
  assert.equal(cache.size, 3);
  cache.forget('ep_1', 'ms_2');
  assert.equal(cache.size, 2);
  await cache.endpointFor(db, credential, 'ms_1');
  await cache.endpointFor(db, credential, 'ms_2');
  assert.deepEqual(
    reads.map((r) => r.session),
    ['ms_1', 'ms_2', 'ms_3', 'ms_2'],
  );
  cache.forget('ep_1');
  assert.equal(cache.size, 0);
});

test('answers are reused for the window only, and the bound evicts the oldest first', async () => {
  let n = 0;
  const { db, reads, vend } = database(() => `ep_${++n}`);
  assert.equal(new CredentialCache().reuseMs, CREDENTIAL_REUSE_MS);
  assert.equal(CREDENTIAL_CACHE_ENTRIES, 10_000);

  const brief = new CredentialCache({ reuseMs: 0 });
  const credential = vend();
  await brief.endpointFor(db, credential, 'ms_1');
  await brief.endpointFor(db, credential, 'ms_1');
  assert.equal(reads.length, 2, 'a window of 0 reuses nothing');

  const small = new CredentialCache({ reuseMs: 60_000, maxEntries: 2 });
  const [first, second, third] = [vend(), vend(), vend()];
  for (const c of [first, second, third]) await small.endpointFor(db, c, 'ms_1');
  assert.equal(small.size, 2);
  const before = reads.length;
  await small.endpointFor(db, third, 'ms_1');
  await small.endpointFor(db, second, 'ms_1');
  assert.equal(reads.length, before, 'the newest two are kept');
  await small.endpointFor(db, first, 'ms_1');
  assert.equal(reads.length, before + 1, 'the oldest was evicted');
  // The refill evicted `second` (ep_3): forgetting it is a no-op, forgetting `third` is not.
  small.forget('ep_3');
  assert.equal(small.size, 2);
  small.forget('ep_4');
  assert.equal(small.size, 1);
});
