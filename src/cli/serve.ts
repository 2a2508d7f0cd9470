// `switchboard serve` and `switchboard migrate`: the two commands that touch the
// database directly. serve runs until SIGINT/SIGTERM, then shuts down in order.

import type { Command } from 'commander';
import { pino } from 'pino';
import { migrate } from '../db/migrate.js';
import { openDatabase, startServer } from '../main.js';
import { configOrExit } from './config.js';
import { EXIT, fail } from './exit.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the server (HTTP, MCP, board, sweeps); configured by SWITCHBOARD_* variables')
    .action(async () => {
      const config = configOrExit();
      const log = pino({ level: config.logLevel });
      let server;
      try {
        server = await startServer(config, log);
      } catch (err) {
        log.error({ err }, 'start failed');
        fail(err);
      }
      let stopping = false;
      const shutdown = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'shutting down');
        server.stop().then(
          () => process.exit(EXIT.ok),
          (err: unknown) => fail(err),
        );
      };
      process.on('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGTERM', () => shutdown('SIGTERM'));
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = configOrExit();
      const log = pino({ level: opts.json ? 'silent' : config.logLevel === 'info' ? 'warn' : config.logLevel });
      const database = await openDatabase(config, log).catch(fail);
      try {
        const result = await migrate(database.url);
        if (opts.json) process.stdout.write(JSON.stringify(result) + '\n');
        else if (result.applied.length === 0) process.stdout.write(`schema is current (${result.current ?? 'empty'})\n`);
        else process.stdout.write(`applied ${result.applied.join(', ')}; schema is current (${result.current})\n`);
      } catch (err) {
        await database.embedded?.stop();
        fail(err);
      }
      await database.embedded?.stop();
    });
}
