// `npm run bench -- [NAME…]`: runs the named benchmarks (all when none is named).

import { runAdmissionBench } from './admission.js';
import { runBacklogBench } from './backlog.js';
import { runBoardBench } from './board.js';
import { runBulkBench } from './bulk.js';
import { runClaimBench } from './claim.js';
import { runDoorbellBench } from './doorbell.js';
import { runEmbeddedBench } from './embedded.js';
import { runFootprintBench } from './footprint.js';
import { runIdsBench } from './ids.js';
import { runMcpBench } from './mcp.js';
import { runMcpCreateBench } from './mcp-create.js';
import { runPriorityBench } from './priority.js';
import { runRingsBench } from './rings.js';
import { runRoutingBench } from './routing.js';
import { runScaleBench } from './scale.js';
import { runSessionsBench } from './sessions.js';
import { runTracingBench } from './tracing.js';
import { runWalBench } from './wal.js';

const BENCHES: Record<string, () => Promise<void>> = {
  admission: runAdmissionBench,
  backlog: runBacklogBench,
  board: runBoardBench,
  bulk: runBulkBench,
  claim: runClaimBench,
  doorbell: runDoorbellBench,
  embedded: runEmbeddedBench,
  footprint: runFootprintBench,
  ids: runIdsBench,
  mcp: runMcpBench,
  'mcp-create': runMcpCreateBench,
  // Its peers need Node.js 22+ and their own install: `npm run bench:peers` (bench/peers/run.sh).
  peers: async () => {
    const entry = './peers/peers.js';
    const loaded = (await import(entry).catch((err: unknown) => {
      throw new Error(
        'the peers benchmark needs its own dependencies and Node.js 22 or later: run `npm run bench:peers`',
        { cause: err },
      );
    })) as { runPeersBench: () => Promise<void> };
    await loaded.runPeersBench();
  },
  priority: runPriorityBench,
  rings: runRingsBench,
  routing: runRoutingBench,
  scale: runScaleBench,
  sessions: runSessionsBench,
  tracing: runTracingBench,
  wal: runWalBench,
};

const names = process.argv.slice(2);
const unknown = names.filter((n) => !(n in BENCHES));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`);
  process.exit(2);
}
for (const name of names.length > 0 ? names : Object.keys(BENCHES)) await BENCHES[name]?.();
