// A fault-tolerant MCP client for the reliability suite: raw JSON-RPC over node:http
// (like bench/mcp-client.ts, so 60 clients cost the shared 2 cores little), spread over
// the serve instances. It never hides an outcome it cannot be sure of: a call answers
// `ok`, `tool_error` (a domain failure with its code) or `lost` (connection refused or
// reset, a timeout, a 5xx: the verb may or may not have run). A lost call moves the
// client to another instance; a 404 for its session re-initialises it (a new session)
// unless the caller forbids that. Every 5xx and every `internal` tool error is recorded
// in the shared tally, which the suite reports and checks.

import { Agent, request, type IncomingMessage } from 'node:http';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

export type Outcome =
  | { kind: 'ok'; value: Record<string, unknown> }
  | { kind: 'tool_error'; code: string; error: Record<string, unknown> }
  | { kind: 'lost'; reason: string; refused?: boolean };

/** What every client saw, for the progress lines and the verdict. */
export interface Tally {
  calls: number;
  lost: number;
  /** HTTP status ≥ 500 answers, by status and error code (`503 unavailable`, `500 internal`…). */
  http5xx: Map<string, number>;
  /** Tool errors by code. */
  toolErrors: Map<string, number>;
  /** Sessions that answered 404 and were initialised afresh. */
  sessionsLost: number;
  /**
   * Calls refused 429 by the credential's /mcp rate limit (SWITCHBOARD_MCP_RATE): 48 idle
   * workers polling for work can outrun it. The limit is the server's answer, not a fault:
   * the client waits the Retry-After it is told, as an agent must, and the call did not run.
   */
  rateLimited: number;
  /** Per verb: calls, total and longest wall time in ms (whatever the outcome). */
  latency: Map<string, { n: number; totalMs: number; maxMs: number }>;
  /** The first few unexpected answers (500s, internal errors), verbatim. */
  samples: string[];
  /**
   * 5xx answers other than 503 `unavailable`, and `internal` tool errors. `unavailable` is
   * expected at any time here: backends are terminated all along, not only in the restart.
   */
  unexpected: number;
}

export function newTally(): Tally {
  return {
    calls: 0,
    lost: 0,
    http5xx: new Map(),
    toolErrors: new Map(),
    sessionsLost: 0,
    rateLimited: 0,
    samples: [],
    latency: new Map(),
    unexpected: 0,
  };
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function sample(tally: Tally, text: string): void {
  tally.unexpected += 1;
  if (tally.samples.length < 20) tally.samples.push(`${new Date().toISOString()} ${text.slice(0, 400)}`);
}

interface Raw {
  status: number;
  type: string;
  text: string;
  sessionId: string | undefined;
  retryAfter: string | undefined;
}

/** Per-request timeout: longer than the server's 10 s pool checkout, so a slow answer still counts. */
const REQUEST_TIMEOUT_MS = 30_000;

function post(agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'] ?? '',
          text: Buffer.concat(chunks).toString('utf8'),
          sessionId: typeof res.headers['mcp-session-id'] === 'string' ? res.headers['mcp-session-id'] : undefined,
          retryAfter: res.headers['retry-after'],
        }),
      );
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

interface Answer {
  result?: unknown;
  error?: unknown;
}

