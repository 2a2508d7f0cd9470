// A local HTTPS receiver for notify hook tests: a self-signed certificate made with
// openssl for this run, a server on 127.0.0.1:0 recording every request, a programmable
// status, and an independent Standard Webhooks verifier (not the code under test).

import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  json: Record<string, unknown>;
}

/** A certificate for the given DNS names, valid a day, with its key. */
export function selfSigned(names: string[]): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sb-hook-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        `/CN=${names[0]}`,
        '-addext',
        `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function receiver(tls: { cert: string; key: string }) {
  const received: Received[] = [];
  let status: (r: Received) => number | Promise<number> = () => 204;
  const server = createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const r: Received = {
        path: req.url ?? '',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body,
        json: JSON.parse(body) as Record<string, unknown>,
      };
      received.push(r);
      void Promise.resolve(status(r)).then((code) => {
        res.statusCode = code;
        res.end('ok');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    received,
    respond(fn: (r: Received) => number | Promise<number>) {
      status = fn;
    },
  };
}

/** Verifies a request as a Standard Webhooks receiver holding `secret` would. */
export function verifies(r: Received, secret: string): boolean {
  const id = r.headers['webhook-id'] ?? '';
  const ts = r.headers['webhook-timestamp'] ?? '';
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest();
  return (r.headers['webhook-signature'] ?? '').split(' ').some((entry) => {
    const [version, sig = ''] = entry.split(',');
    const given = Buffer.from(sig, 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
