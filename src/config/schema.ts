// The environment schema: every variable Switchboard reads, its default and why. The
// sign-in (./oidc.ts) and tracing (./tracing.ts) variables live with the config slices
// they make; this file composes them with the rest. docs/configuration.md's table of variables is
// checked against `ENV_VARS` by a test. Pure: `parseConfig` takes the environment as an
// argument.

import { z } from 'zod';
import {
  cidrList,
  databaseUrl,
  duration,
  hostList,
  integer,
  isLoopbackHost,
  listen,
  LOG_FORMATS,
  LOG_LEVELS,
  optionalDuration,
  timeoutDuration,
} from './fields.js';
import { oidcConfig, oidcProblems, OIDC_VARS } from './oidc.js';
import { tracingConfig, TRACING_VARS } from './tracing.js';
import type { Config, MessageConfig } from './types.js';
import { minLength, zod3Messages } from '../domain/issues.js';
import { parseEnvCapacity } from '../domain/messages.js';
import { DEFAULT_QUOTAS } from '../domain/quotas.js';

export { isLoopbackHost };

/** A 32-byte key: 44 characters of base64 (with its padding) or 64 hex digits. */
const secretKey = z
  .string()
  .trim()
  .regex(/^([A-Za-z0-9+/]{43}=|[0-9a-fA-F]{64})$/, 'must be 32 bytes as base64 (44 characters) or 64 hex digits');

