// Pins the layering of docs/architecture.md by reading every import of src/: one
// direction of imports (surfaces → http/ and use cases → store/ → db/ → domain/), the
// surfaces as sibling leaves, one composition root, pg only in db/ and store/,
// process.env only in config/, no module-level state. Each rule lists its offenders.

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

test('store/ knows no policy and no surface: never admission/, todos/, the host or a surface', () => {
  assert.deepEqual(
    crossings(among('store'), (to) => among('admission', 'todos', 'http', 'cli')(to) || isSurface(to)),
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

test('the architecture check itself sees the source tree and its imports', () => {
  assert.ok(files.length > 20);
  assert.ok(files.some((f) => f.path === 'store/claims.ts'));
  assert.ok(crossings(among('main'), among('services')).length > 0, 'main.ts imports services.ts');
  assert.ok(crossings(among('api'), among('http')).length > 0, 'the API imports the host');
});
