// The `switchboard` command. Every command but serve and migrate talks to the REST API.
//
// Start-up is lazy, so `switchboard version`, `--help` and every agent's `bridge` pay only
// for what they run: a command group's module (and what it imports: fastify and pg for
// serve, the MCP SDK for bridge) is imported only when one of its commands is named on the
// command line. Every other group is registered as stubs that carry just what the root
// help lists (the term and the description below); test/cli/lazy.test.ts checks these
// against the real commands, so they cannot drift apart.

import { Command, Help } from 'commander';
import { versionInfo } from '../version.js';
import { EXIT, usageOutput, wantsJson } from './exit.js';

type Register = (program: Command) => void;

interface CommandGroup {
  load: () => Promise<Register>;
  /** Each top-level command the group registers, in order, as the root help lists it. */
  commands: ReadonlyArray<{ term: string; description: string }>;
}

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  {
    load: async () => (await import('./serve.js')).registerServe,
    commands: [
      {
        term: 'serve [options]',
        description: 'run the server (HTTP, MCP, board, sweeps); configured by SWITCHBOARD_* variables',
      },
      { term: 'migrate [options]', description: 'apply pending database migrations and exit' },
    ],
  },
  {
    load: async () => (await import('./auth.js')).registerAuth,
    commands: [
      {
        term: 'login [options]',
        description: 'sign in and save an API token for the other commands (file mode 0600)',
      },
      { term: 'logout [options]', description: 'revoke the saved token and delete it' },
      { term: 'whoami [options]', description: 'show who the saved token signs in as' },
    ],
  },
  {
    load: async () => (await import('./human.js')).registerHuman,
    commands: [{ term: 'human', description: 'the people who sign in (admins only)' }],
  },
  {
    load: async () => (await import('./endpoint.js')).registerEndpoint,
    commands: [{ term: 'endpoint', description: "vend and manage agents' endpoints" }],
  },
  {
    load: async () => (await import('./todo.js')).registerTodo,
    commands: [{ term: 'todo', description: "push and inspect an endpoint's todos" }],
  },
  {
    load: async () => (await import('./queue.js')).registerQueue,
    commands: [{ term: 'queue', description: "manage an endpoint's queues" }],
  },
  {
    load: async () => (await import('./schedule.js')).registerSchedule,
    commands: [{ term: 'schedule', description: 'recurring todos: a cron expression in a zone' }],
  },
  {
    load: async () => (await import('./webhook.js')).registerWebhook,
    commands: [{ term: 'webhook', description: "URLs that turn a provider's delivery into a todo" }],
  },
  {
    load: async () => (await import('./event.js')).registerEvent,
    commands: [{ term: 'event', description: 'webhook deliveries received, and replay' }],
  },
  {
    load: async () => (await import('./quarantine.js')).registerQuarantine,
    commands: [{ term: 'quarantine', description: "events held because the webhook doesn't trust their actor" }],
  },
  {
    load: async () => (await import('./grant.js')).registerGrant,
    commands: [{ term: 'grant', description: "hand-off grants: let one agent put todos on another's queues" }],
  },
  {
    load: async () => (await import('./message.js')).registerMessage,
    commands: [{ term: 'message', description: "a live MCP session's message queue" }],
  },
  {
    load: async () => (await import('./settings.js')).registerSettings,
    commands: [{ term: 'settings', description: 'install-wide settings' }],
  },
  {
    load: async () => (await import('./hook.js')).registerHook,
    commands: [{ term: 'hook', description: 'notify hooks: HTTPS URLs told (signed) when work is ready' }],
  },
  {
    load: async () => (await import('./presence.js')).registerPresence,
    commands: [{ term: 'presence', description: "an endpoint's presence (in or out) and shift" }],
  },
  {
    load: async () => (await import('./bridge.js')).registerBridge,
    commands: [
      {
        term: 'bridge [options]',
        description: 'serve MCP on stdio and forward it, doorbells included, to a Switchboard server',
      },
    ],
  },
  {
    load: async () => (await import('./doctor.js')).registerDoctor,
    commands: [
      {
        term: 'doctor [options] [ENDPOINT]',
        description: 'check the CLI, the server and your sign-in; with ENDPOINT, test its doorbell live',
      },
    ],
  },
];

const nameOf = (term: string) => term.replace(/ .*/, '');

/** The command the arguments name (`help X` names X), or undefined for the root alone. */
function namedCommand(argv: readonly string[]): string | undefined {
  const words = argv.slice(2).filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/** The program for these arguments: the named command's group loaded, the rest as stubs. */
export async function buildProgram(argv: readonly string[]): Promise<Command> {
  const info = versionInfo();
  const named = namedCommand(argv);
  const stubTerms = new Map<Command, string>();
  const program = new Command('switchboard')
    .description('A durable work queue and doorbell for AI agents')
    .version(info.version, '-V, --version')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage))
    // An unknown command: the root help after the line, or under --json the error alone.
    .showHelpAfterError(!wantsJson(argv))
    .configureOutput(
      wantsJson(argv) ? { outputError: (message, write) => write(usageOutput(message, 'switchboard', true)) } : {},
    )
    .configureHelp({ subcommandTerm: (cmd) => stubTerms.get(cmd) ?? new Help().subcommandTerm(cmd) });

  for (const group of COMMAND_GROUPS) {
    if (group.commands.some((c) => nameOf(c.term) === named)) {
      (await group.load())(program);
      continue;
    }
    for (const { term, description } of group.commands) {
      stubTerms.set(program.command(nameOf(term)).description(description), term);
    }
  }
  program
    .command('version')
    .description('print the version, commit and build time')
    .option('--json', 'print as JSON')
    .action((opts: { json?: boolean }) => {
      if (opts.json) process.stdout.write(JSON.stringify(info) + '\n');
      else process.stdout.write(`switchboard ${info.version} (commit ${info.commit}, built ${info.build_time})\n`);
    });
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  await (await buildProgram(argv)).parseAsync(argv);
}
