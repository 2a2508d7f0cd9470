// Hand-offs under the same faults (docs/design/handoff.md). A second endpoint of the same
// owner (the helpers) takes todos from the workers' endpoint under an active grant on its
// queues `work` and `parked`. A small share of the workers' completes of seeded inbox todos
// first hand a child off with create_todo {endpoint, queue, title, parent_id, reply: true}
// (and an idempotency key, so a retry after a lost answer finds the same child). Helper
// workers drain `work`: most complete, some fail for good (retry: false), some fail once
// and are retried; the owner cancels a few meanwhile. `parked` is never claimed: its
// children are canceled by the owner at the end, after every worker session has ended, so
// their replies find no live session of the sender and come back as reply todos, while the
// replies of `work` children come back as session messages the workers take with
// next_message and acknowledge (a full session queue turns one into a todo too).
//
// Verdict, from the database and what the clients were told:
// - every hand-off answered OK is one child (one todo with its key) on the helpers, linked
//   to its parent with reply asked; every child was handed off by some call;
// - every child ended, and exactly then has one outbox row, with the child's state, delivered
//   (not dropped): a todo is never in two states;
// - each reply was delivered once: as one message (taken by a worker of that very session,
//   under one message id, acknowledged OK at most once) or as one reply todo, never both,
//   never two; what it says (state, and for a done child the seq its result names) is the
//   child's outcome;
// - each cancel answered OK left its child canceled; each helper complete answered OK is the
//   child's completed attempt.

import type { Pool } from '../src/db/pool.js';
import { isAppError } from '../src/domain/errors.js';
import { cancel } from '../src/todos/index.js';
import { ChaosClient, type Tally } from './client.js';
import { REPLY_KIND, settle, type CompleteLog, type Violation, type WorkerHandoff } from './todos.js';

export const HELPER_QUEUES = ['work', 'parked'];
/** The share of seeded inbox completes that hand a child off first. */
export const HANDOFF_SHARE = 0.02;
/** The share of hand-offs that go to `parked` (replied as todos at the end). */
const PARKED_SHARE = 0.2;
/** The share of `work` children the owner cancels while they run. */
const CANCEL_SHARE = 0.1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HandoffEntry {
  parent: string;
  key: string;
  queue: string;
  /** ok: create_todo answered OK; ambiguous: never answered (a child may exist); refused: a tool error. */
  outcome: 'ok' | 'ambiguous' | 'refused';
  child?: string;
  code?: string;
}

export interface ReplyDelivery {
  child: string;
  state: string;
  /** The seq the result names, for a done child (null: no result, or not readable). */
  seq: number | null;
  session: string;
  count: number;
}

export interface CancelEntry {
  child: string;
  parked: boolean;
  outcome: 'ok' | 'conflict' | 'unknown';
}

export interface HandoffLog {
  handoffs: HandoffEntry[];
  /** Per message id, the reply it carried and how often it came. */
  messages: Map<string, ReplyDelivery>;
  ackOk: Map<string, number>;
  ackAmbiguous: Set<string>;
  /** Messages to the workers' sessions that are no hand-off reply. */
  strangers: string[];
  cancels: CancelEntry[];
  helperCompletes: CompleteLog[];
  helper: { claims: number; completes: number; failsFinal: number; failsRetried: number; conflicts: number };
  /** Workers out of their claim loop (draining until the suite lets them end their sessions). */
  draining: number;
}

export function newHandoffLog(): HandoffLog {
  return {
    handoffs: [],
    messages: new Map(),
    ackOk: new Map(),
    ackAmbiguous: new Set(),
    strangers: [],
    cancels: [],
    helperCompletes: [],
    helper: { claims: 0, completes: 0, failsFinal: 0, failsRetried: 0, conflicts: 0 },
    draining: 0,
  };
}

const REPLY_HEAD = /Hand-off reply: todo (\S+) on \S+ ended (\w+)\./;
const RESULT_LINE = /^Result: (.*)$/m;

function seqOf(result: unknown): number | null {
  const seq = (result as { seq?: unknown } | null)?.seq;
  return typeof seq === 'number' ? seq : null;
}

