// A producer: pushes todos onto an endpoint's queue with the typed client.
//
// Run it against a server (`switchboard serve`), with a human's API token (`switchboard
// login`, then the token in ~/.config/switchboard, or `switchboard token create`) and an
// endpoint you own:
//
//   SWITCHBOARD_URL=http://127.0.0.1:8080 SWITCHBOARD_TOKEN=sbt_… \
//   SWITCHBOARD_ENDPOINT=my-agent SWITCHBOARD_QUEUE=inbox npx tsx examples/producer.ts 3
//
// The argument is how many todos to push (default 3). Each carries an idempotency key, so
// running it twice with the same RUN_ID pushes nothing new.

import { Switchboard, type NewTodo } from 'switchboard/client';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};

const sb = new Switchboard({ url: env('SWITCHBOARD_URL', 'http://127.0.0.1:8080'), token: env('SWITCHBOARD_TOKEN') });
const endpoint = env('SWITCHBOARD_ENDPOINT');
const queue = env('SWITCHBOARD_QUEUE', 'inbox');
const runId = env('RUN_ID', new Date().toISOString());
const count = Number(process.argv[2] ?? 3);

const todos: NewTodo[] = Array.from({ length: count }, (_, i) => ({
  queue,
  title: `example todo ${i + 1} of ${count}`,
  payload: { n: i + 1 },
  idempotency_key: `${runId}-${i + 1}`,
}));
const pushed = await sb.todos.pushMany(endpoint, todos);
for (const todo of pushed.todos) console.log(`${todo.id} ${todo.state} ${todo.title}`);
console.log(`pushed ${pushed.created}, ${pushed.duplicates} already there`);
