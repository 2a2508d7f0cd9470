// The environment schema: every variable Switchboard reads, its default and why, in one
// place. The README's table of variables is checked against `ENV_VARS` by a test.
// This module is pure: `parseConfig` takes the environment as an argument.

import { z } from 'zod';
import {
  cidrList,
  databaseUrl,
  duration,
  integer,
  isLoopbackHost,
  listen,
  LOG_LEVELS,
  optionalDuration,
} from './fields.js';
import { minLength, zod3Messages } from '../domain/issues.js';

export { isLoopbackHost };
import { parseEnvCapacity } from '../domain/messages.js';

const SCHEMA = z.object({
  // Loopback by default: a fresh install must not be reachable from the network before
  // its first admin exists.
  SWITCHBOARD_LISTEN: listen,
  // Unset means the embedded PostgreSQL in SWITCHBOARD_DATA_DIR: zero setup for one box.
  SWITCHBOARD_DATABASE_URL: databaseUrl,
  // Next to where `serve` was started, like a project-local .git: easy to find and delete.
  SWITCHBOARD_DATA_DIR: z.string().min(1).default('./.switchboard'),
  SWITCHBOARD_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // Ten connections serve hundreds of agents: every statement is short. Raise it for
  // many instances' worth of claim traffic on one process, not for idle sessions.
  SWITCHBOARD_DB_POOL_SIZE: integer(10, 2, 500),
  // Five minutes covers one agent step between heartbeats; shorter leases hand work to
  // another session while the first is still thinking, longer ones delay recovery.
  SWITCHBOARD_DEFAULT_LEASE: duration('5m', 5_000, 86_400_000, '5s–24h'),
  // A lapsed lease is already claimable by takeover; the reaper only tidies rows nobody
  // asked for, so 30 s is prompt without scanning constantly.
  SWITCHBOARD_REAPER_INTERVAL: duration('30s', 1_000, 600_000, '1s–10m'),
  // Thirty days of finished work is enough to answer "what happened last month".
  SWITCHBOARD_RETENTION: duration('30d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // Pruning is bulk work with no latency need; hourly keeps each batch small.
  SWITCHBOARD_RETENTION_INTERVAL: duration('1h', 1_000, 86_400_000, '1s–24h'),
  // Retention of the tables that only grow (src/sweeps/retention.ts), every retention
  // interval. A closed MCP session is kept a week, as long as the ring records that name it,
  // so "which client was that" has an answer while the ring is still there.
  SWITCHBOARD_MCP_SESSION_RETENTION: duration('7d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // An expired board session or a spent/expired setup or invite link answers exactly like an
  // unknown one; a week of them is kept only for reviewing recent sign-ins.
  SWITCHBOARD_SIGNIN_RETENTION: duration('7d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // A revoked or expired API token stays listed (marked) for a month, so the owner can still
  // see which token stopped working and when; it never authenticates in that time.
  SWITCHBOARD_API_TOKEN_RETENTION: duration('30d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // Inbound delivery ids are the webhook dedup: Standard Webhooks senders retry for about 3
  // days, and an id forgotten before its last retry would make a second todo, so the floor
  // is 4 days and the default a month.
  SWITCHBOARD_WEBHOOK_DEDUP_RETENTION: duration('30d', 4 * 86_400_000, 3_650 * 86_400_000, '4d–3650d'),
  // Ring records and self-test reports are diagnostics: a week answers "what happened this
  // week". The 1-day floor stays above the longest ack window (6h), so a ring is decided
  // heard or unheard long before it can be deleted.
  SWITCHBOARD_DOORBELL_RETENTION: duration('7d', 86_400_000, 3_650 * 86_400_000, '1d–3650d'),
  // A quarter hour outlasts an ordinary agent turn, so a ring is called unheard only when
  // nobody claimed or acknowledged it in that time; operators tune it
  // (docs/design/doorbell-acknowledgement.md, "The ack window").
  SWITCHBOARD_DOORBELL_ACK_WINDOW: duration('15m', 60_000, 21_600_000, '1m–6h'),
  // Every instance beats its `instances` row this often; five seconds is a cheap upsert
  // per instance and finds a killed instance in well under a minute.
  SWITCHBOARD_INSTANCE_HEARTBEAT: duration('5s', 100, 60_000, '100ms–1m'),
  // An instance whose beat is older than this is dead: its streams count as closed and
  // its rings are rung again. Unset: three heartbeats, so one late beat (a GC pause, a
  // slow database) never declares a live instance dead. At least two heartbeats.
  SWITCHBOARD_INSTANCE_DEAD_AFTER: optionalDuration(300, 3_600_000, '300ms–1h'),
  // How long /mcp reuses a (credential, live session) answer before reading it again
  // (src/endpoints/credentials.ts): a revoke or close on another instance reaches this one
  // on the bus at once; this bounds how stale an answer can be when that notice is lost.
  SWITCHBOARD_MCP_CREDENTIAL_REUSE: duration('2s', 0, 3_600_000, '0s–1h'),
  // How many claim_next / next_message calls of one endpoint may wait (wait_seconds > 0)
  // on one instance at once; past it a waiting call answers resource_exhausted. A waiter
  // holds no pool connection, only a few hundred bytes and a timer.
  SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT: integer(32, 1, 10_000),
  // How often an open board page re-reads its view: live enough to watch claims happen,
  // one small read per open page per second.
  SWITCHBOARD_BOARD_POLL: duration('1s', 100, 3_600_000, '100ms–1h'),
  // Names this process in sessions and sweep ticks; the default is unique per start.
  SWITCHBOARD_INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1–64 letters, digits, dots, dashes or underscores')
    .optional(),
  // Sign-in is on unless explicitly turned off; off is refused on a non-loopback address.
  SWITCHBOARD_AUTH: z.enum(['on', 'off']).default('on'),
  // Empty by default: X-Forwarded-For is believed only from proxies named here.
  SWITCHBOARD_TRUST_PROXY: cidrList,
  // Session message queue capacity (docs/design/message-queue.md): a valid value locks
  // the admin setting. Kept as text: an invalid value is logged and ignored, never fatal
  // (see messageConfig).
  SWITCHBOARD_QUEUE_MAX_PER_SESSION: z.string().optional(),
  // The variable's original name (docs/design/message-queue.md, "Capacity"), read when
  // the Switchboard one is not valid.
  KANDEV_QUEUE_MAX_PER_SESSION: z.string().optional(),
  // Ten minutes: longer than an agent's turn, so a message is redelivered only when the
  // agent really missed it; shorter would duplicate work in progress, longer delays recovery.
  SWITCHBOARD_MESSAGE_ACK_TIMEOUT: duration('10m', 1_000, 86_400_000, '1s–24h'),
  // The URL people and agents use to reach this server, for links the server prints.
  // Any URL the WHATWG parser takes, kept as written (zod 4's `z.url()` would trim it).
  SWITCHBOARD_PUBLIC_URL: z
    .string()
    .refine((text) => URL.canParse(text), 'Invalid url')
    .optional(),
  // Unset: /metrics is open (aggregates only, no ids). Set: a scraper's bearer; 32+
  // characters so it cannot be guessed, and no endpoint, API token or cookie opens it.
  SWITCHBOARD_METRICS_TOKEN: z.string().check(minLength(32, 'must be at least 32 characters')).optional(),
  // Off: notify hooks are HTTPS only, so a signed notification is never readable on the wire.
  SWITCHBOARD_PUSH_ALLOW_HTTP: z.enum(['on', 'off']).default('off'),
  // Empty: hooks never reach loopback/private/link-local/multicast addresses (SSRF guard);
  // list the CIDRs of internal receivers an operator trusts (e.g. 10.20.0.0/16).
  SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: cidrList,
  // Read by the CLI (src/config/cli.ts), never by the server: listed so that a shell with
  // them exported can still run `serve` without an unknown-variable error.
  SWITCHBOARD_URL: z.string().optional(),
  SWITCHBOARD_TOKEN: z.string().optional(),
});

/** Every variable the schema reads, for the README check and the unknown-variable check. */
export const ENV_VARS = Object.keys(SCHEMA.shape);

export interface Config {
  listen: { host: string; port: number };
  publicUrl: string;
  database: { url: string | null; dataDir: string; poolSize: number };
  logLevel: (typeof LOG_LEVELS)[number];
  /** false only with SWITCHBOARD_AUTH=off on a loopback address: every request is an admin. */
  auth: boolean;
  trustProxy: string[];
  instanceId: string | null;
  /** The bearer /metrics requires; null: /metrics is open. */
  metricsToken: string | null;
  todos: { defaultLeaseSeconds: number };
  sweeps: { reaperIntervalMs: number; retentionIntervalMs: number; retentionMs: number };
  /**
   * How long each growing table keeps a row once it is dead (closed, expired, spent, revoked,
   * received, sent). The admission audit follows SWITCHBOARD_RETENTION like finished todos:
   * it explains budget decisions about work that is kept that long.
   */
  retention: RetentionConfig;
  /** Notify hook targets: http allowed, and CIDRs exempt from the private-address refusal. */
  hooks: { allowHttp: boolean; allowCidrs: string[] };
  doorbell: { ackWindowMs: number };
  /** Instance liveness: how often this instance beats, and how old a beat means dead. */
  instances: { heartbeatMs: number; deadAfterMs: number };
  messages: MessageConfig;
  mcp: { credentialReuseMs: number; maxWaitersPerEndpoint: number };
  board: { pollMs: number };
}

export interface RetentionConfig {
  mcpSessionsMs: number;
  signInMs: number;
  apiTokensMs: number;
  webhookDeliveriesMs: number;
  doorbellMs: number;
  admissionAuditMs: number;
}

export interface MessageConfig {
  ackTimeoutMs: number;
  /** The valid environment capacity (non-positive already 0), or null. */
  envCapacity: number | null;
  /** Invalid capacity variables, to be logged as warnings and otherwise ignored. */
  warnings: string[];
}

/** SWITCHBOARD_QUEUE_MAX_PER_SESSION if valid, else KANDEV_QUEUE_MAX_PER_SESSION if valid. */
function messageConfig(e: Record<string, string | undefined>, ackTimeoutMs: number): MessageConfig {
  const warnings: string[] = [];
  let envCapacity: number | null = null;
  for (const name of ['SWITCHBOARD_QUEUE_MAX_PER_SESSION', 'KANDEV_QUEUE_MAX_PER_SESSION']) {
    const parsed = parseEnvCapacity(e[name]);
    if (parsed && !parsed.ok) warnings.push(`${name}: "${parsed.text}" is not a whole number; ignored`);
    if (parsed?.ok && envCapacity === null) envCapacity = parsed.value;
  }
  return { ackTimeoutMs, envCapacity, warnings };
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Parses the environment; lists every problem at once rather than the first. */
export function parseConfig(env: Record<string, string | undefined>): ConfigResult {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const problems = Object.keys(present)
    .filter((key) => key.startsWith('SWITCHBOARD_') && !key.startsWith('SWITCHBOARD_TEST_'))
    .filter((key) => !ENV_VARS.includes(key))
    .map((key) => `${key}: unknown variable (known: ${ENV_VARS.join(', ')})`);
  // zod 3's words for the problems zod words itself (src/domain/issues.ts).
  const parsed = SCHEMA.safeParse(present, { error: zod3Messages });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.')}: ${issue.message}`);
  }
  if (
    parsed.success &&
    parsed.data.SWITCHBOARD_AUTH === 'off' &&
    !isLoopbackHost(parsed.data.SWITCHBOARD_LISTEN.host)
  ) {
    problems.push(
      `SWITCHBOARD_AUTH: "off" is refused on ${parsed.data.SWITCHBOARD_LISTEN.host}: without sign-in anyone who can reach the server is an admin; listen on 127.0.0.1 or turn auth on`,
    );
  }
  if (
    parsed.success &&
    parsed.data.SWITCHBOARD_INSTANCE_DEAD_AFTER !== undefined &&
    parsed.data.SWITCHBOARD_INSTANCE_DEAD_AFTER < 2 * parsed.data.SWITCHBOARD_INSTANCE_HEARTBEAT
  ) {
    problems.push(
      'SWITCHBOARD_INSTANCE_DEAD_AFTER: must be at least twice SWITCHBOARD_INSTANCE_HEARTBEAT, or one late beat would declare a live instance dead',
    );
  }
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const e = parsed.data;
  const hostForUrl = e.SWITCHBOARD_LISTEN.host.includes(':')
    ? `[${e.SWITCHBOARD_LISTEN.host}]`
    : e.SWITCHBOARD_LISTEN.host;
  return {
    ok: true,
    config: {
      listen: e.SWITCHBOARD_LISTEN,
      publicUrl: (e.SWITCHBOARD_PUBLIC_URL ?? `http://${hostForUrl}:${e.SWITCHBOARD_LISTEN.port}`).replace(/\/$/, ''),
      database: {
        url: e.SWITCHBOARD_DATABASE_URL ?? null,
        dataDir: e.SWITCHBOARD_DATA_DIR,
        poolSize: e.SWITCHBOARD_DB_POOL_SIZE,
      },
      logLevel: e.SWITCHBOARD_LOG_LEVEL,
      auth: e.SWITCHBOARD_AUTH === 'on',
      trustProxy: e.SWITCHBOARD_TRUST_PROXY,
      instanceId: e.SWITCHBOARD_INSTANCE_ID ?? null,
      metricsToken: e.SWITCHBOARD_METRICS_TOKEN ?? null,
      todos: { defaultLeaseSeconds: Math.round(e.SWITCHBOARD_DEFAULT_LEASE / 1000) },
      sweeps: {
        reaperIntervalMs: e.SWITCHBOARD_REAPER_INTERVAL,
        retentionIntervalMs: e.SWITCHBOARD_RETENTION_INTERVAL,
        retentionMs: e.SWITCHBOARD_RETENTION,
      },
      retention: {
        mcpSessionsMs: e.SWITCHBOARD_MCP_SESSION_RETENTION,
        signInMs: e.SWITCHBOARD_SIGNIN_RETENTION,
        apiTokensMs: e.SWITCHBOARD_API_TOKEN_RETENTION,
        webhookDeliveriesMs: e.SWITCHBOARD_WEBHOOK_DEDUP_RETENTION,
        doorbellMs: e.SWITCHBOARD_DOORBELL_RETENTION,
        admissionAuditMs: e.SWITCHBOARD_RETENTION,
      },
      doorbell: { ackWindowMs: e.SWITCHBOARD_DOORBELL_ACK_WINDOW },
      instances: {
        heartbeatMs: e.SWITCHBOARD_INSTANCE_HEARTBEAT,
        deadAfterMs: e.SWITCHBOARD_INSTANCE_DEAD_AFTER ?? 3 * e.SWITCHBOARD_INSTANCE_HEARTBEAT,
      },
      messages: messageConfig(
        {
          SWITCHBOARD_QUEUE_MAX_PER_SESSION: e.SWITCHBOARD_QUEUE_MAX_PER_SESSION,
          KANDEV_QUEUE_MAX_PER_SESSION: e.KANDEV_QUEUE_MAX_PER_SESSION,
        },
        e.SWITCHBOARD_MESSAGE_ACK_TIMEOUT,
      ),
      hooks: { allowHttp: e.SWITCHBOARD_PUSH_ALLOW_HTTP === 'on', allowCidrs: e.SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS },
      mcp: {
        credentialReuseMs: e.SWITCHBOARD_MCP_CREDENTIAL_REUSE,
        maxWaitersPerEndpoint: e.SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT,
      },
      board: { pollMs: e.SWITCHBOARD_BOARD_POLL },
    },
  };
}
