// The `switchboard` command. Every command but serve and migrate talks to the REST API.

import { Command } from 'commander';
import { versionInfo } from '../version.js';
import { registerServe } from './serve.js';
import { registerBridge } from './bridge.js';
import { registerDoctor } from './doctor.js';
import { registerAuth } from './auth.js';
import { registerEndpoint } from './endpoint.js';
import { registerQueue } from './queue.js';
import { registerTodo } from './todo.js';
import { registerWebhook } from './webhook.js';
import { registerMessage } from './message.js';
import { registerSettings } from './settings.js';
import { registerHook } from './hook.js';
import { registerPresence } from './presence.js';
import { EXIT } from './exit.js';

export async function runCli(argv: string[]): Promise<void> {
  const info = versionInfo();
  const program = new Command('switchboard')
    .description('A durable work queue and doorbell for AI agents')
    .version(info.version, '-V, --version')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage))
    .showHelpAfterError();

  registerServe(program);
  registerAuth(program);
  registerEndpoint(program);
  registerTodo(program);
  registerQueue(program);
  registerWebhook(program);
  registerMessage(program);
  registerSettings(program);
  registerHook(program);
  registerPresence(program);
  registerBridge(program);
  registerDoctor(program);
  program
    .command('version')
    .description('print the version, commit and build time')
    .option('--json', 'print as JSON')
    .action((opts: { json?: boolean }) => {
      if (opts.json) process.stdout.write(JSON.stringify(info) + '\n');
      else process.stdout.write(`switchboard ${info.version} (commit ${info.commit}, built ${info.build_time})\n`);
    });

  await program.parseAsync(argv);
}
