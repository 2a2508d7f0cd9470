// Exit codes and the one error every command prints on failure: a line of text, or under
// `--json` one JSON object on stderr, `{"error": {"code", "message", "field"?}}`, with the
// same exit code either way.

export const EXIT = {
  ok: 0,
  /** The command ran and failed (server unreachable, database refused, conflict…). */
  failure: 1,
  /** The invocation or the environment is wrong: fix the flags or variables. */
  usage: 2,
} as const;

export class CliError extends Error {
  /**
   * The API's code for an answer from the server; otherwise `invalid_argument` for a
   * usage error, `unavailable` when the server cannot be reached, and `failed`.
   */
  readonly code: string;

  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
    code?: string,
    /** The flag, argument or API field at fault, when one is. */
    readonly field?: string,
  ) {
    super(message);
    this.code = code ?? (exitCode === EXIT.usage ? 'invalid_argument' : 'failed');
  }
}

/** Whether the command line asks for JSON (a `--json` before any `--`). */
export function wantsJson(argv: readonly string[] = process.argv): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv.slice(2) : argv.slice(2, end)).includes('--json');
}

/** Usage messages start with what is wrong, `--flag: …` or `NAME: …`: that is the field. */
const LEADING_FIELD = /^(--[a-z][a-z0-9-]*|[A-Z][A-Z0-9_]*)(?=: )/;

/** What a failure prints on stderr: the line, or under `--json` the error object. */
export function errorOutput(err: unknown, json: boolean): string {
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ');
  if (!json) return `switchboard: ${message}\n`;
  const cli = err instanceof CliError ? err : null;
  const field = cli?.field ?? (cli?.exitCode === EXIT.usage ? LEADING_FIELD.exec(message)?.[1] : undefined);
  return JSON.stringify({ error: { code: cli?.code ?? 'failed', message, ...(field ? { field } : {}) } }) + '\n';
}

/** An option commander names in its error (`unknown option '--x'`, `option '--y <N>' …`). */
const NAMED_OPTION = /option '(-{1,2}[A-Za-z0-9][\w-]*)/;

/** commander's own usage error (unknown flag, missing argument) for the command at `path`. */
export function usageOutput(commanderMessage: string, path: string, json = wantsJson()): string {
  const problem = commanderMessage
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  if (!json) return `switchboard: ${problem} (see \`${path} --help\`)\n`;
  const field = NAMED_OPTION.exec(problem)?.[1];
  return JSON.stringify({ error: { code: 'invalid_argument', message: problem, ...(field ? { field } : {}) } }) + '\n';
}

export function fail(err: unknown): never {
  process.stderr.write(errorOutput(err, wantsJson()));
  process.exit(err instanceof CliError ? err.exitCode : EXIT.failure);
}
