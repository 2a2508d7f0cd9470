// The parsed configuration (src/config/schema.ts makes it from the environment): the
// slices each part of the server receives.

import type { LOG_FORMATS, LOG_LEVELS } from './fields.js';
import type { Quotas } from '../domain/quotas.js';
import type { OidcConfig } from './oidc.js';
import type { TracingConfig } from './tracing.js';

export type { OidcConfig, TracingConfig };

export interface Config {
  /** Traces (OpenTelemetry over OTLP/HTTP). */
  tracing: TracingConfig;
  listen: { host: string; port: number };
  publicUrl: string;
  database: {
    url: string | null;
    /**
     * SWITCHBOARD_BUS_DATABASE_URL: where the LISTEN connection and migrations connect
     * (each needs a session of its own); null: the main URL.
     */
    busUrl: string | null;
    /**
     * SWITCHBOARD_DB_POOLER=transaction: the main URL is a transaction pooler, so the pool
     * sends no named prepared statements and no per-connection timeouts (docs/deploy.md).
     */
    transactionPooler: boolean;
    dataDir: string;
    poolSize: number;
    /** statement_timeout of every pooled connection, in ms; 0: none. */
    statementTimeoutMs: number;
    /** idle_in_transaction_session_timeout of every pooled connection, in ms; 0: none. */
    idleInTransactionTimeoutMs: number;
    /** lock_timeout of every pooled connection (not migrations), in ms; 0: none. */
    lockTimeoutMs: number;
    /** SWITCHBOARD_DB_CONNECT_TIMEOUT: how long one host of the URL may take to give a session, in ms. */
    connectTimeoutMs: number;
  };
  logLevel: (typeof LOG_LEVELS)[number];
  /** SWITCHBOARD_LOG_FORMAT: `serve`'s lines as JSON, readable, or by whether stdout is a terminal. */
  logFormat: (typeof LOG_FORMATS)[number];
  /** SWITCHBOARD_CREDENTIAL_GRACE in seconds: how long a rotated endpoint credential still works. */
  credentialGraceSeconds: number;
  /** false only with SWITCHBOARD_AUTH=off on a loopback address: every request is an admin. */
  auth: boolean;
  /** SWITCHBOARD_TOKEN_TTL in seconds: a login token's sliding lifetime. */
  tokenTtlSeconds: number;
  /** Human sign-in through OIDC; null: off (docs/design/oauth.md, "Human sign-in through OIDC"). */
  oidc: OidcConfig | null;
  /** false with SWITCHBOARD_PASSWORD_SIGNIN=off: board and API password sign-in are refused. */
  passwordSignIn: boolean;
  /** OAuth token lifetimes in seconds (access: clamped to the endpoint's expiry). */
  oauth: {
    accessTokenTtlSeconds: number;
    refreshTokenTtlSeconds: number;
    /** Registrations per client address, per instance. */
    registerLimit: { perSecond: number; burst: number };
  };
  trustProxy: string[];
  /**
   * Slow clients: SWITCHBOARD_REQUEST_TIMEOUT and SWITCHBOARD_HEADERS_TIMEOUT (receiving a
   * request) in ms, and SWITCHBOARD_MAX_CONNECTIONS_PER_IP.
   */
  connections: { requestTimeoutMs: number; headersTimeoutMs: number; maxPerAddress: number };
  instanceId: string | null;
  /** The bearer /metrics requires; null: /metrics is open (loopback binds only). */
  metricsToken: string | null;
  /** The signing-secret sealing key (docs/design/intake.md, "Secrets at rest"); the file is read at start. */
  secrets: { key: string | null; keyFile: string | null; previous: string | null };
  /** Endpoints labelled on the queue series before the rest fold into endpoint="_other". */
  metricsMaxEndpoints: number;
  /** SWITCHBOARD_QUEUE_WAIT_ALERT, in seconds. */
  queueWaitAlertSeconds: number;
  /**
   * The Host names served (lower case, IPv6 in brackets): the public URL's, the loopback
   * names on a loopback bind, SWITCHBOARD_ALLOWED_HOSTS. null: any Host (a non-loopback
   * bind with neither a public URL nor allowed hosts).
   */
  allowedHosts: string[] | null;
  /**
   * The whole origins (scheme, host, port) a browser page may use /mcp and /ws from,
   * besides the origin a request is addressed to: the public URL's, the listen address's
   * (each loopback name on a loopback bind), SWITCHBOARD_ALLOWED_HOSTS with the public
   * URL's scheme and port.
   */
  allowedOrigins: string[];
  quotas: Quotas;
  todos: {
    defaultLeaseSeconds: number;
    idempotencyWindowSeconds: number;
    keepAttempts: number;
    /** SWITCHBOARD_COALESCE_MAX_BATCH: the most calls one claim, settle or create statement serves; 1: off. */
    coalesceMaxBatch: number;
    /** An ask_human question's default and longest wait (SWITCHBOARD_ASK_HUMAN_TIMEOUT, _MAX_TIMEOUT). */
    askTimeoutSeconds: number;
    askMaxTimeoutSeconds: number;
  };
  sweeps: { reaperIntervalMs: number; retentionIntervalMs: number; retentionMs: number };
  /**
   * How long each growing table keeps a row once it is dead (closed, expired, spent, revoked,
   * received, sent). The admission audit follows SWITCHBOARD_RETENTION like finished todos:
   * it explains budget decisions about work that is kept that long.
   */
  retention: RetentionConfig;
  /** Notify hook targets: http allowed, and CIDRs exempt from the private-address refusal. */
  hooks: { allowHttp: boolean; allowCidrs: string[] };
  /** Webhook intake (docs/design/intake.md): the per-webhook rate and the secret rotation grace. */
  webhooks: {
    perWebhook: { perSecond: number; burst: number };
    secretGraceSeconds: number;
  };
  /** Hand-offs between agents (docs/design/handoff.md). */
  handoff: { depthMax: number };
  /** Routing rules, work orders and quarantine (docs/design/routing.md, "Limits"). */
  routing: {
    rulesMax: number;
    expressionMax: number;
    evalBudgetMs: number;
    fanoutMax: number;
    workOrderSeconds: number;
  };
  doorbell: { ackWindowMs: number };
  /** Instance liveness: how often this instance beats, and how old a beat means dead. */
  instances: { heartbeatMs: number; deadAfterMs: number };
  messages: MessageConfig;
  mcp: McpConfig;
  board: { pollMs: number };
  /** The operator API's rate limits (token buckets, per instance). */
  api: ApiLimits;
}

