// The benchmark's two MCP clients, behind one shape. `sdk`: the SDK's Client over
// StreamableHTTPClientTransport, as Claude Code and most agents run it. `raw`: the same
// protocol spoken with node:http — initialize, notifications/initialized, the GET
// notification stream held open, then JSON-RPC tools/call POSTs — so the clients, which
// share this machine's two cores with the server and PostgreSQL, cost as little as
// they can and the rate measures the server. The SDK client's own CPU (validation and
// SSE parsing) is about three times the raw client's per call (bench/README).

import { Agent, request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type ClientKind = 'sdk' | 'raw';

export interface BenchSession {
  /** A tool call's structured result; throws on a tool error or a protocol error. */
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  end(): Promise<void>;
}

function checked(name: string, result: CallToolResult): Record<string, unknown> {
  const body = (result.structuredContent ?? {}) as Record<string, unknown>;
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(body)}`);
  return body;
}

async function sdkSession(url: string, credential: string): Promise<BenchSession> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  });
  const client = new Client({ name: 'switchboard-bench', version: '1.0.0' });
  await client.connect(transport);
  return {
    async call(name, args) {
      return checked(name, (await client.callTool({ name, arguments: args })) as CallToolResult);
    },
    async end() {
      await transport.terminateSession();
      await client.close();
    },
  };
}

interface Answer {
  result?: unknown;
  error?: unknown;
}

/** A JSON-RPC answer from a POST, whether the server chose a JSON body or an SSE stream. */
function answerOf(res: { status: number; type: string; text: string }): Answer {
  if (res.status >= 300) throw new Error(`MCP POST answered ${res.status}: ${res.text}`);
  if (res.type.startsWith('application/json')) return JSON.parse(res.text) as Answer;
  const data = /^data: (.*)$/m.exec(res.text)?.[1];
  if (!data) throw new Error(`MCP POST answered an SSE stream without a message: ${res.text}`);
  return JSON.parse(data) as Answer;
}

/** One POST over a kept-alive connection: node:http costs far less CPU per request than fetch. */
function httpPost(agent: Agent, url: URL, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'] ?? '',
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Channel notifications' meta, as a listener of the stream is handed them. */
export type OnRing = (meta: Record<string, string>) => void;

/** Reads an SSE body and hands each notifications/claude/channel's meta to `onRing`. */
async function readRings(body: ReadableStream<Uint8Array>, onRing: OnRing): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for await (const chunk of body) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const data = /^data: (.*)$/m.exec(buffered.slice(0, end))?.[1];
        buffered = buffered.slice(end + 2);
        if (!data) continue;
        const msg = JSON.parse(data) as { method?: string; params?: { meta?: Record<string, string> } };
        if (msg.method === 'notifications/claude/channel' && msg.params?.meta) onRing(msg.params.meta);
      }
    }
  } catch {
    // The stream ended with the session (end() cancels it).
  }
}

async function rawSession(url: string, credential: string, onRing?: OnRing): Promise<BenchSession> {
  const endpoint = new URL('/mcp', url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers: Record<string, string> = {
    authorization: `Bearer ${credential}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  const post = async (body: object) => {
    const res = await httpPost(agent, endpoint, headers, JSON.stringify(body));
    return { ...res, answer: res.text === '' ? {} : answerOf(res) };
  };
  const init = await fetch(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        // A session that listens for rings declares the channel: only those are rung.
        capabilities: onRing ? { experimental: { 'claude/channel': {} } } : {},
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
  });
  const sessionId = init.headers.get('mcp-session-id');
  await init.text();
  if (!sessionId) throw new Error('initialize answered without an Mcp-Session-Id');
  headers['mcp-session-id'] = sessionId;
  headers['mcp-protocol-version'] = LATEST_PROTOCOL_VERSION;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // Held, and read only for a listener: undici cancels the body of a Response that is
  // garbage-collected.
  const stream = await fetch(endpoint, { headers: { ...headers, accept: 'text/event-stream' } });
  if (onRing && stream.body) void readRings(stream.body, onRing);
  let next = 1;
  return {
    async call(name, args) {
      const { answer } = await post({
        jsonrpc: '2.0',
        id: next++,
        method: 'tools/call',
        params: { name, arguments: args },
      });
      if (answer.error) throw new Error(`${name}: protocol error ${JSON.stringify(answer.error)}`);
      return checked(name, answer.result as CallToolResult);
    },
    async end() {
      await stream.body?.cancel();
      await (await fetch(endpoint, { method: 'DELETE', headers })).text();
      agent.destroy();
    },
  };
}

export function openSession(kind: ClientKind, url: string, credential: string, onRing?: OnRing): Promise<BenchSession> {
  return kind === 'sdk' ? sdkSession(url, credential) : rawSession(url, credential, onRing);
}
