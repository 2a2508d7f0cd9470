// What grew between two V8 heap snapshots, per unit of something (a stream, a session):
// `node --import tsx bench/heap-summary.ts BEFORE.heapsnapshot AFTER.heapsnapshot N`
// prints the node kinds (constructor names for objects; closures by function name) whose
// count or self size changed most, divided by N, and the totals. Self sizes only: what
// an object retains through others is counted under those others, so the groups add up.
// Used for the per-stream breakdown in bench/README.md (sessions).

import { readFile } from 'node:fs/promises';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Kind {
  count: number;
  bytes: number;
}

/** Count and self size by kind: `object Name`, `closure name`, or the node type (string, code, …). */
async function kinds(path: string): Promise<Map<string, Kind>> {
  const snap = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const stride = fields.length;
  const out = new Map<string, Kind>();
  for (let i = 0; i < snap.nodes.length; i += stride) {
    const type = types[snap.nodes[i + (typeAt ?? 0)] ?? 0] ?? '?';
    const name = snap.strings[snap.nodes[i + (nameAt ?? 1)] ?? 0] ?? '?';
    const key = type === 'object' || type === 'closure' || type === 'native' ? `${type} ${name.slice(0, 60)}` : type;
    const kind = out.get(key) ?? { count: 0, bytes: 0 };
    kind.count += 1;
    kind.bytes += snap.nodes[i + (sizeAt ?? 3)] ?? 0;
    out.set(key, kind);
  }
  return out;
}

const [beforePath, afterPath, perArg, topArg] = process.argv.slice(2);
if (!beforePath || !afterPath || !perArg) {
  process.stderr.write('usage: heap-summary.ts BEFORE.heapsnapshot AFTER.heapsnapshot N [TOP]\n');
  process.exit(2);
}
const per = Number(perArg);
const before = await kinds(beforePath);
const after = await kinds(afterPath);
const rows = [...after.keys(), ...[...before.keys()].filter((k) => !after.has(k))].map((key) => {
  const a = after.get(key) ?? { count: 0, bytes: 0 };
  const b = before.get(key) ?? { count: 0, bytes: 0 };
  return { key, count: (a.count - b.count) / per, bytes: (a.bytes - b.bytes) / per };
});
rows.sort((x, y) => Math.abs(y.bytes) - Math.abs(x.bytes));
const total = rows.reduce((sum, r) => ({ count: sum.count + r.count, bytes: sum.bytes + r.bytes }), {
  count: 0,
  bytes: 0,
});
process.stdout.write(
  `per unit (÷ ${per}): ${total.count.toFixed(1)} heap nodes, ${(total.bytes / 1024).toFixed(2)} KiB\n`,
);
process.stdout.write(`${'bytes'.padStart(10)} ${'count'.padStart(8)}  kind\n`);
for (const r of rows.slice(0, Number(topArg ?? 40))) {
  process.stdout.write(`${r.bytes.toFixed(0).padStart(10)} ${r.count.toFixed(2).padStart(8)}  ${r.key}\n`);
}
