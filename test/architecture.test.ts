// Pins the layering of docs/architecture.md by reading every import of src/: one
// direction of imports (surfaces → http/ and use cases → store/ → db/ → domain/), the
// surfaces as sibling leaves, one composition root, pg only in db/ and store/,
// process.env only in config/, OpenTelemetry only in tracing/ (loaded lazily), no
// module-level state, no import circles. Each rule lists its offenders.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

interface Source {
  /** Relative to src/, e.g. `api/routes.ts`. */
  path: string;
  text: string;
  /** Every module it names: static imports and re-exports, type-only ones and import() too. */
  imports: string[];
}

const files: Source[] = sources(SRC).map((full) => {
  const text = readFileSync(full, 'utf8');
  const named = [
    ...text.matchAll(/^\s*(?:import|export)\b[^'";]*?\bfrom\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1] ?? '');
  return { path: relative(SRC, full), text, imports: named };
});

/** The top folder of a path under src/ (`api`), or the file's stem at the top (`main`). */
function roomOf(path: string): string {
  return path.includes('/') ? (path.split('/')[0] ?? '') : path.replace(/\.ts$/, '');
}

/** The src/-relative file a relative import names, or null for a package. */
function target(from: Source, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return relative(SRC, resolve(SRC, dirname(from.path), spec)).replace(/\.js$/, '.ts');
}

/** Every import from a room in `from` into a room in `to`, as "file -> file". */
function crossings(from: (room: string) => boolean, to: (room: string, fromRoom: string) => boolean): string[] {
  return files.flatMap((f) => {
    const room = roomOf(f.path);
    if (!from(room)) return [];
    return f.imports
      .map((i) => target(f, i))
      .filter((t): t is string => t !== null && to(roomOf(t), room))
      .map((t) => `${f.path} -> ${t}`);
  });
}

const SURFACES = ['api', 'mcp', 'board'];
const isSurface = (room: string) => SURFACES.includes(room);
const among =
  (...rooms: string[]) =>
  (room: string) =>
    rooms.includes(room);

test('the surfaces (api/, mcp/, board/) never import each other', () => {
  assert.deepEqual(
    crossings(isSurface, (to, from) => isSurface(to) && to !== from),
    [],
  );
});

test('the surfaces import neither db/ nor store/ (not even types): they get services', () => {
  assert.deepEqual(crossings(isSurface, among('db', 'store')), []);
});

test('the HTTP host (http/) imports no surface', () => {
  assert.deepEqual(crossings(among('http'), isSurface), []);
});

test('db/ imports nothing above it (domain/ only)', () => {
  assert.deepEqual(
    crossings(among('db'), (to) => !among('db', 'domain')(to)),
    [],
  );
});

test('store/ knows no policy and no surface: never admission/, todos/, oidc/, the host or a surface', () => {
  assert.deepEqual(
    crossings(among('store'), (to) => among('admission', 'todos', 'oidc', 'http', 'cli')(to) || isSurface(to)),
    [],
  );
});

test('admission/ is pure: never db/ or store/, so it never holds a database handle', () => {
  assert.deepEqual(crossings(among('admission'), among('db', 'store')), []);
});

test('domain/ is pure: only domain/, and no database, network, file system or process access', () => {
  const impure = /^(pg|node:(fs|net|http|https|child_process|os)|fastify)(\/|$)/;
  assert.deepEqual(
    crossings(among('domain'), (to) => to !== 'domain'),
    [],
  );
  assert.deepEqual(
    files
      .filter((f) => roomOf(f.path) === 'domain' && (f.imports.some((i) => impure.test(i)) || /process\./.test(f.text)))
      .map((f) => f.path),
    [],
  );
});

test('metrics/ reads nothing itself: no db/ or store/ (the composition root hands it its reads)', () => {
  assert.deepEqual(crossings(among('metrics'), among('db', 'store')), []);
  assert.deepEqual(
    files.filter((f) => roomOf(f.path) === 'metrics' && f.imports.includes('pg')).map((f) => f.path),
    [],
  );
});

test('oauth/ is a use case: no surface, not the host, and no pg (its SQL is in store/oauth.ts)', () => {
  assert.deepEqual(
    crossings(among('oauth'), (to) => isSurface(to) || among('http', 'cli', 'services', 'main')(to)),
    [],
  );
  assert.deepEqual(
    files.filter((f) => roomOf(f.path) === 'oauth' && f.imports.includes('pg')).map((f) => f.path),
    [],
  );
  assert.ok(crossings(among('oauth'), among('store')).length > 0, 'oauth/ reaches its rows through store/');
});

test('oidc/ is a use case: no surface, not the host, and no pg (its SQL is in store/oidc.ts)', () => {
  assert.deepEqual(
    crossings(among('oidc'), (to) => isSurface(to) || among('http', 'cli', 'services', 'main')(to)),
    [],
  );
  assert.deepEqual(
    files.filter((f) => roomOf(f.path) === 'oidc' && f.imports.includes('pg')).map((f) => f.path),
    [],
  );
  assert.ok(crossings(among('oidc'), among('store')).length > 0, 'oidc/ reaches its rows through store/');
  // Only oidc/ speaks to the provider: the surfaces get its use cases, never the library.
  assert.deepEqual(
    files.filter((f) => f.imports.includes('openid-client') && roomOf(f.path) !== 'oidc').map((f) => f.path),
    [],
  );
  // Off, it is never loaded: only types are imported statically, the library through import().
  assert.deepEqual(
    files
      .filter((f) => /^\s*import\s+(?!type\b)[^'";]*?\bfrom\s+['"]openid-client['"]/m.test(f.text))
      .map((f) => f.path),
    [],
  );
});

test('cli/ never imports db/ or store/: serve and migrate reach the server through main.ts', () => {
  assert.deepEqual(crossings(among('cli'), among('db', 'store')), []);
});

test('only db/ and store/ import pg', () => {
  assert.deepEqual(
    files.filter((f) => f.imports.includes('pg') && !among('db', 'store')(roomOf(f.path))).map((f) => f.path),
    [],
  );
});

test('zod 4 only: every schema imports zod itself, never a versioned subpath', () => {
  assert.deepEqual(
    files.filter((f) => f.imports.some((i) => i.startsWith('zod/'))).map((f) => f.path),
    [],
  );
});

test('only config/ reads process.env', () => {
  assert.deepEqual(
    files.filter((f) => /process\.env\b/.test(f.text) && roomOf(f.path) !== 'config').map((f) => f.path),
    [],
  );
});

test('one composition root: services are built in services.ts and served from main.ts only', () => {
  const wiring =
    /\bnew (Doorbell|MessagePump|LocalStreams|InstanceHeartbeat|SweepRunner|RingRowWriter|SelfTestRinger|HookDelivery|NotifyHooks|PresenceService|CapacitySetting|Metrics|NotifyBus|Waiters)\(/;
  assert.deepEqual(
    files.filter((f) => wiring.test(f.text) && !['services.ts', 'main.ts'].includes(f.path)).map((f) => f.path),
    [],
  );
  const builders = files.filter((f) => /\bbuildServices\(/.test(f.text)).map((f) => f.path);
  assert.deepEqual(builders.sort(), ['main.ts', 'services.ts']);
  // The surfaces are registered on the host from main.ts and nowhere else.
  const registrars = files
    .filter((f) => /(?<!function )\b(apiRoutes|boardRoutes|mcpRoutes)\(app\b/.test(f.text))
    .map((f) => f.path);
  assert.deepEqual(registrars, ['main.ts']);
});

test('tracing/ sits low: it imports config/ types and packages only, and only tracing/ names OpenTelemetry', () => {
  assert.deepEqual(
    crossings(among('tracing'), (to) => !among('tracing', 'config')(to)),
    [],
  );
  assert.deepEqual(
    files
      .filter((f) => f.imports.some((i) => i.startsWith('@opentelemetry/')) && roomOf(f.path) !== 'tracing')
      .map((f) => f.path),
    [],
  );
  // Off, nothing of OpenTelemetry loads (docs/design/tracing.md): the SDK module is only
  // ever reached through import(), and the interface module imports no package itself.
  const index = files.find((f) => f.path === 'tracing/index.ts');
  assert.ok(index);
  assert.deepEqual(
    index.imports.filter((i) => !i.startsWith('.')),
    [],
  );
  assert.deepEqual(
    files.filter((f) => /^\s*import\b[^'";]*?\bfrom\s+['"][^'"]*\/otel\.js['"]/m.test(f.text)).map((f) => f.path),
    [],
  );
});

test('one event bus type: Bus and its closed union of events live in domain/events.ts alone', () => {
  assert.deepEqual(
    files
      .filter((f) => /\binterface Bus\b|subscribe\(type: string/.test(f.text) && f.path !== 'domain/events.ts')
      .map((f) => f.path),
    [],
  );
});

test('no module-level state: nothing declared with a top-level let', () => {
  assert.deepEqual(
    files.filter((f) => /^let\s/m.test(f.text)).map((f) => f.path),
    [],
  );
});

/** The groups of files that import each other in a loop (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) ?? 0);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

test('no import circles: no files import each other in a loop, type-only and import() imports included', () => {
  const graph = new Map(
    files.map((f) => [f.path, f.imports.map((i) => target(f, i)).filter((t): t is string => t !== null)]),
  );
  assert.deepEqual(circles(graph), []);
  // The check is not blind: a loop of three and a file importing itself are found.
  const loop = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts', 'd.ts']],
    ['d.ts', ['d.ts']],
  ]);
  assert.deepEqual(circles(loop), [['d.ts'], ['a.ts', 'b.ts', 'c.ts']]);
});

test('the architecture check itself sees the source tree and its imports', () => {
  assert.ok(files.length > 20);
  assert.ok(files.some((f) => f.path === 'store/claims.ts'));
  assert.ok(crossings(among('main'), among('services')).length > 0, 'main.ts imports services.ts');
  assert.ok(crossings(among('api'), among('http')).length > 0, 'the API imports the host');
});