/** The workers' side: hand-offs, and the replies that come back to their sessions. */
export function workerHandoff(log: HandoffLog, target: string, closeSessions: () => boolean): WorkerHandoff {
  const drain = async (c: ChaosClient): Promise<void> => {
    for (let taken = 0; taken < 50; taken++) {
      const r = await c.call('next_message', {});
      if (r.kind !== 'ok' || !r.value.message) return;
      const m = r.value.message as { message_id: string; content: string };
      const head = REPLY_HEAD.exec(m.content);
      if (!head) log.strangers.push(m.content.slice(0, 120));
      else {
        const line = RESULT_LINE.exec(m.content)?.[1];
        let seq: number | null;
        try {
          seq = line ? seqOf(JSON.parse(line)) : null;
        } catch {
          seq = null;
        }
        const seen = log.messages.get(m.message_id);
        if (seen) seen.count += 1;
        else
          log.messages.set(m.message_id, {
            child: head[1] ?? '',
            state: head[2] ?? '',
            seq,
            session: c.sessionId ?? '',
            count: 1,
          });
      }
      let lost = false;
      for (let tries = 0; ; tries++) {
        const a = await c.call('ack_message', { message_id: m.message_id });
        if (a.kind === 'ok') {
          log.ackOk.set(m.message_id, (log.ackOk.get(m.message_id) ?? 0) + 1);
          break;
        }
        if ((a.kind === 'tool_error' && a.code === 'not_found') || tries >= 40) {
          if (lost) log.ackAmbiguous.add(m.message_id);
          break;
        }
        lost = true;
        await sleep(50 + Math.random() * 100);
      }
    }
  };
  return {
    drain,
    async maybeHandOff(c, todo, stop) {
      if (todo.queue !== 'inbox' || !todo.id.startsWith('td_chaos') || Math.random() >= HANDOFF_SHARE) return;
      const queue = Math.random() < PARKED_SHARE ? 'parked' : 'work';
      const key = `chaos-handoff:${todo.id}:${todo.claims}`;
      const entry: HandoffEntry = { parent: todo.id, key, queue, outcome: 'ambiguous' };
      log.handoffs.push(entry);
      const args = {
        endpoint: target,
        queue,
        title: `child of ${todo.id}`,
        parent_id: todo.id,
        reply: true,
        idempotency_key: key,
        max_attempts: 20,
        retry_backoff: { base_seconds: 1, max_seconds: 2 },
      };
      for (let tries = 0; tries < 60 && !stop(); tries++) {
        const r = await c.call('create_todo', args);
        if (r.kind === 'ok') {
          entry.outcome = 'ok';
          entry.child = (r.value.todo as { id: string }).id;
          return;
        }
        if (r.kind === 'tool_error' && r.code !== 'unavailable' && r.code !== 'internal') {
          entry.outcome = 'refused';
          entry.code = r.code;
          return;
        }
        await sleep(50 + Math.random() * 150);
      }
    },
    async finish(c) {
      log.draining += 1;
      while (!closeSessions()) {
        await drain(c);
        await sleep(1_000);
      }
      await drain(c);
      await c.end();
    },
  };
}

export interface HelperOptions {
  urls: () => string[];
  credential: string;
  tally: Tally;
  stop: () => boolean;
  leaseSeconds: number;
  workMs: number;
  log: HandoffLog;
}

