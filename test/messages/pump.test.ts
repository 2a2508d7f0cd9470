// Pins the auto-run delivery when the stream is deaf: a failed write returns the message
// to pending at once (subscribers hear of it) without a retry loop, and the redelivery
// sweep's nudge delivers it once the stream takes writes again. The writer here is the
// registry's contract itself: `ring` answers false when this instance cannot write.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { pino } from 'pino';
import { NotifyBus } from '../../src/db/bus.js';
import type { ChannelParams } from '../../src/doorbell/content.js';
import { MessagePump } from '../../src/messages/pump.js';
import { addMessage, queueStatus } from '../../src/messages/queue.js';
import { redeliverMessages } from '../../src/sweeps/messages.js';
import { testDatabase } from '../helpers/db.js';
import { depsOf, notices, owner, stored, user } from './world.js';
import { until } from '../helpers/wait.js';

const { pool, url } = await testDatabase('messages_pump');
const bus = new NotifyBus({ url });
await bus.start();
after(() => bus.stop());
const heard = await notices(url);

test('a failed write returns the message to pending once, quietly for delivery, and the sweep retries it', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  await pool.query(`UPDATE mcp_sessions SET stream_open = true, instance = 'deaf-instance' WHERE id = $1`, [
    o.sessionId,
  ]);
  let accepting = false;
  const written: ChannelParams[] = [];
  let attempts = 0;
  const pump = new MessagePump({
    messages: deps,
    instanceId: 'deaf-instance',
    log: pino({ level: 'silent' }),
    writer: {
      ring: async (_sessionId, params) => {
        attempts += 1;
        if (accepting) written.push(params);
        return accepting;
      },
    },
  });
  after(pump.listen(bus));

  const { entry } = await addMessage(deps, user(o), o.sessionId, { content: 'can you hear me?' });
  await until(() => attempts === 1, 'the first write');
  await until(async () => (await stored(pool, o.sessionId))[0]?.reserved_in_flight === false, 'back to pending');
  await new Promise((r) => setTimeout(r, 300));
  await pump.settle();
  assert.equal(attempts, 1, 'no retry loop on a deaf stream');
  assert.deepEqual(
    (await queueStatus(deps, user(o), o.sessionId)).entries.map((e) => e.id),
    [entry.id],
  );
  await heard.settle();
  assert.ok(heard.count(o.sessionId) >= 3, 'added, reserved and returned were all announced');

  accepting = true;
  await redeliverMessages(deps, 600_000);
  await until(() => written.length === 1, 'the retried delivery');
  assert.equal(written[0]?.meta.message_id, entry.id);
  assert.equal((await stored(pool, o.sessionId))[0]?.reserved_in_flight, true);
});
