// The HTTP listener of a starting server. It is bound before the database is reached, so
// /healthz answers 200 and /readyz 503 with the reason while the start waits for
// PostgreSQL; every other route answers 503 `unavailable`. Once the app is built, Fastify
// takes over the same server (its serverFactory), so the port never closes in between.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { serverTimeouts, type ConnectionLimits } from './connections.js';
import { errorBody } from './errors.js';
import type { Readiness } from './readiness.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface EarlyServer {
  server: Server;
  /** For Fastify's serverFactory: keeps the app's handler for attach(). */
  factory: (handler: Handler) => Server;
  /** Before app.ready(): stop answering upgrades (the app's WebSocket plugin takes them). */
  releaseUpgrades(): void;
  /** After app.ready(): every request goes to the app from now on. */
  attach(): void;
  /** Stops accepting, ends idle keep-alive connections and waits for the rest. */
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    ...(status === 503 ? { 'retry-after': '2' } : {}),
  });
  res.end(JSON.stringify(body));
}

export async function listenEarly(a: {
  host: string;
  port: number;
  readiness: Readiness;
  version: object;
  /** The deadlines for receiving a request, set when the server is made (Node reads the check interval only then). */
  connections: ConnectionLimits;
}): Promise<EarlyServer> {
  const starting: Handler = (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return send(res, 200, { status: 'ok' });
    if (path === '/readyz') return send(res, 503, a.readiness.body());
    if (path === '/version') return send(res, 200, a.version);
    const { reason } = a.readiness.current;
    send(res, 503, errorBody('unavailable', `the server is starting (${reason ?? 'starting'}); retry shortly`));
  };
  const refuseUpgrade = (_req: IncomingMessage, socket: Duplex) => {
    socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  };
  const server = createServer(serverTimeouts(a.connections), starting);
  server.on('upgrade', refuseUpgrade);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(a.port, a.host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  let appHandler: Handler | null = null;
  let closed: Promise<void> | null = null;
  return {
    server,
    factory(handler) {
      appHandler = handler;
      return server;
    },
    releaseUpgrades() {
      server.removeListener('upgrade', refuseUpgrade);
    },
    attach() {
      if (!appHandler) throw new Error('attach() before the app was built on this server');
      server.removeListener('upgrade', refuseUpgrade);
      server.removeListener('request', starting);
      server.on('request', appHandler);
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        // Streams were ended by the app's close; a connection still busy after 10 s is cut.
        const force = setTimeout(() => server.closeAllConnections(), 10_000);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
  };
}
