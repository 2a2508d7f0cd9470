// The board's static files: its stylesheet and script (static/, which the build copies
// beside the compiled module into dist/board/static/), and htmx served from the installed
// `htmx.org` package (no CDN). Paths go through fileURLToPath, so an install folder with a
// space in its name works. Read once when the routes are registered; browsers may keep
// them for an hour (pages themselves are never cached).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

const require = createRequire(import.meta.url);
const beside = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

const FILES: Record<string, { path: string; type: string }> = {
  'board.css': { path: beside('./static/board.css'), type: 'text/css; charset=utf-8' },
  'board.js': { path: beside('./static/board.js'), type: 'text/javascript; charset=utf-8' },
  'htmx.min.js': { path: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript; charset=utf-8' },
};

export function assetRoutes(app: FastifyInstance): void {
  const loaded = Object.fromEntries(
    Object.entries(FILES).map(([name, f]) => [name, { body: readFileSync(f.path), type: f.type }]),
  );
  const cacheable = async (_request: unknown, reply: FastifyReply) => {
    if (reply.statusCode === 200) void reply.header('Cache-Control', 'public, max-age=3600');
  };
  app.get<{ Params: { name: string } }>('/board/static/:name', { onSend: cacheable }, async (request, reply) => {
    const file = Object.hasOwn(loaded, request.params.name) ? loaded[request.params.name] : undefined;
    if (!file) return reply.status(404).type('text/plain; charset=utf-8').send('not found');
    return reply.type(file.type).send(file.body);
  });
}
