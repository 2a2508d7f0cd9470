// `switchboard serve` and `switchboard migrate`: the two commands that touch the
// database directly. serve runs until SIGINT/SIGTERM, then shuts down in order.

import type { Command } from 'commander';
import { createLogger, prettyDestination, wantsPretty } from '../http/logger.js';
import { traceLogFields } from '../tracing/index.js';
import { migrateDatabase, startServer, type Server } from '../main.js';
import { configOrExit } from './config.js';
import { EXIT, fail } from './exit.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the server (HTTP, MCP, board, sweeps); configured by SWITCHBOARD_* variables')
    .option('--json', 'log JSON lines even on a terminal (SWITCHBOARD_LOG_FORMAT=json)')
    .action(async (opts: { json?: boolean }) => {
      const config = configOrExit();
      // Traced, each line inside a span names it; the mixin is loaded only then.
      const mixin = config.tracing.enabled ? await traceLogFields() : undefined;
      const pretty = wantsPretty(opts.json ? 'json' : config.logFormat, process.stdout);
      const log = createLogger(config.logLevel, pretty ? prettyDestination(process.stdout) : undefined, {
        ...(mixin ? { mixin } : {}),
      });
      // Signals are handled from the first moment: a SIGTERM during a slow start (first
      // initdb, migrations) waits for the start to finish and then shuts down in order,
      // so the embedded PostgreSQL is never left running. A second signal exits at once.
      let stopRequested: string | null = null;
      let server: Server | null = null;
      // A start still waiting for an unreachable database is abandoned on the signal.
      const starting = new AbortController();
      const shutdown = (signal: string) => {
        if (stopRequested) {
          log.warn({ signal }, 'second signal: exiting without a clean shutdown');
          process.exit(EXIT.failure);
        }
        stopRequested = signal;
        log.info({ signal }, 'shutting down');
        if (server) server.stop().then(() => process.exit(EXIT.ok), fail);
        else starting.abort(new Error(`${signal} during start`));
      };
      process.on('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      try {
        server = await startServer(config, log, { signal: starting.signal });
        // The one-time setup link is a secret: a plain stderr line for the operator, never
        // the JSON log (which is shipped and kept).
        if (server.setupUrl) {
          process.stderr.write(`no humans yet: open ${server.setupUrl} within 1 hour to create the first admin\n`);
        }
      } catch (err) {
        if (stopRequested) process.exit(EXIT.ok);
        log.error({ err }, 'start failed');
        fail(err);
      }
      if (stopRequested) await server.stop().then(() => process.exit(EXIT.ok), fail);
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = configOrExit();
      const log = createLogger(opts.json ? 'silent' : config.logLevel === 'info' ? 'warn' : config.logLevel);
      const result = await migrateDatabase(config, log).catch(fail);
      if (opts.json) process.stdout.write(JSON.stringify(result) + '\n');
      else if (result.applied.length === 0) process.stdout.write(`schema is current (${result.current ?? 'empty'})\n`);
      else process.stdout.write(`applied ${result.applied.join(', ')}; schema is current (${result.current})\n`);
    });
}
