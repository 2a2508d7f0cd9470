// Pins finding todos (src/todos/find.ts, store/todo-find.ts): filters combine, pages are
// newest first by keyset and cover every match once, the title test reads the trigram
// index of todo_titles (0022_title_search.sql) rather than scanning todos, the bulk
// actions' `q` matches exactly what the list shows, and priority narrows both.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Queryable } from '../../src/db/pool.js';
import { findTodos as findRows } from '../../src/store/todo-find.js';
import { countBulkMatches } from '../../src/store/todo-bulk-actions.js';
import { bulkAction, titlePattern } from '../../src/todos/bulk-actions.js';
import { findTodos, parseFind } from '../../src/todos/find.js';
import { testDatabase } from '../helpers/db.js';
import { depsOf, makeEndpoint } from '../helpers/fixtures.js';

const db = await testDatabase('todos_find');
const deps = depsOf(db.pool);

/** n todos titled `${word} <i>`, ids in creation order (ULID-shaped, so cursors parse). */
async function seed(endpointId: string, n: number, word: string, extra: { state?: string; priority?: number } = {}) {
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, state, priority, ready_at)
     SELECT $1, 'td_' || upper(substr(md5($2 || $3 || $4::text || g), 1, 4)) || lpad(g::text, 22, '0'), 'inbox', $2 || ' ' || g, $3, $4::smallint,
            CASE WHEN $3 = 'pending' THEN now() END
       FROM generate_series(1, $5::int) g`,
    [endpointId, word, extra.state ?? 'pending', extra.priority ?? 0, n],
  );
}

/** A queryable that answers the plan of the statement it is given instead of its rows. */
const explaining = (plans: string[]): Queryable => ({
  query: (async (text: string, params: unknown[]) => {
    const res = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
    plans.push(res.rows.map((r) => r['QUERY PLAN']).join('\n'));
    return { rows: [] };
  }) as unknown as Queryable['query'],
});

test('a title search reads the trigram index, not the todos backlog (after ANALYZE, at 10,000 rows)', async () => {
  const endpoint = await makeEndpoint(db.pool);
  await seed(endpoint.id, 10_000, 'routine chore');
  await seed(endpoint.id, 5, 'invoice overdue');
  await db.pool.query('ANALYZE todos; ANALYZE todo_titles');
  const plans: string[] = [];
  const base = {
    endpointId: endpoint.id,
    queue: null,
    state: null,
    kind: null,
    source: null,
    priority: null,
    priorityMin: null,
    createdBefore: null,
    createdAfter: null,
    before: null,
    limit: 51,
  };
  await findRows(explaining(plans), { ...base, titleLike: titlePattern('invoice') });
  await countBulkMatches(explaining(plans), {
    ...base,
    states: ['pending', 'failed'],
    titleLike: titlePattern('invoice'),
  });
  for (const plan of plans) {
    assert.match(plan, /Bitmap Index Scan on todo_titles_trgm_idx/, plan);
    assert.doesNotMatch(plan, /Seq Scan on todos/, plan);
  }
  const found = await findTodos(deps, [endpoint.id], parseFind({ q: 'INVOICE' }));
  assert.equal(found.todos.length, 5, 'the search is case-insensitive');
});

test('filters combine, pages run newest first, and every match shows exactly once across pages', async () => {
  const endpoint = await makeEndpoint(db.pool);
  await seed(endpoint.id, 7, 'alpha task', { state: 'failed', priority: 5 });
  await seed(endpoint.id, 3, 'alpha task', { state: 'pending', priority: 5 });
  await seed(endpoint.id, 4, 'beta task', { state: 'failed', priority: 5 });
  await seed(endpoint.id, 2, 'alpha late', { state: 'failed', priority: -1 });
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 10; i++) {
    const page = await findTodos(
      deps,
      [endpoint.id],
      parseFind({ q: 'alpha', state: 'failed', priority_min: 0, limit: 3, ...(cursor ? { cursor } : {}) }),
    );
    seen.push(...page.todos.map((t) => t.id));
    for (const t of page.todos) assert.ok(t.title.startsWith('alpha task') && t.state === 'failed' && t.priority === 5);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  assert.equal(seen.length, 7);
  assert.equal(new Set(seen).size, 7);
  assert.deepEqual(seen, [...seen].sort().reverse(), 'newest (greatest id) first');
});

test("the bulk action's q and priority act on exactly the todos the list shows", async () => {
  const endpoint = await makeEndpoint(db.pool);
  await seed(endpoint.id, 6, 'report 50%_done', { priority: 3 });
  await seed(endpoint.id, 4, 'report 50 done', { priority: 3 });
  await seed(endpoint.id, 5, 'report 50%_done', { priority: 0 });
  const filter = { q: '50%_', priority: 3 };
  const listed = await findTodos(deps, [endpoint.id], parseFind({ ...filter, limit: 200 }));
  assert.equal(listed.todos.length, 6, '% and _ match themselves');
  const run = await bulkAction(deps, endpoint.id, endpoint.human_id, { action: 'cancel', filter }, 2);
  assert.deepEqual([run.matched, run.changed], [6, 6]);
  const canceled = await db.pool.query<{ id: string }>(
    `SELECT id FROM todos WHERE endpoint_id = $1 AND state = 'canceled' ORDER BY id DESC`,
    [endpoint.id],
  );
  assert.deepEqual(
    canceled.rows.map((r) => r.id),
    listed.todos.map((t) => t.id),
  );
});

test('a cursor that is not one answers invalid_argument naming the field', () => {
  assert.throws(() => parseFind({ cursor: 'nope' }), /cursor/);
  assert.throws(() => parseFind({ priority_min: 101 }), /priority_min/);
});
