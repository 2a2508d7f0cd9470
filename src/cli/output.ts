// What the API commands print: aligned tables and key/value blocks for people, the raw
// JSON answer with --json for scripts. Owns formatting only: no requests, no exit codes.
// Text from the server (titles, names, bodies) may come from webhooks, so control
// characters are shown escaped and can never drive the terminal.

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** Longer cells are cut with an ellipsis; titles would otherwise wrap every row. */
  max?: number;
}

/** `1 batch`, `2 batches`, `0 todos`: a count and its noun in the right number. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** --json prints the answer as one line of JSON; otherwise `human` renders it. */
export function emit<T>(json: boolean | undefined, answer: T, human: (answer: T) => string): void {
  process.stdout.write(json ? JSON.stringify(answer) + '\n' : ensureNewline(human(answer)));
}

function ensureNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : text + '\n';
}

/** C0, DEL, C1 and bidirectional overrides: what can move the cursor or reorder text. */
function unsafe(code: number, multiline: boolean): boolean {
  if (code === 0x0a) return !multiline;
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

const ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Unsafe characters (see above; newlines too unless `multiline`) as visible escapes such as \x1b. */
export function clean(text: string, multiline = false): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (!unsafe(code, multiline)) out += ch;
    else out += ESCAPES[ch] ?? (code > 0xff ? `\\u${code.toString(16)}` : `\\x${code.toString(16).padStart(2, '0')}`);
  }
  return out;
}

const ISO_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/;

/** One cell or value as text: "-" for nothing, short UTC times, lists joined by commas. */
export function text(value: unknown, multiline = false): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string') {
    const time = ISO_TIME.exec(value);
    return time ? `${time[1]} ${time[2]}Z` : clean(value, multiline);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return clean(value.join(','));
  return clean(JSON.stringify(value), multiline);
}

function cut(value: string, max: number | undefined): string {
  if (max === undefined || value.length <= max) return value;
  return value.slice(0, Math.max(0, max - 1)) + '…';
}

/** Columns padded to their widest cell, two spaces apart; `empty` when there are no rows. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[], empty = '(none)'): string {
  if (rows.length === 0) return empty + '\n';
  const cells = rows.map((row) => columns.map((c) => cut(text(c.value(row)), c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (parts: string[]) =>
    parts
      .map((p, i) => (i === parts.length - 1 ? p : p.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** `key  value` lines with the keys padded; multi-line values continue under the value. */
export function keyValues(pairs: readonly (readonly [string, unknown])[]): string {
  const width = Math.max(0, ...pairs.map(([key]) => key.length));
  return (
    pairs
      .map(([key, value]) => {
        const [first, ...rest] = text(value, true).split('\n');
        const indent = ' '.repeat(width + 2);
        return [`${key.padEnd(width)}  ${first ?? ''}`, ...rest.map((l) => indent + l)].join('\n').trimEnd();
      })
      .join('\n') + '\n'
  );
}

/** A titled section, separated from what came before by a blank line. */
export function section(title: string, body: string): string {
  return `\n${title}\n${body}`;
}

/** A table of objects whose shape this CLI does not pin: one column per key of the first row. */
export function objectsTable(rows: readonly Record<string, unknown>[], empty = '(none)'): string {
  const keys = Object.keys(rows[0] ?? {});
  return table(
    rows,
    keys.map((key) => ({ header: key.replace(/_/g, ' ').toUpperCase(), value: (row) => row[key], max: 40 })),
    empty,
  );
}
