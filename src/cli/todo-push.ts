// `switchboard todo push ENDPOINT --file todos.jsonl` (`-` for stdin): one todo per JSON
// line, sent through the bulk create in batches of up to 1,000 (and under the route's body
// limit). A batch is all or nothing on the server, so a bad line names its line number and
// field, and nothing of its batch is written; the batches before it stay written. A
// progress line is drawn on stderr only when stderr is a terminal.

import type { TodosPushed } from '../client/index.js';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { ApiError, signedInClient, type ApiClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { CliError, EXIT } from './exit.js';
import { queueName } from './flags.js';
import { emit, plural } from './output.js';

/** The server's BULK_MAX (src/todos/create-bulk.ts). */
const BATCH_ITEMS = 1000;
/** Under the route's 8 MiB body limit (src/http/app.ts), with room for the envelope. */
const BATCH_BYTES = 7 * 1024 * 1024;

export interface PushFileOptions {
  file: string;
  queue: string;
  json?: boolean;
  url?: string;
}

export interface PushSummary {
  created: number;
  duplicates: number;
  batches: number;
}

interface Batch {
  items: unknown[];
  /** The file line of each item. */
  lines: number[];
  bytes: number;
}

/** A line as a todo: JSON objects only; a line without `queue` goes to --queue. */
function parseLine(text: string, line: number, queue: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(`line ${line}: not valid JSON (${(err as Error).message})`, EXIT.usage);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`line ${line}: must be a JSON object, one todo per line`, EXIT.usage);
  return 'queue' in value ? value : { queue, ...value };
}

class Progress {
  private readonly tty = process.stderr.isTTY === true;
  constructor(private readonly totalBytes: number | null) {}

  draw(todos: number, batches: number, bytesRead: number): void {
    if (!this.tty) return;
    const width = 30;
    const share = this.totalBytes ? Math.min(1, bytesRead / this.totalBytes) : null;
    const bar = share === null ? '' : `[${'#'.repeat(Math.round(share * width)).padEnd(width, '-')}] `;
    process.stderr.write(`\r${bar}${plural(todos, 'todo')} in ${plural(batches, 'batch', 'batches')}`);
  }

  done(): void {
    if (this.tty) process.stderr.write('\n');
  }
}

/** What the batches sent before a failure wrote: they stay written. */
function earlier(summary: PushSummary): string {
  return summary.batches === 0
    ? 'nothing was written'
    : `${plural(summary.batches, 'earlier batch', 'earlier batches')} wrote ${plural(summary.created, 'todo')}`;
}

/** The server's per-item refusal, in the file's line numbers. */
function batchError(err: unknown, batch: Batch, number: number, summary: PushSummary): unknown {
  if (!(err instanceof ApiError)) return err;
  const items = err.details?.items;
  const sent = `batch ${number} (lines ${batch.lines[0]}–${batch.lines.at(-1)}) wrote nothing; ${earlier(summary)}`;
  if (!Array.isArray(items)) return new CliError(`${err.message}; ${sent}`, err.exitCode);
  const bad = (items as { index: number; field: string; message: string }[]).map(
    (item) => `line ${batch.lines[item.index] ?? '?'}: ${item.message}`,
  );
  const shown = bad.slice(0, 5).join('; ') + (bad.length > 5 ? `; and ${bad.length - 5} more` : '');
  return new CliError(`${shown}; ${sent}`, err.exitCode);
}

async function send(client: ApiClient, endpoint: string, batch: Batch, summary: PushSummary): Promise<void> {
  try {
    const answer = await client.request<TodosPushed>('POST', `${endpointPath(endpoint)}/todos`, {
      todos: batch.items,
    });
    summary.created += answer.created;
    summary.duplicates += answer.duplicates;
    summary.batches += 1;
  } catch (err) {
    throw batchError(err, batch, summary.batches + 1, summary);
  }
}

function openInput(file: string): Readable {
  if (file === '-') return process.stdin;
  return createReadStream(file);
}

export async function pushFile(endpoint: string, opts: PushFileOptions): Promise<void> {
  const queue = queueName('--queue', opts.queue);
  let totalBytes: number | null = null;
  if (opts.file !== '-') {
    try {
      totalBytes = (await stat(opts.file)).size;
    } catch (err) {
      throw new CliError(
        `--file: cannot read ${opts.file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        EXIT.usage,
      );
    }
  }
  const client = await signedInClient(opts.url);
  const summary: PushSummary = { created: 0, duplicates: 0, batches: 0 };
  const progress = new Progress(totalBytes);
  let batch: Batch = { items: [], lines: [], bytes: 0 };
  let line = 0;
  let bytesRead = 0;
  const flush = async () => {
    if (batch.items.length === 0) return;
    await send(client, endpoint, batch, summary);
    batch = { items: [], lines: [], bytes: 0 };
    progress.draw(summary.created + summary.duplicates, summary.batches, bytesRead);
  };
  try {
    for await (const text of createInterface({ input: openInput(opts.file), crlfDelay: Infinity })) {
      line += 1;
      const size = Buffer.byteLength(text) + 1;
      bytesRead += size;
      if (text.trim() === '') continue;
      let item: unknown;
      try {
        item = parseLine(text, line, queue);
      } catch (err) {
        // Its batch is never sent: say so, and what the batches before it wrote.
        const unsent = batch.lines.length > 0 ? `lines ${batch.lines[0]}–${line} were not sent; ` : '';
        throw new CliError(`${(err as Error).message}; ${unsent}${earlier(summary)}`, EXIT.usage);
      }
      if (batch.items.length >= BATCH_ITEMS || (batch.bytes + size > BATCH_BYTES && batch.items.length > 0)) {
        await flush();
      }
      batch.items.push(item);
      batch.lines.push(line);
      batch.bytes += size;
    }
    await flush();
  } finally {
    progress.done();
  }
  emit(opts.json, summary, (s) =>
    s.batches === 0
      ? `nothing to push: ${opts.file === '-' ? 'stdin' : opts.file} has no todos`
      : `pushed ${plural(s.created, 'todo')} to ${endpoint} in ${plural(s.batches, 'batch', 'batches')} ` +
        `(${plural(s.duplicates, 'duplicate')} answered by existing todos)`,
  );
}
