// What tracing costs the claim → complete cycle (docs/design/tracing.md, "Cost"), off and
// on in one run on one database.
//
// Off: the claim bench's Switchboard round as it is (bench/claim.ts): no exporter, the
// pool left as pg made it, every Tracing call the shared no-op.
// On: the same 16 workers, each verb in a span as the MCP surface makes it (`mcp
// claim_next`, `mcp complete`, linked to the todo's stored trace context), a span per
// statement under it, batched and exported over OTLP/HTTP (protobuf) to a collector in
// this process (an HTTP server that accepts POSTs to /v1/traces and counts them).
// Rounds alternate which goes first; the ratio is the median of each round's on/off.
// Target: on/off ≥ 0.85.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { createPool, type Pool } from '../src/db/pool.js';
import { claimNext, complete, type Agent } from '../src/todos/index.js';
import { createTracing, NO_TRACING, type Tracing } from '../src/tracing/index.js';
import { freshEndpoint, ROUNDS, timed, TODOS, WORKERS } from './claim.js';
import { benchDatabase, median } from './db.js';

async function collector(): Promise<{ url: string; posts: () => number; bytes: () => number; close(): void }> {
  let posts = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      if (req.url === '/v1/traces') posts += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('the collector has no port');
  return {
    url: `http://127.0.0.1:${address.port}/v1/traces`,
    posts: () => posts,
    bytes: () => bytes,
    close: () => server.close(),
  };
}

/** One round of WORKERS sessions looping claim_next → complete, each verb as the MCP surface runs it. */
function round(pool: Pool, tracing: Tracing) {
  return async (endpointId: string, todos: number): Promise<number> => {
    const deps = { db: pool, defaultLeaseSeconds: 300, tracing };
    // As mcp/protocol.ts callTool: off, the verb is called directly; on, inside its span.
    const verb = <T>(name: string, slug: string, fn: () => Promise<T>): Promise<T> =>
      tracing.enabled
        ? tracing.run(`mcp ${name}`, { attributes: { 'mcp.tool.name': name, 'switchboard.endpoint': slug } }, fn)
        : fn();
    return timed(
      Array.from({ length: WORKERS }, (_, w) => async () => {
        const agent: Agent = { endpointId, sessionId: `bench-${w}`, queues: ['inbox'], defaultLeaseSeconds: null };
        let n = 0;
        for (;;) {
          const r = await verb('claim_next', 'bench', () => claimNext(deps, agent, {}));
          if (!('todo' in r)) return n;
          await verb('complete', 'bench', () => complete(deps, agent, { id: r.todo.id, result: { ok: true } }));
          n += 1;
        }
      }),
      todos,
    );
  };
}

export async function runTracingBench(): Promise<void> {
  const db = await benchDatabase();
  const sink = await collector();
  const tracing = await createTracing({
    config: { enabled: true, protocol: 'http/protobuf', tracesUrl: sink.url, serviceName: 'switchboard-bench' },
    instanceId: 'bench',
    version: 'bench',
  });
  const plain = createPool({ url: db.url, max: WORKERS });
  const traced = createPool({ url: db.url, max: WORKERS, queries: tracing.queries });
  try {
    process.stdout.write(
      `tracing bench: ${WORKERS} workers, ${TODOS} todos a round, ${ROUNDS} rounds each, on ${db.server}\n`,
    );
    const off = round(plain, NO_TRACING);
    const on = round(traced, tracing);
    const run = async (r: typeof off, todos = TODOS) => r(await freshEndpoint(plain, todos), todos);
    // Warm-up: connections, prepared statements, JIT, the exporter's first connection.
    await run(off, 2_000);
    await run(on, 2_000);
    const offs: number[] = [];
    const ons: number[] = [];
    for (let i = 1; i <= ROUNDS; i++) {
      if (i % 2) {
        offs.push(await run(off));
        ons.push(await run(on));
      } else {
        ons.push(await run(on));
        offs.push(await run(off));
      }
      process.stdout.write(
        `  round ${i}: off ${offs.at(-1)?.toFixed(0)}/s, on ${ons.at(-1)?.toFixed(0)}/s, ` +
          `ratio ${((ons.at(-1) ?? 0) / (offs.at(-1) ?? 1)).toFixed(3)}\n`,
      );
    }
    await tracing.shutdown();
    const ratio = median(ons.map((o, i) => o / (offs[i] ?? o)));
    process.stdout.write(
      `tracing off                 ${median(offs).toFixed(0)} cycles/s\n` +
        `tracing on (OTLP, local)    ${median(ons).toFixed(0)} cycles/s\n` +
        `collector                   ${sink.posts()} POSTs, ${(sink.bytes() / 1e6).toFixed(1)} MB\n` +
        `ratio on/off                ${ratio.toFixed(3)} (target ≥ 0.85)\n`,
    );
  } finally {
    await plain.end();
    await traced.end();
    sink.close();
    await db.close();
  }
}