/** A worker of the helpers' endpoint: drains `work` (complete, fail for good, fail once). */
export async function runHelper(index: number, o: HelperOptions): Promise<void> {
  const c = new ChaosClient({
    urls: o.urls,
    credential: o.credential,
    name: `chaos-helper-${index}`,
    tally: o.tally,
    renewSession: true,
  });
  if (!(await c.open(o.stop))) return;
  const h = o.log.helper;
  try {
    while (!o.stop()) {
      const r = await c.call('claim_next', { lease_seconds: o.leaseSeconds, queue: 'work' });
      if (r.kind !== 'ok') {
        await sleep(50 + Math.random() * 100);
        continue;
      }
      const todo = r.value.todo as { id: string; claims: number; attempt: number } | undefined;
      if (!todo) {
        await sleep(100 + Math.random() * 200);
        continue;
      }
      h.claims += 1;
      const session = c.sessionId ?? '';
      await sleep(o.workMs * (0.2 + Math.random() * 1.6));
      if (o.stop()) break;
      const roll = Math.random();
      const verb = roll < 0.1 || (roll < 0.2 && todo.attempt === 1) ? 'fail' : 'complete';
      const args =
        verb === 'complete'
          ? { id: todo.id, result: { seq: todo.claims, session, helper: index } }
          : { id: todo.id, error: 'chaos: a helper gives up', ...(roll < 0.1 ? { retry: false } : {}) };
      const answer = await settle(c, verb, args, o.stop);
      if (answer === 'conflict') h.conflicts += 1;
      if (verb === 'complete' && (answer === 'ok' || answer === 'ambiguous')) {
        o.log.helperCompletes.push({ todo: todo.id, seq: todo.claims, session, worker: index, outcome: answer });
        if (answer === 'ok') h.completes += 1;
      }
      if (verb === 'fail' && answer === 'ok') {
        if (roll < 0.1) h.failsFinal += 1;
        else h.failsRetried += 1;
      }
    }
  } finally {
    c.close();
  }
}

async function cancelAs(
  pool: Pool,
  endpointId: string,
  child: string,
  leaseSeconds: number,
): Promise<CancelEntry['outcome']> {
  for (let tries = 0; tries < 40; tries++) {
    try {
      await cancel({ db: pool, defaultLeaseSeconds: leaseSeconds }, endpointId, child);
      return 'ok';
    } catch (err) {
      if (isAppError(err) && err.code === 'conflict') return 'conflict';
      // The database restarted under the cancel: try again, it is all or nothing.
      await sleep(100 + Math.random() * 200);
    }
  }
  return 'unknown';
}

/** The owner cancels a share of the `work` children while the helpers run. */
export async function runCanceler(
  pool: Pool,
  helpersId: string,
  log: HandoffLog,
  leaseSeconds: number,
  stop: () => boolean,
): Promise<void> {
  let seen = 0;
  while (!stop()) {
    await sleep(200 + Math.random() * 300);
    const fresh = log.handoffs.slice(seen);
    seen += fresh.length;
    for (const h of fresh) {
      if (h.outcome !== 'ok' || h.queue !== 'work' || !h.child || Math.random() >= CANCEL_SHARE) continue;
      log.cancels.push({
        child: h.child,
        parked: false,
        outcome: await cancelAs(pool, helpersId, h.child, leaseSeconds),
      });
    }
  }
}

/** At the end, with no session of the sender live: the owner cancels every parked child. */
export async function cancelParked(
  pool: Pool,
  helpersId: string,
  log: HandoffLog,
  leaseSeconds: number,
): Promise<number> {
  const parked = await pool.query<{ id: string }>(
    `SELECT id FROM todos WHERE endpoint_id = $1 AND queue = 'parked' AND state = 'pending'`,
    [helpersId],
  );
  for (const { id } of parked.rows) {
    log.cancels.push({ child: id, parked: true, outcome: await cancelAs(pool, helpersId, id, leaseSeconds) });
  }
  return parked.rows.length;
}

/** What is left to settle: live children (of a queue, or all), undelivered replies, messages queued to the sender. */
export async function handoffsOutstanding(
  pool: Pool,
  workersId: string,
  helpersId: string,
  queue: string | null,
): Promise<{ live: number; due: number; queued: number }> {
  const res = await pool.query<{ live: number; due: number; queued: number }>(
    `SELECT (SELECT count(*)::int FROM todos WHERE endpoint_id = $2 AND ($3::text IS NULL OR queue = $3)
              AND (state IN ('pending', 'claimed', 'waiting_on_human') OR (state = 'failed' AND next_retry_at IS NOT NULL))) AS live,
            (SELECT count(*)::int FROM handoff_replies WHERE delivered_at IS NULL) AS due,
            (SELECT count(*)::int FROM queued_messages WHERE endpoint_id = $1) AS queued`,
    [workersId, helpersId, queue],
  );
  return res.rows[0] ?? { live: -1, due: -1, queued: -1 };
}

