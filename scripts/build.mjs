// `npm run build`: compiles src/ into dist/ with tsc (tsconfig.build.json, ESM, NodeNext),
// with declarations beside the JavaScript (the typed client, `switchboard/client`, ships
// its types from them), and copies the board's static files beside the compiled board
// module, so dist/ runs with no loader. Runs on `npm ci` (the `prepare` script) and before every `npm test`, bench and
// chaos run; incremental (dist/.tsbuildinfo), so a build with nothing changed costs a few
// seconds. Compiled files whose source is gone are deleted, so dist/ never runs code that
// src/ no longer has.
//
// Without TypeScript installed (`npm ci --omit=dev` in a checkout) an existing dist/ is
// kept as it is; with no dist/ either, it fails and says what to run.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  if (existsSync(join(dist, 'cli', 'main.js'))) {
    process.stdout.write('build: typescript is not installed; keeping the existing dist/\n');
    process.exit(0);
  }
  process.stderr.write(
    'build: typescript is not installed and dist/ is missing: run `npm ci` (with dev dependencies)\n',
  );
  process.exit(1);
}

const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const source = join(src, relative(dist, path));
    if (entry.isDirectory()) {
      if (relative(dist, path) === join('board', 'static')) continue;
      prune(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (/\.(d\.ts|js)$/.test(entry.name) && !existsSync(source.replace(/\.(d\.ts|js)$/, '.ts'))) {
      rmSync(path);
    }
  }
}
prune(dist);

const staticDir = join(dist, 'board', 'static');
rmSync(staticDir, { recursive: true, force: true });
cpSync(join(src, 'board', 'static'), staticDir, { recursive: true });
