// One POST of a notify hook to a checked address. The connection goes to the address the
// guard validated (never a fresh DNS lookup); the URL's hostname is kept for the Host
// header and for TLS (SNI and certificate verification), so pinning the address does not
// weaken TLS. Redirects are never followed (a 3xx is a failed attempt), at most 64 KiB of
// the response is read, and the whole attempt is bounded by the timeout.

import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { HookTarget } from './guard.js';

/** Enough of a response body to log why it failed; a receiver cannot make us buffer more. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendOptions {
  timeoutMs: number;
  /** Extra trusted CA certificates (PEM), for receivers with a private CA (tests). */
  ca?: string;
}

export type SendResult = { status: number } | { error: string };

export function send(
  target: HookTarget,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const url = target.url;
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const request = (secure ? https : http).request({
    host: target.address,
    family: target.family,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    agent: false,
    headers: { ...headers, host: url.host, 'content-length': String(Buffer.byteLength(body)) },
    ...(secure ? { servername: isIP(hostname) === 0 ? hostname : '', ...(options.ca ? { ca: options.ca } : {}) } : {}),
  });
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ error: `timed out after ${options.timeoutMs} ms` }), options.timeoutMs);
    request.on('error', (err) => done({ error: err.message }));
    request.on('response', (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) done({ status: response.statusCode ?? 0 });
      });
      response.on('end', () => done({ status: response.statusCode ?? 0 }));
      response.on('error', () => done({ status: response.statusCode ?? 0 }));
    });
    request.end(body);
  });
}