export interface McpConfig {
  credentialReuseMs: number;
  maxWaitersPerEndpoint: number;
  /** Live sessions per endpoint, across instances. */
  sessionsPerEndpoint: number;
  /** SWITCHBOARD_MCP_STREAMLESS_IDLE: idle seconds after which a session with no stream and no claim closes. */
  streamlessIdleSeconds: number;
  /** Requests per credential (endpoint), per instance. */
  perCredential: { perSecond: number; burst: number };
  /** Unauthenticated or failed requests per client address, per instance. */
  unauthenticatedPerIp: { perSecond: number; burst: number };
}

export interface ApiLimits {
  perCredential: { perSecond: number; burst: number };
  perIp: { perSecond: number; burst: number };
  /** Frames per board WebSocket connection (/ws). */
  perSocket: { perSecond: number; burst: number };
  /** SWITCHBOARD_WS_PER_HUMAN: open board WebSockets per human, per instance. */
  socketsPerHuman: number;
  /** Each sign-in bucket (per address and per account). */
  signIn: { perSecond: number; burst: number };
}

export interface RetentionConfig {
  mcpSessionsMs: number;
  signInMs: number;
  apiTokensMs: number;
  webhookDeliveriesMs: number;
  /** The webhook event history (docs/design/intake.md, "Retention and the cap"). */
  webhookEventsMs: number;
  /** Events kept per endpoint, newest first (SWITCHBOARD_WEBHOOK_EVENTS_PER_ENDPOINT). */
  webhookEventsPerEndpoint: number;
  /** Held quarantine items expire after this (SWITCHBOARD_QUARANTINE_TTL; docs/design/routing.md). */
  quarantineMs: number;
  doorbellMs: number;
  admissionAuditMs: number;
  /** Per-minute queue rollups (docs/design/queue-rollups.md). */
  rollupsMs: number;
  /** Dead OAuth codes, tokens, grants and unused clients (docs/design/oauth.md). */
  oauthMs: number;
  /** A grant holds no usable token this long after its last pair was issued (the longer token life). */
  oauthTokenLifeMs: number;
}

export interface MessageConfig {
  ackTimeoutMs: number;
  /** The valid environment capacity (non-positive already 0), or null. */
  envCapacity: number | null;
  /** Invalid capacity variables, to be logged as warnings and otherwise ignored. */
  warnings: string[];
}
