// The hand-off tests' world: a real `serve` instance (bus, sweeps, reply delivery), humans
// with API tokens, endpoints vended through the use case, REST calls with a human's token,
// and agents connected with the SDK's real MCP client (long-polling: no channel, so a
// message waits for next_message).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Pool } from '../../src/db/pool.js';
import { newId } from '../../src/domain/ids.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { newSecret } from '../../src/identity/secrets.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { insertHuman } from '../../src/store/humans.js';
import { connect, ok, type Body, type Connected } from '../mcp/harness.js';

export interface Person {
  id: string;
  token: string;
}

export async function person(pool: Pool): Promise<Person> {
  const tag = randomBytes(4).toString('hex');
  const human = await insertHuman(pool, {
    id: newId('hu'),
    email: `h-${tag}@example.test`,
    displayName: tag,
    role: 'member',
  });
  const { secret, hash } = newSecret('sbt');
  await insertApiToken(pool, {
    id: newId('tk'),
    humanId: human.id,
    kind: 'human',
    name: 'test',
    tokenHash: hash,
    expiresAt: null,
  });
  return { id: human.id, token: secret };
}

export interface Agent {
  slug: string;
  id: string;
  credential: string;
}

export async function endpointOf(pool: Pool, owner: Person, name: string, queues: string[]): Promise<Agent> {
  const vended = await vendEndpoint(
    { db: pool, publicUrl: 'http://switchboard.test' },
    owner.id,
    { name: `${name} ${randomBytes(3).toString('hex')}`, queues, verbs: ['drain', 'create', 'messages'] },
    new Date(),
  );
  return { slug: vended.endpoint.slug, id: vended.endpoint.id, credential: vended.credential };
}

/** A REST call as this person: the status and the JSON answer. */
export async function rest(
  base: string,
  who: Person,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Body }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${who.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** A grant made through the API, answering the expected status. */
export async function grant(
  base: string,
  who: Person,
  from: Agent,
  to: Agent,
  queues: string[],
  status = 201,
): Promise<Body> {
  const made = await rest(base, who, 'POST', '/api/v1/grants', { from: from.slug, to: to.slug, queues });
  assert.equal(made.status, status, JSON.stringify(made.json));
  return made.json.grant;
}

/** A session of the agent, long-polling (no channel): its messages wait for next_message. */
export function session(base: string, agent: Agent): Promise<Connected> {
  return connect(base, agent.credential, 'handoff-test', { channel: false });
}

/** The next message of the session, waiting for it; acknowledged. */
export async function nextMessage(c: Connected): Promise<{ content: string; message_id: string; queued_by: string }> {
  for (let round = 0; round < 5; round++) {
    const body = await ok(c, 'next_message', { wait_seconds: 10 });
    if (body.message) {
      await ok(c, 'ack_message', { message_id: body.message.message_id });
      return body.message as { content: string; message_id: string; queued_by: string };
    }
  }
  assert.fail('no message arrived');
}
