// A raw HTTP client for the fuzzers (node:http, so any method, header, path and body
// bytes go out as generated), the oracle every answer is judged by, and the harvest of
// ids from answers into the run's pools.

import http from 'node:http';
import type { Rng } from './rng.js';
import { encode, type Body } from './values.js';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are judged field by field
  json: any;
}

export interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

// A connection per request: an answer that closes its connection (431, a parser error)
// must not fail the next case that would have reused it.
const agent = new http.Agent({ keepAlive: false });

/** Sends one request; a transport failure (the server dropped the connection) is status 0. */
export function send(base: string, request: Sent, timeoutMs = 30_000): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        headers: request.headers,
        agent,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', (err) => resolve({ status: 0, headers: {}, text: String(err), json: undefined }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ status: 0, headers: {}, text: String(err), json: undefined }));
    // A body always goes with its length: Node sends a GET or DELETE body unframed otherwise.
    if (request.body !== undefined) {
      req.setHeader('content-length', Buffer.byteLength(request.body));
      req.end(request.body);
    } else req.end();
  });
}

/** The bytes of a generated body and the content type that goes with them (or a fuzzed one). */
export function bodyBytes(body: Body, rng: Rng): { bytes: string | Buffer | undefined; type: string | undefined } {
  if (body.kind === 'none') return { bytes: undefined, type: rng.chance(0.2) ? 'application/json' : undefined };
  const type = rng.weighted<string | undefined>([
    [20, 'application/json'],
    [1, 'application/json; charset=utf-8'],
    [1, 'application/json; charset=utf-16'],
    [1, 'APPLICATION/JSON'],
    [1, 'text/plain'],
    [1, 'application/x-www-form-urlencoded'],
    [1, 'multipart/form-data; boundary=x'],
    [1, 'application/octet-stream'],
    [1, undefined],
    [1, 'application/json, text/html'],
    [1, ';;;'],
  ]);
  return { bytes: body.kind === 'raw' ? body.text : encode(body.value, rng), type };
}

/** A problem the oracle found with one answer. */
export interface Finding {
  case: number;
  /** What the finding is grouped by: the problem and the route or verb. */
  key: string;
  surface: string;
  problem: string;
  request: string;
  answer: string;
}

export function describeSent(sent: Sent): string {
  const body = sent.body === undefined ? '' : ` body=${String(sent.body).slice(0, 300)}`;
  const auth = sent.headers.authorization ? ` auth=${sent.headers.authorization.slice(0, 20)}` : '';
  const type = sent.headers['content-type'] ? ` type=${sent.headers['content-type']}` : '';
  return `${sent.method} ${sent.path.slice(0, 300)}${auth}${type}${body}`;
}

/** Documented statuses of each error code (src/http/errors.ts HTTP_STATUS). */
export const ERROR_STATUS: Record<string, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  failed_precondition: 409,
  deferred: 409,
  queue_full: 409,
  entry_not_found: 404,
  queue_changed: 409,
  resource_exhausted: 429,
  admission_unavailable: 503,
  unavailable: 503,
};

/** Whether an error code goes with this status (a body over 1 MiB is invalid_argument with 413). */
export function statusFits(code: string, status: number): boolean {
  return ERROR_STATUS[code] === status || (code === 'invalid_argument' && status === 413);
}

/**
 * The oracle for one HTTP answer of the API: below 500, and an error answer is the
 * documented `{error: {code, message, details?}}` whose code goes with its status.
 * Returns the problem, or null.
 */
export function judgeApi(answer: Answer): string | null {
  if (answer.status === 0) return `no answer: ${answer.text}`;
  if (answer.status >= 500) return `status ${answer.status}`;
  if (answer.status < 400) return null;
  // Node's HTTP parser refuses headers over 16 KiB before any route runs (clientError).
  if (answer.status === 431) return null;
  const error = answer.json?.error;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') {
    return `error answer not in the documented shape`;
  }
  if (!statusFits(error.code, answer.status)) return `code ${error.code} with status ${answer.status}`;
  if (error.details !== undefined && (typeof error.details !== 'object' || error.details === null)) {
    return 'details is not an object';
  }
  return null;
}

const ID = /^(?:[a-z]{2}_[0-9A-Za-z]{10,40}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The run's pools of ids and other values seen in answers, by kind (the id prefix, or the field name). */
export class Pools {
  private readonly pools = new Map<string, string[]>();

  constructor(private readonly reserved: ReadonlySet<string> = new Set()) {}

  add(kind: string, value: string): void {
    if (this.reserved.has(value)) return;
    const pool = this.pools.get(kind) ?? [];
    if (pool.includes(value)) return;
    pool.push(value);
    if (pool.length > 200) pool.shift();
    this.pools.set(kind, pool);
  }

  get(kind: string): string[] {
    return this.pools.get(kind) ?? [];
  }

  /** Every id of every kind, for the mutations that put an id where another belongs. */
  all(): string[] {
    return [...this.pools.entries()].filter(([k]) => k !== 'slug').flatMap(([, v]) => v);
  }

  /** Collects the ids (and slugs) anywhere in an answer body. */
  harvest(value: unknown, key = '', depth = 0): void {
    if (depth > 8 || value === null || value === undefined) return;
    if (typeof value === 'string') {
      if (key === 'slug') this.add('slug', value);
      else if ((key === 'id' || key.endsWith('_id') || key === 'entries') && ID.test(value)) {
        this.add(value.includes('-') ? 'uuid' : value.slice(0, 2), value);
      }
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value.slice(0, 50)) this.harvest(item, key, depth + 1);
      return;
    }
    if (typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) this.harvest(v, k, depth + 1);
    }
  }
}

/** Findings grouped by key: a line per group with its count and first example. */
export function summarize(findings: Finding[]): string {
  const groups = new Map<string, { count: number; first: Finding }>();
  for (const f of findings) {
    const entry = groups.get(f.key);
    if (entry) entry.count += 1;
    else groups.set(f.key, { count: 1, first: f });
  }
  return [...groups]
    .map(
      ([key, { count, first }]) =>
        `${count}× ${key.replace(/\s+/g, ' ')}\n    case ${first.case}: ${first.request.replace(/\s+/g, ' ')}\n    → ${first.answer.replace(/\s+/g, ' ').slice(0, 200)}`,
    )
    .join('\n');
}
