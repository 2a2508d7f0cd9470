// At each start (docs/design/intake.md, "Secrets at rest"): refuse to run when a stored
// signing secret was sealed under a key this server does not have — verifying or signing
// with it would fail on every delivery, silently to the sender — and reseal under the
// current key whatever is not yet (secrets stored before a key was set, or under the
// previous key of a rotation).

import type { Queryable } from '../db/pool.js';
import { rowsToReseal, resealRow, sealedKeyIds } from '../store/sealed-secrets.js';
import { open, seal, SEALED_PREFIX, type Keyring } from './keyring.js';

export class MissingSecretKey extends Error {}

export async function checkAndReseal(db: Queryable, keyring: Keyring): Promise<{ resealed: number }> {
  const missing = (await sealedKeyIds(db)).filter((id) => !keyring.opens.has(id));
  if (missing.length > 0) {
    throw new MissingSecretKey(
      `signing secrets in the database are sealed under key ${missing.join(', ')}, which this server does not ` +
        'have: set SWITCHBOARD_SECRET_KEY (or SWITCHBOARD_SECRET_KEY_FILE) to that key, or give it as ' +
        'SWITCHBOARD_SECRET_KEY_PREVIOUS beside a new one. Without it no webhook would verify and no notify ' +
        'hook would be signed.',
    );
  }
  if (!keyring.current) return { resealed: 0 };
  let resealed = 0;
  for (const row of await rowsToReseal(db, `${SEALED_PREFIX}${keyring.current.id}:`)) {
    const again = (v: string | null) => (v === null ? null : seal(keyring, open(keyring, v)));
    if (await resealRow(db, row, { secret: again(row.secret), prev_secret: again(row.prev_secret) })) resealed++;
  }
  return { resealed };
}