function answerOf(raw: Raw): Answer | null {
  if (raw.text === '') return {};
  if (raw.type.startsWith('application/json')) return JSON.parse(raw.text) as Answer;
  const data = /^data: (.*)$/m.exec(raw.text)?.[1];
  return data ? (JSON.parse(data) as Answer) : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ClientOptions {
  urls: () => string[];
  credential: string;
  name: string;
  tally: Tally;
  /** Re-initialise on a 404 session (todo workers); when false the client reports `session_lost`. */
  renewSession: boolean;
  /** Declare the claude/channel capability: only such sessions are pushed channel notifications. */
  channel?: boolean;
}

export class ChaosClient {
  sessionId: string | null = null;
  /** The instance this client talks to now (an index into urls()). */
  private at: number;
  private readonly agents = new Map<string, Agent>();
  private next = 1;
  /** Set when the session answered 404 and renewSession is false: the caller must notice. */
  sessionGone = false;

  constructor(private readonly o: ClientOptions) {
    this.at = Math.floor(Math.random() * 1000);
  }

  url(): string {
    const urls = this.o.urls();
    return urls[this.at % urls.length] ?? '';
  }

  /** Moves to another instance (after a lost call). */
  hop(): void {
    this.at += 1 + Math.floor(Math.random() * Math.max(1, this.o.urls().length - 1));
  }

  private agent(url: string): Agent {
    let a = this.agents.get(url);
    if (!a) {
      a = new Agent({ keepAlive: true, maxSockets: 1 });
      this.agents.set(url, a);
    }
    return a;
  }

  headers(): Record<string, string> {
    const h: Record<string, string> = {
      authorization: `Bearer ${this.o.credential}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    if (this.sessionId) {
      h['mcp-session-id'] = this.sessionId;
      h['mcp-protocol-version'] = LATEST_PROTOCOL_VERSION;
    }
    return h;
  }

  /** initialize + notifications/initialized, retried across instances until it works. */
  async open(stop: () => boolean): Promise<boolean> {
    while (!stop()) {
      const url = this.url();
      try {
        this.sessionId = null;
        const raw = await post(
          this.agent(url),
          new URL('/mcp', url),
          this.headers(),
          JSON.stringify({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: {
              protocolVersion: LATEST_PROTOCOL_VERSION,
              capabilities: this.o.channel ? { experimental: { 'claude/channel': {} } } : {},
              clientInfo: { name: this.o.name, version: '1' },
            },
          }),
        );
        if (raw.status !== 200 || !raw.sessionId) throw new Error(`initialize answered ${raw.status}: ${raw.text}`);
        this.sessionId = raw.sessionId;
        const ack = await post(
          this.agent(url),
          new URL('/mcp', url),
          this.headers(),
          JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        );
        if (ack.status >= 300) throw new Error(`notifications/initialized answered ${ack.status}`);
        this.sessionGone = false;
        return true;
      } catch {
        this.hop();
        await sleep(100 + Math.random() * 200);
      }
    }
    return false;
  }

  /** One tools/call on the current instance; see Outcome. */
  async call(name: string, args: Record<string, unknown>): Promise<Outcome> {
    const started = Date.now();
    try {
      return await this.callOnce(name, args);
    } finally {
      const ms = Date.now() - started;
      const l = this.o.tally.latency.get(name) ?? { n: 0, totalMs: 0, maxMs: 0 };
      l.n += 1;
      l.totalMs += ms;
      l.maxMs = Math.max(l.maxMs, ms);
      this.o.tally.latency.set(name, l);
    }
  }

  private async callOnce(name: string, args: Record<string, unknown>): Promise<Outcome> {
    const url = this.url();
    const tally = this.o.tally;
    tally.calls += 1;
    let raw: Raw;
    try {
      raw = await post(
        this.agent(url),
        new URL('/mcp', url),
        this.headers(),
        JSON.stringify({ jsonrpc: '2.0', id: this.next++, method: 'tools/call', params: { name, arguments: args } }),
      );
    } catch (err) {
      tally.lost += 1;
      this.hop();
      // Refused: the request never reached a server, so it certainly did not run.
      const refused = (err as { code?: unknown }).code === 'ECONNREFUSED';
      return { kind: 'lost', reason: (err as Error).message, refused };
    }
    if (raw.status >= 500) {
      let code: string;
      try {
        const found = (JSON.parse(raw.text) as { error?: { code?: unknown } }).error?.code;
        code = typeof found === 'string' ? found : '';
      } catch {
        code = 'non-json';
      }
      bump(tally.http5xx, `${raw.status} ${code}`);
      if (!(raw.status === 503 && code === 'unavailable')) {
        sample(tally, `${name} on ${url}: HTTP ${raw.status} ${raw.text}`);
      }
      tally.lost += 1;
      this.hop();
      return { kind: 'lost', reason: `HTTP ${raw.status} ${code}` };
    }
    if (raw.status === 429) {
      tally.rateLimited += 1;
      const seconds = Number(raw.retryAfter);
      await sleep((Number.isFinite(seconds) && seconds > 0 ? seconds : 1) * 1000);
      return { kind: 'lost', reason: 'HTTP 429 rate limited', refused: true };
    }
    if (raw.status === 404) {
      tally.sessionsLost += 1;
      this.sessionGone = true;
      if (this.o.renewSession) await this.open(() => false);
      return { kind: 'lost', reason: 'session_lost' };
    }
    let answer: Answer | null;
    try {
      answer = answerOf(raw);
    } catch {
      answer = null;
    }
    if (raw.status !== 200 || !answer || answer.error || !answer.result) {
      sample(tally, `${name} on ${url}: HTTP ${raw.status} ${raw.text}`);
      tally.lost += 1;
      return { kind: 'lost', reason: `HTTP ${raw.status}` };
    }
    const result = answer.result as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
      content?: Array<{ text?: string }>;
    };
    if (result.isError) {
      // An error result carries its JSON as text only (docs/design/mcp-surface.md, "Tool results and errors").
      const error = (errorBody(result.content?.[0]?.text).error ?? {}) as Record<string, unknown>;
      const code = typeof error.code === 'string' ? error.code : 'unknown';
      bump(tally.toolErrors, code);
      if (code === 'internal') {
        sample(tally, `${name} on ${url}: tool error ${JSON.stringify(error)}`);
      }
      if (code === 'internal' || code === 'unavailable') this.hop();
      return { kind: 'tool_error', code, error };
    }
    return { kind: 'ok', value: result.structuredContent ?? {} };
  }

  /**
   * Holds the session's notification stream (GET /mcp) on some instance until stop(),
   * reconnecting elsewhere whenever it drops; `onNotification` gets every JSON-RPC message.
   */
  async holdStream(stop: () => boolean, onNotification: (message: Record<string, unknown>) => void): Promise<void> {
    while (!stop()) {
      if (!this.sessionId || this.sessionGone) {
        await sleep(200);
        continue;
      }
      const url = this.url();
      await new Promise<void>((done) => {
        const req = request(new URL('/mcp', url), {
          method: 'GET',
          headers: { ...this.headers(), accept: 'text/event-stream' },
        });
        const finish = () => {
          clearInterval(poll);
          done();
        };
        const poll = setInterval(() => {
          if (stop()) req.destroy();
        }, 250);
        req.on('response', (res: IncomingMessage) => {
          if (res.statusCode !== 200) {
            if (res.statusCode === 404) this.sessionGone = true;
            res.resume();
            res.on('end', finish);
            res.on('error', finish);
            return;
          }
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
              const event = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              const data = event
                .split('\n')
                .filter((l) => l.startsWith('data:'))
                .map((l) => l.slice(5).trimStart())
                .join('\n');
              if (data) {
                try {
                  onNotification(JSON.parse(data) as Record<string, unknown>);
                } catch {
                  /* not JSON: ignored */
                }
              }
            }
          });
          res.on('end', finish);
          res.on('error', finish);
          res.on('close', finish);
        });
        req.on('error', finish);
        req.end();
      });
      if (!stop()) {
        this.hop();
        await sleep(100 + Math.random() * 300);
      }
    }
  }

  /**
   * Ends the session (DELETE /mcp), retried across instances until an answer says it is
   * closed: 200, or 404 when an earlier DELETE whose answer was lost already closed it.
   */
  async end(): Promise<boolean> {
    if (!this.sessionId) return false;
    for (let tries = 0; tries < 60; tries++) {
      const url = this.url();
      try {
        const headers = this.headers();
        delete headers['content-type'];
        const raw = await new Promise<number>((resolve, reject) => {
          const req = request(
            new URL('/mcp', url),
            { method: 'DELETE', agent: this.agent(url), headers, timeout: REQUEST_TIMEOUT_MS },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
              res.on('error', reject);
            },
          );
          req.on('timeout', () => req.destroy(new Error('request timed out')));
          req.on('error', reject);
          req.end();
        });
        if (raw === 200 || raw === 404) return true;
      } catch {
        /* lost: another instance */
      }
      this.hop();
      await sleep(100 + Math.random() * 200);
    }
    return false;
  }

  close(): void {
    for (const a of this.agents.values()) a.destroy();
  }
}

/** An error result's text as JSON, or nothing when it is not JSON. */
function errorBody(text: string | undefined): { error?: unknown } {
  try {
    return JSON.parse(text ?? '') as { error?: unknown };
  } catch {
    return {};
  }
}
