// Humans as admins manage them: list, show, create (with a password, or with an invite
// link to set one). Authorisation (admin only) is the caller's check.

import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import { getHuman as getRow, insertHuman, listHumans as listRows, type Human } from '../store/humans.js';
import type { IdentityDeps } from './principal.js';
import { hashPassword } from './secrets.js';
import { email, inviteLink, password } from './setup.js';

const createInput = z.strictObject({
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

export async function createHuman(deps: IdentityDeps, input: unknown): Promise<{ human: Human; invite_url?: string }> {
  const data = parseInput(createInput, input);
  const human = await insertHuman(deps.db, {
    id: newId('hu'),
    email: data.email,
    displayName: data.display_name ?? '',
    role: data.role ?? 'member',
    passwordHash: data.password ? await hashPassword(data.password) : null,
  });
  if (data.password) return { human };
  return { human, invite_url: await inviteLink(deps, human.id) };
}
