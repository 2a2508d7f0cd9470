// Humans as admins manage them: list, show, create (with a password, or with an invite
// link to set one; audited). The rest of the lifecycle is lifecycle.ts. Authorisation
// (admin only) is the caller's check.

import { z } from 'zod';
import { withTx } from '../db/pool.js';
import { notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import { countLiveApiTokens } from '../store/api-tokens.js';
import { insertHumanAudit } from '../store/human-lifecycle.js';
import { getHuman as getRow, insertHuman, listHumans as listRows, type Human } from '../store/humans.js';
import type { IdentityDeps, Principal } from './principal.js';
import { hashPassword } from './secrets.js';
import { email, inviteLink, password } from './setup.js';

export const createInput = z.strictObject({
  email,
  display_name: z.string().trim().check(maxLength(100)).optional(),
  role: z.enum(['admin', 'member']).optional(),
  password: password.optional(),
});

export function listHumans(deps: IdentityDeps): Promise<Human[]> {
  return listRows(deps.db);
}

export async function getHuman(deps: IdentityDeps, id: string): Promise<Human> {
  const human = await getRow(deps.db, id);
  if (!human) throw notFound('human', id);
  return human;
}

/** Creates a human; with `actor` (an admin through the API) the creation is audited (docs/design/people.md). */
export async function createHuman(
  deps: IdentityDeps,
  input: unknown,
  actor?: Principal,
): Promise<{ human: Human; invite_url?: string }> {
  const data = parseInput(createInput, input);
  const passwordHash = data.password ? await hashPassword(data.password) : null;
  const human = await withTx(deps.db, async (tx) => {
    const made = await insertHuman(tx, {
      id: newId('hu'),
      email: data.email,
      displayName: data.display_name ?? '',
      role: data.role ?? 'member',
      passwordHash,
    });
    if (actor) {
      await insertHumanAudit(tx, {
        humanId: made.id,
        actorHumanId: actor.human.id,
        action: 'create',
        detail: { email: made.email, role: made.role, invited: !data.password },
      });
    }
    return made;
  });
  if (data.password) return { human };
  return { human, invite_url: await inviteLink(deps, human.id) };
}

/** Every human with how many live API tokens they hold: the board's people list. */
export async function listHumansWithTokens(deps: IdentityDeps): Promise<Array<Human & { live_tokens: number }>> {
  const [humans, counts] = await Promise.all([listRows(deps.db), countLiveApiTokens(deps.db)]);
  return humans.map((h) => ({ ...h, live_tokens: counts.get(h.id) ?? 0 }));
}
