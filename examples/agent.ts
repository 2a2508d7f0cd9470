// A minimal agent loop over MCP: waits for work with `claim_next {wait_seconds}`, does it
// (here: reads the payload and answers it back), and settles it with `complete`.
//
// Run it with an endpoint's credential (`switchboard endpoint vend my-agent --queue inbox`
// prints it once):
//
//   SWITCHBOARD_URL=http://127.0.0.1:8080 SWITCHBOARD_CREDENTIAL=sbk_… npx tsx examples/agent.ts 3
//
// The argument is how many todos to finish before it exits (default: run forever). A
// claim that waited `wait_seconds` and found nothing simply loops.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.env.SWITCHBOARD_URL ?? 'http://127.0.0.1:8080';
const credential = process.env.SWITCHBOARD_CREDENTIAL;
if (!credential) throw new Error('set SWITCHBOARD_CREDENTIAL (an endpoint credential, sbk_…)');
const limit = process.argv[2] === undefined ? Infinity : Number(process.argv[2]);

const client = new Client({ name: 'switchboard-example-agent', version: '0.1.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  }),
);

interface Claimed {
  todo?: { id: string; title: string; payload: unknown };
  lease_token?: string;
}

/** A tool's structured answer; a refusal (isError) throws with its text. */
async function call(name: string, args: Record<string, unknown>): Promise<unknown> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

let done = 0;
while (done < limit) {
  const claimed = (await call('claim_next', { wait_seconds: 10 })) as Claimed;
  if (!claimed.todo || !claimed.lease_token) continue;
  console.log(`claimed ${claimed.todo.id}: ${claimed.todo.title}`);
  await call('complete', {
    id: claimed.todo.id,
    lease_token: claimed.lease_token,
    result: { echoed: claimed.todo.payload },
  });
  console.log(`completed ${claimed.todo.id}`);
  done++;
}
await client.close();
