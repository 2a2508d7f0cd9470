// Pins the host's defences against slow and greedy clients (docs/design/limits.md, "Slow
// clients"): a request whose headers or body trickle in is cut off at its deadline, an
// answer that takes long (a long-poll, a stream) is not, and one address holds at most
// SWITCHBOARD_MAX_CONNECTIONS_PER_IP connections at once.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, test } from 'node:test';
import pino from 'pino';
import { createHost } from '../../src/http/app.js';

const LIMITS = { requestTimeoutMs: 1_000, headersTimeoutMs: 1_000, maxPerAddress: 3 };

const app = createHost({
  log: pino({ level: 'silent' }),
  trustProxy: [],
  allowedHosts: null,
  connections: LIMITS,
});
app.post('/echo', async (request) => ({ got: request.body }));
app.get('/slow', async () => {
  await new Promise((r) => setTimeout(r, 2_500));
  return { slow: true };
});
// A long-poll is a POST whose body arrives at once and whose answer waits.
app.post('/slow', async (request) => {
  await new Promise((r) => setTimeout(r, 2_500));
  return { slow: request.body };
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
assert.ok(address && typeof address === 'object');
const port = address.port;
after(() => app.close());

/** A raw connection; `ended` resolves with what the server sent once it closes the connection. */
async function open(): Promise<{ socket: Socket; ended: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += String(chunk)));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, ended };
}

/** A request on a connection of its own, closed after the answer: status and body. */
function send(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += String(chunk)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.setHeader('content-type', 'application/json');
    req.end(body);
  });
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Writes one byte every `everyMs` until the socket closes. */
function trickle(socket: Socket, everyMs: number): () => void {
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write('a');
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
  return () => clearInterval(timer);
}

test('a body that trickles in is cut off at the request deadline, answered 408', async () => {
  const { socket, ended } = await open();
  socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"');
  const stop = trickle(socket, 100);
  const started = Date.now();
  const answer = await within(ended, 4_000, 'the trickling request being cut off');
  stop();
  assert.match(answer, /^HTTP\/1\.1 408/);
  assert.ok(Date.now() - started >= 900, `cut off after ${Date.now() - started} ms`);
});

test('headers that trickle in are cut off at the headers deadline', async () => {
  const { socket, ended } = await open();
  socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nX-Slow: ');
  const stop = trickle(socket, 100);
  const answer = await within(ended, 4_000, 'the trickling headers being cut off');
  stop();
  assert.match(answer, /^HTTP\/1\.1 408/);
});

test('an answer that takes longer than the request deadline (a long-poll, a stream) is not cut off', async () => {
  const res = await send('GET', '/slow');
  assert.equal(res.status, 200);
  assert.deepEqual(JSON.parse(res.body), { slow: true });
  const poll = await send('POST', '/slow', '{"wait_seconds":2}');
  assert.equal(poll.status, 200);
  assert.deepEqual(JSON.parse(poll.body), { slow: { wait_seconds: 2 } });
});

test('one address holds at most SWITCHBOARD_MAX_CONNECTIONS_PER_IP connections; a closed one frees its place', async () => {
  // The connections of the tests before have closed by now.
  await new Promise((r) => setTimeout(r, 100));
  const held = [await open(), await open(), await open()];
  const extra = await open();
  await within(extra.ended, 2_000, 'the connection past the cap being closed');
  for (const { socket } of held) assert.equal(socket.destroyed, false);
  held[0]?.socket.destroy();
  await held[0]?.ended;
  await new Promise((r) => setTimeout(r, 50));
  const res = await send('POST', '/echo', '{"a":1}');
  assert.equal(res.status, 200);
  for (const { socket } of held) socket.destroy();
});
