// Pins the layering of docs/architecture.md: pg only in db/ and store/, process.env only
// in config/, surfaces never importing store/ directly, domain/ pure, metrics/ reading
// nothing itself.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const SRC = new URL('../src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const files = sources(SRC).map((path) => ({
  path: relative(SRC, path),
  text: readFileSync(path, 'utf8'),
}));

function imports(text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? '');
}

const inside = (path: string, ...folders: string[]) => folders.some((f) => path.startsWith(`${f}/`));

test('only db/ and store/ import pg', () => {
  const offenders = files.filter((f) => imports(f.text).includes('pg') && !inside(f.path, 'db', 'store'));
  assert.deepEqual(
    offenders.map((f) => f.path),
    [],
  );
});

test('only config/ reads process.env', () => {
  const offenders = files.filter((f) => /process\.env\b/.test(f.text) && !inside(f.path, 'config'));
  assert.deepEqual(
    offenders.map((f) => f.path),
    [],
  );
});

test('surfaces (mcp, api, board, cli) never import store/', () => {
  const offenders = files.filter(
    (f) => inside(f.path, 'mcp', 'api', 'board', 'cli') && imports(f.text).some((i) => /\/store\//.test(i)),
  );
  assert.deepEqual(
    offenders.map((f) => f.path),
    [],
  );
});

test('domain/ is pure: no database, network, file system or process access', () => {
  const impure = /^(pg|node:(fs|net|http|https|child_process|os)|fastify)(\/|$)/;
  const offenders = files.filter(
    (f) =>
      inside(f.path, 'domain') &&
      (imports(f.text).some((i) => impure.test(i) || i.includes('/store/') || i.includes('/db/')) ||
        /process\./.test(f.text)),
  );
  assert.deepEqual(
    offenders.map((f) => f.path),
    [],
  );
});

test('metrics/ reads nothing itself: no db/ or store/ (the composition root hands it reads)', () => {
  const offenders = files.filter(
    (f) => inside(f.path, 'metrics') && imports(f.text).some((i) => /\/(db|store)\//.test(i) || i === 'pg'),
  );
  assert.deepEqual(
    offenders.map((f) => f.path),
    [],
  );
});

test('the architecture check itself sees the source tree', () => {
  assert.ok(files.length > 20);
  assert.ok(files.some((f) => f.path === 'store/claims.ts'));
});
