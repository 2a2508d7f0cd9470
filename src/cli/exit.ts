// Exit codes and the one-line error every command prints on failure.

export const EXIT = {
  ok: 0,
  /** The command ran and failed (server unreachable, database refused, conflict…). */
  failure: 1,
  /** The invocation or the environment is wrong: fix the flags or variables. */
  usage: 2,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
  }
}

export function fail(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`switchboard: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(err instanceof CliError ? err.exitCode : EXIT.failure);
}