const SCHEMA = z.object({
  // Loopback by default: a fresh install must not be reachable from the network before
  // its first admin exists.
  SWITCHBOARD_LISTEN: listen,
  // Unset means the embedded PostgreSQL in SWITCHBOARD_DATA_DIR: zero setup for one box.
  SWITCHBOARD_DATABASE_URL: databaseUrl,
  // Unset: the main URL. LISTEN and the migrations' advisory lock need a session of their
  // own, so behind PgBouncer in transaction mode this names the database directly.
  SWITCHBOARD_BUS_DATABASE_URL: databaseUrl,
  // `none`: Switchboard's pool talks to PostgreSQL (or a session-mode pooler) directly and
  // uses named prepared statements and per-connection timeouts. `transaction`: the main URL
  // is PgBouncer in transaction mode, which (before 1.21) cannot carry either.
  SWITCHBOARD_DB_POOLER: z.enum(['none', 'transaction']).default('none'),
  // Next to where `serve` was started, like a project-local .git: easy to find and delete.
  SWITCHBOARD_DATA_DIR: z.string().min(1).default('./.switchboard'),
  SWITCHBOARD_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // JSON lines for a log pipeline, readable lines for a person at a terminal.
  SWITCHBOARD_LOG_FORMAT: z.enum(LOG_FORMATS).default('auto'),
  // Ten connections serve hundreds of agents: every statement is short. Raise it for
  // many instances' worth of claim traffic on one process, not for idle sessions.
  SWITCHBOARD_DB_POOL_SIZE: integer(10, 2, 500),
  // Every statement Switchboard sends is short; 30 s stops a runaway one from holding a
  // pooled connection (and its locks) forever while leaving room for a slow disk.
  SWITCHBOARD_STATEMENT_TIMEOUT: timeoutDuration('30s', 100, 86_400_000, '0 (none) or 100ms–24h'),
  // No transaction waits on anything outside the database; 60 s ends one left open by a
  // stuck process before its locks and snapshot hold up vacuum and every other writer.
  SWITCHBOARD_IDLE_IN_TRANSACTION_TIMEOUT: timeoutDuration('60s', 100, 86_400_000, '0 (none) or 100ms–24h'),
  // Switchboard's transactions hold row locks for milliseconds; a wait of 5 s means a stuck
  // or runaway holder, and answering a retryable `unavailable` then frees the request and its
  // pooled connection instead of queueing every caller behind it until statement_timeout.
  SWITCHBOARD_LOCK_TIMEOUT: timeoutDuration('5s', 100, 86_400_000, '0 (none) or 100ms–24h'),
  // Per host of the database URL: a first host that is down without refusing (a dead
  // machine, a dropped route) costs this long before the next host is tried, so a
  // failover to the second host of a multi-host URL is not held up by it; 5 s leaves room
  // for a TLS handshake on a busy server (docs/design/scale-out.md).
  SWITCHBOARD_DB_CONNECT_TIMEOUT: duration('5s', 100, 60_000, '100ms–60s'),
  // Five minutes covers one agent step between heartbeats; shorter leases hand work to
  // another session while the first is still thinking, longer ones delay recovery.
  SWITCHBOARD_DEFAULT_LEASE: duration('5m', 5_000, 86_400_000, '5s–24h'),
  // A day: a client that retries a create after an outage of hours gets its first todo
  // back even when that todo already finished; zero keeps only live todos' keys.
  SWITCHBOARD_IDEMPOTENCY_WINDOW: duration('24h', 0, 30 * 86_400_000, '0s–30d'),
  // An hour to move every agent to a rotated credential before the old one stops; 0s
  // ends it at once (a leaked credential).
  SWITCHBOARD_CREDENTIAL_GRACE: duration('1h', 0, 7 * 86_400_000, '0s–7d'),
  // Attempts kept per todo: the latest 25 explain any todo (max_attempts is 5 by default,
  // releases add a few); a todo released over and over would otherwise grow its history
  // without bound. At least 5, the prior_attempts a claim answers.
  SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO: integer(25, 5, 1_000),
  // The most concurrent calls one claim, settle or create statement serves (group commit,
  // docs/design/coalescing.md). 32 covers twice the 16 workers a busy agent fleet runs per
  // instance; far larger batches hold their row locks longer and grow the statement's
  // arrays for no gain. 1 turns coalescing off: every call runs its own statement.
  SWITCHBOARD_COALESCE_MAX_BATCH: integer(32, 1, 1_000),
  // How long an ask_human question waits for its answer when the agent names no timeout:
  // a day spans one person's night; the todo then comes back to its queue unanswered.
  SWITCHBOARD_ASK_HUMAN_TIMEOUT: duration('24h', 60_000, 30 * 86_400_000, '1m–30d'),
  // The longest timeout an agent may ask for: a week covers a weekend and a holiday; past
  // that a parked todo is forgotten work, which its owner should cancel instead.
  SWITCHBOARD_ASK_HUMAN_MAX_TIMEOUT: duration('7d', 60_000, 30 * 86_400_000, '1m–30d'),
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
  // An expired board session, a spent/expired setup or invite link or an expired CLI sign-in
  // code answers exactly like an unknown one; a week of them is kept only for reviewing
  // recent sign-ins.
  SWITCHBOARD_SIGNIN_RETENTION: duration('7d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // A revoked or expired API token stays listed (marked) for a month, so the owner can still
  // see which token stopped working and when; it never authenticates in that time.
  SWITCHBOARD_API_TOKEN_RETENTION: duration('30d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // Inbound delivery ids are the webhook dedup: Standard Webhooks senders retry for about 3
  // days, and an id forgotten before its last retry would make a second todo, so the floor
  // is 4 days and the default a month.
  SWITCHBOARD_WEBHOOK_DEDUP_RETENTION: duration('30d', 4 * 86_400_000, 3_650 * 86_400_000, '4d–3650d'),
  // The event history keeps what arrived (headers, payload) for review and replay; a
  // month answers "what did GitHub send last week" and matches the dedup ids' default.
  SWITCHBOARD_WEBHOOK_EVENT_RETENTION: duration('30d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // Events kept per endpoint, newest first, trimmed every retention interval: ten thousand
  // is weeks of a busy repository's deliveries, while a flood (at most the webhook rate
  // for one interval) cannot grow one endpoint's history without bound
  // (docs/design/intake.md, "Retention and the cap").
  SWITCHBOARD_WEBHOOK_EVENTS_PER_ENDPOINT: integer(10_000, 100, 10_000_000),
  // Deliveries per webhook, per instance, as a token bucket: providers send a burst when
  // one action touches many objects (a mass label, a release); 10/s with a burst of 50
  // takes those, while a sender in a loop is refused (429 with Retry-After) before it
  // fills a queue.
  SWITCHBOARD_WEBHOOK_RATE: integer(10, 1, 1_000_000),
  SWITCHBOARD_WEBHOOK_BURST: integer(50, 1, 1_000_000),
  // A replaced signing secret keeps verifying this long, so the sender can be updated
  // after the rotation without losing deliveries; a day, like the notify hooks' grace.
  SWITCHBOARD_WEBHOOK_SECRET_GRACE: duration('24h', 0, 30 * 86_400_000, '0s–30d'),
  // Routing rules (docs/design/routing.md, "Limits"): 32 rules, each expression 1 KiB, is
  // far more than a repository's triage needs, and bounds what one delivery evaluates;
  // the budget fails an event closed if its rules still run past it (a huge payload
  // walked by a comprehension). Fan-out: one event reaches at most this many endpoints.
  SWITCHBOARD_RULES_MAX: integer(32, 1, 1_000),
  SWITCHBOARD_RULE_EXPRESSION_MAX: integer(1_024, 64, 16_384),
  SWITCHBOARD_RULE_EVAL_BUDGET: duration('50ms', 1, 10_000, '1ms–10s'),
  SWITCHBOARD_FANOUT_MAX: integer(8, 1, 64),
  // A work order's key (then.once) holds this long: a week covers a pull request's review
  // cycle; after it, the same key makes work again.
  SWITCHBOARD_WORK_ORDER_WINDOW: duration('7d', 60_000, 365 * 86_400_000, '1m–365d'),
  // Quarantined events a human has not reviewed expire after this (they stay listed as
  // expired until the event retention removes them).
  // Hand-offs (docs/design/handoff.md, "Loops"): a chain of create_todo hand-offs, each
  // naming its parent, stops at this depth. Real pipelines (planner → coder → reviewer →
  // fixer) are a handful deep; 8 leaves room while two agents handing one task back and
  // forth stop after a few rounds instead of filling both queues.
  SWITCHBOARD_HANDOFF_DEPTH_MAX: integer(8, 1, 100),
  SWITCHBOARD_QUARANTINE_TTL: duration('30d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // The key webhook and notify-hook signing secrets are sealed with at rest (AES-256-GCM;
  // docs/design/intake.md, "Secrets at rest"): 32 bytes as base64 or 64 hex digits, given
  // directly or in a file (a mounted secret). Unset with the embedded PostgreSQL: one is
  // generated into the data dir (0600) on the first start. Unset with an external
  // database: secrets are stored as issued, and the start logs a warning.
  SWITCHBOARD_SECRET_KEY: secretKey.optional(),
  SWITCHBOARD_SECRET_KEY_FILE: z.string().min(1).optional(),
  // The key before a rotation: values it sealed still open, and each start reseals them
  // under SWITCHBOARD_SECRET_KEY; remove it once a start has run.
  SWITCHBOARD_SECRET_KEY_PREVIOUS: secretKey.optional(),
  // Ring records and self-test reports are diagnostics: a week answers "what happened this
  // week". The 1-day floor stays above the longest ack window (6h), so a ring is decided
  // heard or unheard long before it can be deleted.
  SWITCHBOARD_DOORBELL_RETENTION: duration('7d', 86_400_000, 3_650 * 86_400_000, '1d–3650d'),
  // The board charts a queue's last hour and last day; two days keeps yesterday whole at
  // any hour. Each busy queue writes one small row a minute (2,880 per queue at 2d).
  SWITCHBOARD_ROLLUP_RETENTION: duration('2d', 86_400_000, 90 * 86_400_000, '1d–90d'),
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
  // Live MCP sessions one endpoint may hold at once, across every instance (counted in
  // mcp_sessions as a session opens; docs/design/mcp-surface.md, "Limits"). One session is
  // one client process, and a fleet of agents sharing one endpoint is a few dozen: a
  // hundred is never met by one, while it stops a looping `initialize` from piling up
  // rows. At the cap an initialize evicts the endpoint's idle session; refused only when
  // every one has a stream, a wait or a claim.
  SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT: integer(100, 1, 100_000),
  // A session with no stream and no claim closes after this long without a request
  // (docs/design/mcp-surface.md, "Ending a session"). Five minutes is well past the
  // pause between an agent's calls within one step, and lets a script running a one-shot
  // client (no DELETE) four times a minute hold twenty sessions, not the cap. The floor
  // stays above a request's staleness: last_seen_at is stamped at most once a minute and
  // a long-poll lasts at most a minute, so a session in a call never looks 3 min idle.
  SWITCHBOARD_MCP_STREAMLESS_IDLE: duration('5m', 180_000, 86_400_000, '3m–24h'),
  // /mcp requests per credential (endpoint), per instance, as a token bucket. Every tool
  // call, notification, stream open and close counts. 200/s with a burst of 400 is the
  // operator API's limit: a hundred sessions each calling twice a second stay under it,
  // so only a loop gone wrong meets it.
  SWITCHBOARD_MCP_RATE: integer(200, 1, 1_000_000),
  SWITCHBOARD_MCP_BURST: integer(400, 1, 1_000_000),
  // /mcp requests per client address that carry no well-formed credential or fail to
  // authenticate; when the bucket is empty even a well-formed credential is refused
  // before it is looked up, so a flood of guesses never reaches the database. A working
  // agent never spends from it: 10/s with a burst of 100 leaves room for clients retrying
  // a revoked credential behind one NAT, and none for a flood.
  SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP: integer(10, 1, 1_000_000),
  SWITCHBOARD_MCP_UNAUTH_BURST_PER_IP: integer(100, 1, 1_000_000),
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
  // A login token (`switchboard login`) dies after this long unused; each use pushes it
  // out again (docs/design/people.md). A month: a laptop used weekly never asks twice, a
  // lost one stops working within weeks. Workflow tokens carry their own expiry instead.
  // The 1h floor stays well above the once-a-minute write of the sliding expiry.
  SWITCHBOARD_TOKEN_TTL: duration('30d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  // OAuth for /mcp (docs/design/oauth.md, "Tokens"): access tokens are short-lived (and
  // never outlive their endpoint), so a leaked one is worth little; refresh tokens rotate on
  // every use, and this bounds how long an unused one keeps a client signed in.
  SWITCHBOARD_OAUTH_ACCESS_TOKEN_TTL: duration('1h', 60_000, 86_400_000, '1m–24h'),
  SWITCHBOARD_OAUTH_REFRESH_TOKEN_TTL: duration('30d', 3_600_000, 365 * 86_400_000, '1h–365d'),
  // Dynamic client registration (/oauth/register) is a public write: per client address (an
  // IPv6 address by its /64), a bucket of this burst refilling at this rate. An MCP client
  // registers once per server and keeps its client id, so 20 at once and then one every
  // 6 s is never met by real clients, while a loop of registrations is stopped before it
  // writes (docs/design/oauth.md, "Limits and retention"). The token and revocation
  // endpoints take the operator API's per-address limit.
  SWITCHBOARD_OAUTH_REGISTER_BURST: integer(20, 1, 1_000_000),
  SWITCHBOARD_OAUTH_REGISTER_PER_MINUTE: integer(10, 1, 1_000_000),
  // How long dead OAuth rows stay (src/sweeps/retention.ts): codes and tokens after they
  // expired, grants after they were revoked or after their last refresh token expired,
  // and registered clients left without a grant after they registered. A week, like
  // sign-ins: long enough to read back what happened to a client that stopped working.
  SWITCHBOARD_OAUTH_RETENTION: duration('7d', 3_600_000, 3_650 * 86_400_000, '1h–3650d'),
  ...OIDC_VARS,
  // Operator API limits (/api/v1), per instance, as token buckets: sustained requests per
  // second and the burst allowed at once. Per credential, so one runaway script cannot
  // starve the rest; 200/s with a burst of 400 is far above what automation sends (a bulk
  // action is one request), so only a loop gone wrong meets it.
  SWITCHBOARD_API_RATE: integer(200, 1, 1_000_000),
  SWITCHBOARD_API_BURST: integer(400, 1, 1_000_000),
  // Per client address, before the credential is read, so a flood of bad tokens never
  // reaches the database. Twice the credential limit: several credentials may share an
  // address (a CI runner, a NAT) without one address capping them first.
  SWITCHBOARD_API_RATE_PER_IP: integer(400, 1, 1_000_000),
  SWITCHBOARD_API_BURST_PER_IP: integer(800, 1, 1_000_000),
  // Frames one board WebSocket (/ws) may send: 20 a second with a burst of 40 is far more
  // than a board tab or the CLI sends, so only a runaway script meets it, and one busy tab
  // cannot starve the rest. Per connection, per instance.
  SWITCHBOARD_WS_RATE: integer(20, 1, 1_000_000),
  SWITCHBOARD_WS_BURST: integer(40, 1, 1_000_000),
  // Board WebSockets one human may hold open on one instance: a board tab holds one, so 32
  // is more tabs than anyone keeps open, while a script looping on /ws cannot pile up
  // connections (each costs a re-check when a session of the human ends).
  SWITCHBOARD_WS_PER_HUMAN: integer(32, 1, 100_000),
  // Sign-in failures per address (an IPv6 address by its /64), per (account, address) and
  // per account (which only slows answers down), and setup links per address, each a
  // bucket of this burst refilling at this rate: 10 at once and then one every 5 s makes
  // guessing a password take years, while a human who mistypes a few times never meets
  // it (docs/design/limits.md, "Sign-in throttle").
  SWITCHBOARD_SIGNIN_BURST: integer(10, 1, 1_000_000),
  SWITCHBOARD_SIGNIN_PER_MINUTE: integer(12, 1, 1_000_000),
  // Empty by default: X-Forwarded-For is believed only from proxies named here.
  SWITCHBOARD_TRUST_PROXY: cidrList,
  // Slow clients (docs/design/limits.md, "Slow clients"). A whole request (headers and
  // body) must arrive within a minute: the largest, an 8 MiB bulk create, needs about 1
  // Mbit/s; a trickled body no longer holds a connection for five minutes. Answers are not
  // bounded by it: long-polls and streams keep their own deadlines.
  SWITCHBOARD_REQUEST_TIMEOUT: duration('60s', 1_000, 3_600_000, '1s–1h'),
  // Headers are a few KiB: ten seconds is ample on any link, and bounds what a client that
  // opens connections and sends nothing can hold.
  SWITCHBOARD_HEADERS_TIMEOUT: duration('10s', 1_000, 600_000, '1s–10m'),
  // Open connections per client address (an IPv6 /64), not counting trusted proxies. An
  // agent host holds one stream per MCP session plus a few for its calls, so 256 leaves
  // room for a hundred sessions behind one NAT, while one address cannot take the
  // process's file descriptors.
  SWITCHBOARD_MAX_CONNECTIONS_PER_IP: integer(256, 1, 1_000_000),
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
  // Host names served besides the public URL's (and the loopback names on a loopback bind),
  // e.g. a second DNS name or the address a proxy forwards with. Empty: only those; a
  // non-loopback bind with neither this nor a public URL serves any Host
  // (docs/design/limits.md, "Host and Origin").
  SWITCHBOARD_ALLOWED_HOSTS: hostList,
  // Unset: /metrics is open, which is allowed only on a loopback bind (the series name
  // every tenant's endpoints and queues). Set: a scraper's bearer; 32+ characters so it
  // cannot be guessed, and no endpoint, API token or cookie opens it.
  SWITCHBOARD_METRICS_TOKEN: z.string().check(minLength(32, 'must be at least 32 characters')).optional(),
  // Endpoints labelled on the queue series before the rest are summed into
  // endpoint="_other": each labelled endpoint costs a series per queue and state, kept by
  // Prometheus forever. 500 covers any team; a hosted install with more sums the tail.
  SWITCHBOARD_METRICS_MAX_ENDPOINTS: integer(500, 1, 100_000),
  // The queue wait the example alert SwitchboardQueueWaitHigh pages on: served as the gauge
  // switchboard_queue_wait_alert_seconds so the rule compares the p95 with the team's own
  // setting, not a number hard-coded in deploy/prometheus/alerts.yml. 10 minutes: agents
  // woken by a doorbell claim in seconds, so a p95 that long means nobody is taking work.
  SWITCHBOARD_QUEUE_WAIT_ALERT: duration('10m', 1_000, 86_400_000, '1s–24h'),
  // Quotas per human (docs/design/limits.md, "Quotas"): far above what a team uses, so
  // only a runaway script or an abusive tenant meets them. Each create past one answers
  // resource_exhausted naming the setting.
  SWITCHBOARD_QUOTA_ENDPOINTS: integer(DEFAULT_QUOTAS.endpoints, 1, 1_000_000),
  // Live (pending, scheduled, claimed) todos per endpoint: a million is the backlog the
  // claim path is measured at (bench/README.md, scale) and months of agent work; past it
  // a producer is stuck in a loop, not queueing work.
  SWITCHBOARD_QUOTA_LIVE_TODOS: integer(DEFAULT_QUOTAS.liveTodosPerEndpoint, 1, 100_000_000),
  SWITCHBOARD_QUOTA_API_TOKENS: integer(DEFAULT_QUOTAS.apiTokens, 1, 1_000_000),
  SWITCHBOARD_QUOTA_WEBHOOKS: integer(DEFAULT_QUOTAS.webhooks, 1, 1_000_000),
  SWITCHBOARD_QUOTA_NOTIFY_HOOKS: integer(DEFAULT_QUOTAS.notifyHooks, 1, 1_000_000),
  SWITCHBOARD_QUOTA_SCHEDULES: integer(DEFAULT_QUOTAS.schedules, 1, 1_000_000),
  // Off: notify hooks are HTTPS only, so a signed notification is never readable on the wire.
  SWITCHBOARD_PUSH_ALLOW_HTTP: z.enum(['on', 'off']).default('off'),
  // Empty: hooks never reach loopback/private/link-local/multicast addresses (SSRF guard);
  // list the CIDRs of internal receivers an operator trusts (e.g. 10.20.0.0/16).
  SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: cidrList,
  // Read by the CLI (src/config/cli.ts), never by the server: listed so that a shell with
  // them exported can still run `serve` without an unknown-variable error.
  SWITCHBOARD_URL: z.string().optional(),
  SWITCHBOARD_TOKEN: z.string().optional(),
  ...TRACING_VARS,
});

/** Every variable the schema reads, for the docs/configuration.md check and the unknown-variable check. */
export const ENV_VARS = Object.keys(SCHEMA.shape);

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

/** The loopback names a browser on this machine uses for a loopback-bound server. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The Host names served (docs/design/limits.md, "Host and Origin"): the public URL's, the
 * loopback names when bound to loopback (and the bound name itself), the extra ones.
 * null, any Host, only when nothing names the server: a non-loopback bind without a
 * public URL or allowed hosts, where sign-in (auth off is refused there) is the guard.
 */
function allowedHosts(listenHost: string, publicUrl: string | undefined, extra: string[]): string[] | null {
  const names = new Set(extra);
  if (publicUrl !== undefined) names.add(new URL(publicUrl).hostname);
  if (isLoopbackHost(listenHost)) {
    for (const name of LOOPBACK_NAMES) names.add(name);
    names.add(listenHost.includes(':') ? `[${listenHost}]` : listenHost.toLowerCase());
  }
  return names.size === 0 ? null : [...names];
}

/**
 * The origins a browser page may drive /mcp and /ws from, whole (scheme, host, port;
 * docs/design/limits.md, "Host and Origin"): the public URL's; the listen address's, and
 * on a loopback bind each loopback name at the listen port; each extra host name with the
 * public URL's scheme and port. A page on another port of the same name (another local
 * server) is another origin, and is not one of these.
 */
function allowedOrigins(listen: { host: string; port: number }, publicUrl: string, extra: string[]): string[] {
  const pub = new URL(publicUrl);
  const origins = new Set([pub.origin]);
  const bound = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  const names = isLoopbackHost(listen.host) ? [bound, ...LOOPBACK_NAMES] : [bound];
  for (const name of names) origins.add(new URL(`http://${name}:${listen.port}`).origin);
  for (const name of extra) origins.add(new URL(`${pub.protocol}//${name}${pub.port ? `:${pub.port}` : ''}`).origin);
  return [...origins];
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
    parsed.data.SWITCHBOARD_METRICS_TOKEN === undefined &&
    !isLoopbackHost(parsed.data.SWITCHBOARD_LISTEN.host)
  ) {
    problems.push(
      `SWITCHBOARD_METRICS_TOKEN: required when listening on ${parsed.data.SWITCHBOARD_LISTEN.host}: /metrics names every tenant's endpoints and queues, so it is open only on a loopback bind; set a token of 32+ characters for the scraper, or listen on 127.0.0.1`,
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
  if (parsed.success && parsed.data.SWITCHBOARD_HEADERS_TIMEOUT > parsed.data.SWITCHBOARD_REQUEST_TIMEOUT) {
    problems.push('SWITCHBOARD_HEADERS_TIMEOUT: must not be longer than SWITCHBOARD_REQUEST_TIMEOUT');
  }
  if (parsed.success && parsed.data.SWITCHBOARD_ASK_HUMAN_TIMEOUT > parsed.data.SWITCHBOARD_ASK_HUMAN_MAX_TIMEOUT) {
    problems.push('SWITCHBOARD_ASK_HUMAN_TIMEOUT: must not be longer than SWITCHBOARD_ASK_HUMAN_MAX_TIMEOUT');
  }
  if (
    parsed.success &&
    parsed.data.SWITCHBOARD_DB_POOLER === 'transaction' &&
    parsed.data.SWITCHBOARD_BUS_DATABASE_URL === undefined
  ) {
    problems.push(
      'SWITCHBOARD_BUS_DATABASE_URL: required with SWITCHBOARD_DB_POOLER=transaction: LISTEN and the migrations need a session, so name the database directly',
    );
  }
  if (
    parsed.success &&
    parsed.data.SWITCHBOARD_BUS_DATABASE_URL !== undefined &&
    parsed.data.SWITCHBOARD_DATABASE_URL === undefined
  ) {
    problems.push(
      'SWITCHBOARD_BUS_DATABASE_URL: set only together with SWITCHBOARD_DATABASE_URL (the embedded PostgreSQL needs no second URL)',
    );
  }
  if (parsed.success) problems.push(...oidcProblems(parsed.data));
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const e = parsed.data;
  const hostForUrl = e.SWITCHBOARD_LISTEN.host.includes(':')
    ? `[${e.SWITCHBOARD_LISTEN.host}]`
    : e.SWITCHBOARD_LISTEN.host;
  const publicUrl = (e.SWITCHBOARD_PUBLIC_URL ?? `http://${hostForUrl}:${e.SWITCHBOARD_LISTEN.port}`).replace(
    /\/$/,
    '',
  );
  return {
    ok: true,
    config: {
      tracing: tracingConfig(e),
      listen: e.SWITCHBOARD_LISTEN,
      publicUrl,
      database: {
        url: e.SWITCHBOARD_DATABASE_URL ?? null,
        busUrl: e.SWITCHBOARD_BUS_DATABASE_URL ?? null,
        transactionPooler: e.SWITCHBOARD_DB_POOLER === 'transaction',
        dataDir: e.SWITCHBOARD_DATA_DIR,
        poolSize: e.SWITCHBOARD_DB_POOL_SIZE,
        statementTimeoutMs: e.SWITCHBOARD_STATEMENT_TIMEOUT,
        idleInTransactionTimeoutMs: e.SWITCHBOARD_IDLE_IN_TRANSACTION_TIMEOUT,
        lockTimeoutMs: e.SWITCHBOARD_LOCK_TIMEOUT,
        connectTimeoutMs: e.SWITCHBOARD_DB_CONNECT_TIMEOUT,
      },
      logLevel: e.SWITCHBOARD_LOG_LEVEL,
      logFormat: e.SWITCHBOARD_LOG_FORMAT,
      credentialGraceSeconds: Math.round(e.SWITCHBOARD_CREDENTIAL_GRACE / 1000),
      auth: e.SWITCHBOARD_AUTH === 'on',
      tokenTtlSeconds: Math.round(e.SWITCHBOARD_TOKEN_TTL / 1000),
      oidc: oidcConfig(e),
      passwordSignIn: e.SWITCHBOARD_PASSWORD_SIGNIN === 'on',
      oauth: {
        accessTokenTtlSeconds: Math.round(e.SWITCHBOARD_OAUTH_ACCESS_TOKEN_TTL / 1000),
        refreshTokenTtlSeconds: Math.round(e.SWITCHBOARD_OAUTH_REFRESH_TOKEN_TTL / 1000),
        registerLimit: {
          perSecond: e.SWITCHBOARD_OAUTH_REGISTER_PER_MINUTE / 60,
          burst: e.SWITCHBOARD_OAUTH_REGISTER_BURST,
        },
      },
      trustProxy: e.SWITCHBOARD_TRUST_PROXY,
      connections: {
        requestTimeoutMs: e.SWITCHBOARD_REQUEST_TIMEOUT,
        headersTimeoutMs: e.SWITCHBOARD_HEADERS_TIMEOUT,
        maxPerAddress: e.SWITCHBOARD_MAX_CONNECTIONS_PER_IP,
      },
      instanceId: e.SWITCHBOARD_INSTANCE_ID ?? null,
      metricsToken: e.SWITCHBOARD_METRICS_TOKEN ?? null,
      secrets: {
        key: e.SWITCHBOARD_SECRET_KEY ?? null,
        keyFile: e.SWITCHBOARD_SECRET_KEY_FILE ?? null,
        previous: e.SWITCHBOARD_SECRET_KEY_PREVIOUS ?? null,
      },
      metricsMaxEndpoints: e.SWITCHBOARD_METRICS_MAX_ENDPOINTS,
      queueWaitAlertSeconds: e.SWITCHBOARD_QUEUE_WAIT_ALERT / 1000,
      allowedHosts: allowedHosts(e.SWITCHBOARD_LISTEN.host, e.SWITCHBOARD_PUBLIC_URL, e.SWITCHBOARD_ALLOWED_HOSTS),
      allowedOrigins: allowedOrigins(e.SWITCHBOARD_LISTEN, publicUrl, e.SWITCHBOARD_ALLOWED_HOSTS),
      quotas: {
        endpoints: e.SWITCHBOARD_QUOTA_ENDPOINTS,
        liveTodosPerEndpoint: e.SWITCHBOARD_QUOTA_LIVE_TODOS,
        apiTokens: e.SWITCHBOARD_QUOTA_API_TOKENS,
        webhooks: e.SWITCHBOARD_QUOTA_WEBHOOKS,
        notifyHooks: e.SWITCHBOARD_QUOTA_NOTIFY_HOOKS,
        schedules: e.SWITCHBOARD_QUOTA_SCHEDULES,
      },
      todos: {
        defaultLeaseSeconds: Math.round(e.SWITCHBOARD_DEFAULT_LEASE / 1000),
        idempotencyWindowSeconds: Math.round(e.SWITCHBOARD_IDEMPOTENCY_WINDOW / 1000),
        keepAttempts: e.SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO,
        coalesceMaxBatch: e.SWITCHBOARD_COALESCE_MAX_BATCH,
        askTimeoutSeconds: Math.round(e.SWITCHBOARD_ASK_HUMAN_TIMEOUT / 1000),
        askMaxTimeoutSeconds: Math.round(e.SWITCHBOARD_ASK_HUMAN_MAX_TIMEOUT / 1000),
      },
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
        webhookEventsMs: e.SWITCHBOARD_WEBHOOK_EVENT_RETENTION,
        webhookEventsPerEndpoint: e.SWITCHBOARD_WEBHOOK_EVENTS_PER_ENDPOINT,
        quarantineMs: e.SWITCHBOARD_QUARANTINE_TTL,
        doorbellMs: e.SWITCHBOARD_DOORBELL_RETENTION,
        admissionAuditMs: e.SWITCHBOARD_RETENTION,
        rollupsMs: e.SWITCHBOARD_ROLLUP_RETENTION,
        oauthMs: e.SWITCHBOARD_OAUTH_RETENTION,
        oauthTokenLifeMs: Math.max(e.SWITCHBOARD_OAUTH_REFRESH_TOKEN_TTL, e.SWITCHBOARD_OAUTH_ACCESS_TOKEN_TTL),
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
      webhooks: {
        perWebhook: { perSecond: e.SWITCHBOARD_WEBHOOK_RATE, burst: e.SWITCHBOARD_WEBHOOK_BURST },
        secretGraceSeconds: Math.round(e.SWITCHBOARD_WEBHOOK_SECRET_GRACE / 1000),
      },
      handoff: { depthMax: e.SWITCHBOARD_HANDOFF_DEPTH_MAX },
      routing: {
        rulesMax: e.SWITCHBOARD_RULES_MAX,
        expressionMax: e.SWITCHBOARD_RULE_EXPRESSION_MAX,
        evalBudgetMs: e.SWITCHBOARD_RULE_EVAL_BUDGET,
        fanoutMax: e.SWITCHBOARD_FANOUT_MAX,
        workOrderSeconds: Math.round(e.SWITCHBOARD_WORK_ORDER_WINDOW / 1000),
      },
      mcp: {
        credentialReuseMs: e.SWITCHBOARD_MCP_CREDENTIAL_REUSE,
        maxWaitersPerEndpoint: e.SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT,
        sessionsPerEndpoint: e.SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT,
        streamlessIdleSeconds: Math.round(e.SWITCHBOARD_MCP_STREAMLESS_IDLE / 1000),
        perCredential: { perSecond: e.SWITCHBOARD_MCP_RATE, burst: e.SWITCHBOARD_MCP_BURST },
        unauthenticatedPerIp: {
          perSecond: e.SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP,
          burst: e.SWITCHBOARD_MCP_UNAUTH_BURST_PER_IP,
        },
      },
      board: { pollMs: e.SWITCHBOARD_BOARD_POLL },
      api: {
        perCredential: { perSecond: e.SWITCHBOARD_API_RATE, burst: e.SWITCHBOARD_API_BURST },
        perIp: { perSecond: e.SWITCHBOARD_API_RATE_PER_IP, burst: e.SWITCHBOARD_API_BURST_PER_IP },
        perSocket: { perSecond: e.SWITCHBOARD_WS_RATE, burst: e.SWITCHBOARD_WS_BURST },
        socketsPerHuman: e.SWITCHBOARD_WS_PER_HUMAN,
        signIn: { perSecond: e.SWITCHBOARD_SIGNIN_PER_MINUTE / 60, burst: e.SWITCHBOARD_SIGNIN_BURST },
      },
    },
  };
}