function add(out: Violation[], check: string, rows: unknown[]): void {
  if (rows.length > 0) out.push({ check, detail: `${rows.length} case(s), e.g. ${JSON.stringify(rows.slice(0, 5))}` });
}

interface ChildRow {
  id: string;
  queue: string;
  state: string;
  retry_ahead: boolean;
  key: string | null;
  reply_wanted: boolean;
  parent_id: string | null;
  from_endpoint_id: string | null;
  reply: boolean | null;
  reply_state: string | null;
  reply_to: string | null;
  delivered: boolean | null;
  delivered_as: string | null;
  delivered_ref: string | null;
  result_seq: number | null;
}

/** Every hand-off invariant; an empty list is a pass. */
export async function checkHandoffs(
  pool: Pool,
  workersId: string,
  helpersId: string,
  log: HandoffLog,
): Promise<{ violations: Violation[]; facts: string[] }> {
  const out: Violation[] = [];
  const children = (
    await pool.query<ChildRow>(
      `SELECT t.id, t.queue, t.state, t.next_retry_at IS NOT NULL AS retry_ahead, t.idempotency_key AS key,
              t.reply_wanted, l.parent_id, l.from_endpoint_id, l.reply,
              r.state AS reply_state, r.endpoint_id AS reply_to, r.delivered_at IS NOT NULL AS delivered,
              r.delivered_as, r.delivered_ref, (t.result->>'seq')::int AS result_seq
         FROM todos t
         LEFT JOIN todo_links l ON l.child_endpoint_id = t.endpoint_id AND l.child_id = t.id
         LEFT JOIN handoff_replies r ON r.child_endpoint_id = t.endpoint_id AND r.child_id = t.id
        WHERE t.endpoint_id = $1`,
      [helpersId],
    )
  ).rows;
  const byId = new Map(children.map((c) => [c.id, c]));
  const byKey = new Map<string, ChildRow[]>();
  for (const c of children) byKey.set(c.key ?? '', [...(byKey.get(c.key ?? '') ?? []), c]);

  // Handed off: each OK hand-off is one child, linked to its parent, reply asked.
  const oks = log.handoffs.filter((h) => h.outcome === 'ok');
  add(
    out,
    'every hand-off answered OK exists exactly once (one todo under its key, the one answered)',
    oks.filter((h) => (byKey.get(h.key) ?? []).length !== 1 || byKey.get(h.key)?.[0]?.id !== h.child),
  );
  add(
    out,
    'every child handed off OK links to its parent, from the workers, with a reply asked',
    oks
      .map((h) => ({ h, c: byId.get(h.child ?? '') }))
      .filter(
        ({ h, c }) =>
          c && (c.parent_id !== h.parent || c.from_endpoint_id !== workersId || c.reply !== true || !c.reply_wanted),
      )
      .map(({ h, c }) => ({ key: h.key, parent: h.parent, link: c && { parent: c.parent_id, reply: c.reply } })),
  );
  const keys = new Set(log.handoffs.filter((h) => h.outcome !== 'refused').map((h) => h.key));
  add(
    out,
    'no child but those handed off, at most one per key',
    [...byKey]
      .filter(([key, rows]) => !keys.has(key) || rows.length > 1)
      .map(([key, rows]) => ({ key, n: rows.length })),
  );
  add(
    out,
    'no hand-off refused (the grant covers both queues)',
    log.handoffs.filter((h) => h.outcome === 'refused'),
  );

  // Ended, and exactly then replied, with the state it has.
  const ended = (c: ChildRow) =>
    c.state === 'done' || c.state === 'canceled' || (c.state === 'failed' && !c.retry_ahead);
  add(
    out,
    'every child ended (work drained by the helpers, parked canceled by the owner)',
    children.filter((c) => !ended(c)).map((c) => ({ id: c.id, queue: c.queue, state: c.state })),
  );
  add(
    out,
    'a todo is never in two states: a child has a reply exactly when it ended, and the reply says its state',
    children
      .filter((c) => (c.reply_state !== null) !== ended(c) || (c.reply_state !== null && c.reply_state !== c.state))
      .map((c) => ({ id: c.id, state: c.state, reply: c.reply_state })),
  );
  add(
    out,
    'every reply delivered to the workers’ endpoint (none left due, none dropped)',
    children
      .filter(
        (c) => c.reply_state !== null && (!c.delivered || c.reply_to !== workersId || c.delivered_as === 'dropped'),
      )
      .map((c) => ({ id: c.id, delivered: c.delivered, as: c.delivered_as })),
  );
  const orphans = await pool.query<{ child_id: string }>(
    `SELECT r.child_id FROM handoff_replies r WHERE NOT EXISTS
       (SELECT 1 FROM todos t WHERE t.endpoint_id = r.child_endpoint_id AND t.id = r.child_id)`,
  );
  add(out, 'no reply without its child', orphans.rows);

  // Delivered once: one message or one reply todo, never both, never two.
  const replyTodos = (
    await pool.query<{
      id: string;
      state: string;
      key: string | null;
      reply: { child_id?: string; state?: string; result?: unknown };
    }>(
      `SELECT id, state, idempotency_key AS key, payload->'handoff_reply' AS reply FROM todos
        WHERE endpoint_id = $1 AND kind = '${REPLY_KIND}'`,
      [workersId],
    )
  ).rows;
  const todosFor = new Map<string, typeof replyTodos>();
  for (const t of replyTodos) {
    const child = t.reply?.child_id ?? '';
    todosFor.set(child, [...(todosFor.get(child) ?? []), t]);
  }
  const queued = (
    await pool.query<{ id: string; session_id: string; child: string | null }>(
      `SELECT id::text, session_id, metadata->'handoff_reply'->>'child_id' AS child FROM queued_messages WHERE endpoint_id = $1`,
      [workersId],
    )
  ).rows;
  const messagesFor = new Map<string, Array<[string, ReplyDelivery]>>();
  for (const [id, d] of log.messages) messagesFor.set(d.child, [...(messagesFor.get(d.child) ?? []), [id, d]]);
  const queuedFor = new Map<string, typeof queued>();
  for (const q of queued) queuedFor.set(q.child ?? '', [...(queuedFor.get(q.child ?? '') ?? []), q]);

  const asMessage = children.filter((c) => c.delivered_as === 'message');
  const asTodo = children.filter((c) => c.delivered_as === 'todo');
  add(
    out,
    'a reply delivered as a message came to a worker of that session under one message id (or waits queued), and no reply todo',
    asMessage
      .filter((c) => {
        const got = messagesFor.get(c.id) ?? [];
        const ids = new Set([...got.map(([id]) => id), ...(queuedFor.get(c.id) ?? []).map((q) => q.id)]);
        return (
          ids.size !== 1 ||
          got.some(([, d]) => d.session !== c.delivered_ref) ||
          (queuedFor.get(c.id) ?? []).some((q) => q.session_id !== c.delivered_ref) ||
          (todosFor.get(c.id) ?? []).length > 0
        );
      })
      .map((c) => ({
        id: c.id,
        session: c.delivered_ref,
        messages: (messagesFor.get(c.id) ?? []).map(([id, d]) => ({ id, session: d.session })),
        queued: (queuedFor.get(c.id) ?? []).map((q) => q.id),
        todos: (todosFor.get(c.id) ?? []).length,
      })),
  );
  add(
    out,
    'a reply delivered as a todo is exactly one reply todo (the one recorded), and no message',
    asTodo
      .filter((c) => {
        const t = todosFor.get(c.id) ?? [];
        return (
          t.length !== 1 ||
          t[0]?.id !== c.delivered_ref ||
          (messagesFor.get(c.id) ?? []).length > 0 ||
          queuedFor.has(c.id)
        );
      })
      .map((c) => ({ id: c.id, ref: c.delivered_ref, todos: (todosFor.get(c.id) ?? []).map((t) => t.id) })),
  );
  const delivered = new Set(children.filter((c) => c.delivered).map((c) => c.id));
  add(
    out,
    'no reply message or reply todo for a child without a delivered reply',
    [...new Set([...messagesFor.keys(), ...todosFor.keys(), ...queuedFor.keys()])].filter((id) => !delivered.has(id)),
  );
  add(out, 'no other message reached the workers’ sessions', log.strangers);
  add(
    out,
    'no reply message acknowledged OK twice (delivered again after its ack)',
    [...log.ackOk].filter(([, n]) => n > 1),
  );
  add(
    out,
    'every reply message taken was acknowledged',
    [...log.messages.keys()].filter((id) => !log.ackOk.has(id) && !log.ackAmbiguous.has(id)),
  );
  // With the child's outcome.
  add(out, 'each reply carries the child’s outcome (its state; for a done child, the seq of the completed attempt)', [
    ...[...log.messages]
      .filter(([, d]) => {
        const c = byId.get(d.child);
        return !c || d.state !== c.state || (c.state === 'done' && d.seq !== c.result_seq);
      })
      .map(([id, d]) => ({ message: id, ...d })),
    ...replyTodos
      .filter((t) => {
        const c = byId.get(t.reply?.child_id ?? '');
        return (
          !c ||
          t.reply?.state !== c.state ||
          (c.state === 'done' && seqOf(t.reply?.result) !== c.result_seq) ||
          t.key !== `handoff_reply:${c.id}`
        );
      })
      .map((t) => ({ todo: t.id, reply: t.reply })),
  ]);

  // The owner's cancels and the helpers' completes against the rows.
  add(
    out,
    'each cancel answered OK left its child canceled',
    log.cancels.filter((k) => k.outcome === 'ok' && byId.get(k.child)?.state !== 'canceled'),
  );
  const completed = new Map<string, { seq: number; session: string }>();
  for (const r of (
    await pool.query<{ todo_id: string; seq: number; session_id: string }>(
      `SELECT todo_id, seq, session_id FROM todo_attempts WHERE endpoint_id = $1 AND outcome = 'completed'`,
      [helpersId],
    )
  ).rows) {
    completed.set(r.todo_id, { seq: r.seq, session: r.session_id });
  }
  add(
    out,
    'each helper complete answered OK is the child’s completed attempt',
    log.helperCompletes.filter((e) => {
      const c = completed.get(e.todo);
      return e.outcome === 'ok' && (!c || c.seq !== e.seq || c.session !== e.session);
    }),
  );
  const sent = new Set(log.helperCompletes.map((e) => `${e.todo}/${e.seq}/${e.session}`));
  add(
    out,
    'each completed child was completed by a helper for that very claim',
    [...completed].filter(([todo, c]) => !sent.has(`${todo}/${c.seq}/${c.session}`)),
  );

  const count = (f: (c: ChildRow) => boolean) => children.filter(f).length;
  const redelivered = [...log.messages.values()].filter((d) => d.count > 1).length;
  const h = log.helper;
  const facts = [
    `hand-offs: ${oks.length} handed off OK (${oks.filter((x) => x.queue === 'work').length} work, ` +
      `${oks.filter((x) => x.queue === 'parked').length} parked) from ${new Set(oks.map((x) => x.parent)).size} parents, ` +
      `${log.handoffs.filter((x) => x.outcome === 'ambiguous').length} never answered, ` +
      `${log.handoffs.filter((x) => x.outcome === 'refused').length} refused; children: ${count((c) => c.state === 'done')} done, ` +
      `${count((c) => c.state === 'failed')} failed for good, ${count((c) => c.state === 'canceled')} canceled ` +
      `(owner's cancels OK: ${log.cancels.filter((k) => k.outcome === 'ok' && !k.parked).length} of ` +
      `${log.cancels.filter((k) => !k.parked).length} tried mid-run, ` +
      `${log.cancels.filter((k) => k.outcome === 'ok' && k.parked).length} parked at the end); ` +
      `replies: ${asMessage.length} as session messages (${log.messages.size} taken by workers, ${queued.length} still queued, ` +
      `${redelivered} delivered more than once before the ack), ${asTodo.length} as reply todos, ` +
      `${count((c) => c.delivered_as === 'dropped')} dropped; helpers: ${h.claims} claims, ${h.completes} completes OK, ` +
      `${h.failsFinal} fails for good, ${h.failsRetried} fails retried, ${h.conflicts} conflicts`,
  ];
  return { violations: out, facts };
}
