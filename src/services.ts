// The services of one instance, built in one place (docs/architecture.md): every use-case
// deps object, the doorbell and its acknowledgement side, the message pump, notify hooks
// and presence, the heartbeat and the sweep list. Each is built from what was built
// before it; nothing here is declared after it is used. Building subscribes nothing and
// starts no timer: `start()` connects the parts to the bus and to the streams (the
// serving instance), `stop()` undoes it. An HTTP-only test builds the same object and
// never starts it, so it runs no doorbell, pump or sweep.

import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from './config/index.js';
import type { Bus } from './domain/events.js';
import type { Migration } from './db/migrate.js';
import { poolCounts } from './db/generic-share.js';
import type { Pool } from './db/pool.js';
import { Doorbell } from './doorbell/pump.js';
import { RingRowWriter } from './doorbell/ring-writer.js';
import { ringRecorder, SelfTestOutcomes, SelfTestRinger } from './doorbell/self-test-ring.js';
import { CredentialCache, type Credentialed, type CredentialForgetting } from './endpoints/credentials.js';
import { ReplyDelivery } from './grants/reply.js';
import { HookDelivery } from './hooks/delivery.js';
import { NO_KEYRING, type Keyring } from './secrets/keyring.js';
import { bearerChallenge } from './oauth/metadata.js';
import { HookGuard } from './hooks/guard.js';
import { NotifyHooks } from './hooks/notify.js';
import { askTimeoutSweep } from './sweeps/asks.js';
import type { QuotaDeps } from './quotas/check.js';
import type { Principal, TokenDeps } from './identity/principal.js';
import { OidcProvider } from './oidc/provider.js';
import { CapacitySetting } from './messages/capacity.js';
import type { MessageDeps } from './messages/context.js';
import { MessagePump } from './messages/pump.js';
import { Metrics } from './metrics/index.js';
import { collectFromDatabase } from './metrics-reads.js';
import { PresenceService } from './presence/digest.js';
import { recordWait, type SessionDeps } from './sessions/index.js';
import { LocalStreams } from './sessions/local-streams.js';
import { admissionReopenSweep, admissionRetentionSweep } from './sweeps/admission.js';
import { todoCountsFoldSweep } from './sweeps/counts.js';
import { queueRollupSweep } from './sweeps/rollups.js';
import { reringSweep } from './sweeps/doorbell.js';
import { endpointExpirySweep } from './sweeps/endpoints.js';
import { hookSweep } from './sweeps/hooks.js';
import { deadInstanceSweep, InstanceHeartbeat, type Redelivery } from './sweeps/instances.js';
import { replySweep } from './sweeps/handoff.js';
import { messageRedeliverySweep } from './sweeps/messages.js';
import { presenceSweep } from './sweeps/presence.js';
import { retentionSweeps } from './sweeps/retention.js';
import { scheduleSweep } from './sweeps/schedules.js';
import type { Sweep } from './sweeps/runner.js';
import { SchedulePromoter, schedulePromotionSweep } from './sweeps/schedule.js';
import { idleSessionSweep } from './sweeps/sessions.js';
import { reaperSweep, retentionSweep, retryRequeueSweep } from './sweeps/todos.js';
import { doorbellTestsSweep, unheardSweep } from './sweeps/unheard.js';
import type { TodoDeps } from './todos/index.js';
import { coalescing } from './todos/coalesce.js';
import { Waiters } from './todos/waiters.js';
import type { VersionInfo } from './version.js';
import { NO_TRACING, type Tracing } from './tracing/index.js';

export interface ServiceOptions {
  config: Config;
  pool: Pool;
  bus: Bus;
  log: Logger;
  instanceId: string;
  version: VersionInfo;
  migrations: Migration[];
  /** Set when SWITCHBOARD_AUTH=off: every request is this admin. */
  syntheticAdmin: Principal | null;
  /** The wall clock of the HTTP surfaces (rate limits, expiry shown); tests may stop it. */
  clock?: () => Date;
  /** This instance's traces (built in main.ts); absent: off. */
  tracing?: Tracing;
  /** Seals and opens signing secrets at rest (loaded in main.ts); absent: none, stored as issued. */
  keyring?: Keyring;
}

/**
 * The process's (credential, live session) answers: /mcp resolves a bearer with `find`;
 * a revoke, a close or an expiry anywhere `forget`s what it vouched for.
 */
export interface CredentialLookup extends CredentialForgetting {
  find(token: string, sessionId: string | null): Promise<Credentialed | null>;
  /** The WWW-Authenticate of a refused bearer: names the protected-resource metadata (RFC 9728). */
  challenge: string;
}

export interface Services {
  config: Config;
  log: Logger;
  instanceId: string;
  version: VersionInfo;
  migrations: Migration[];
  clock: () => Date;
  pool: Pool;
  bus: Bus;
  metrics: Metrics;
  /** Spans of this instance (docs/design/tracing.md); NO_TRACING when off. */
  tracing: Tracing;
  syntheticAdmin: Principal | null;
  /** Human sign-in through the organisation's OIDC provider; null when not configured. */
  oidc: OidcProvider | null;
  /** `tracing` rides here so every create use case the surfaces spread it into stores the trace. */
  identity: TokenDeps & QuotaDeps & { tracing: Tracing };
  todos: TodoDeps;
  sessions: SessionDeps;
  credentials: CredentialLookup;
  messages: MessageDeps;
  /** Long-poll waits of claim_next and next_message on this instance (src/todos/waiters.ts). */
  waiters: Waiters;
  hookGuard: HookGuard;
  /** The signing-secret keyring (docs/design/intake.md, "Secrets at rest"). */
  keyring: Keyring;
  /** The notification streams this instance holds (written by the doorbell and the pump). */
  streams: LocalStreams;
  doorbell: Doorbell;
  /** Ring records and self-tests (docs/design/doorbell-acknowledgement.md). */
  doorbellAck: {
    writer: RingRowWriter;
    outcomes: SelfTestOutcomes;
    ringer: SelfTestRinger;
    sweeps: Sweep[];
  };
  pump: MessagePump;
  /** Delivers hand-off replies when announced (docs/design/handoff.md, "Reply"). */
  replies: ReplyDelivery;
  /** Notify hook delivery and presence of this instance. */
  push: { delivery: HookDelivery; hooks: NotifyHooks; presence: PresenceService; sweeps: Sweep[] };
  heartbeat: InstanceHeartbeat;
  /** What the dead-instance sweep and the heartbeat give back when an instance dies. */
  redelivery: Redelivery;
  /** Makes scheduled todos ready at their not_before (src/sweeps/schedule.ts). */
  promoter: SchedulePromoter;
  sweeps: Sweep[];
  /** Subscribes the parts to the bus and the streams; once. */
  start(): void;
  /** Undoes start() and lets in-flight work settle; call after the HTTP app has closed. */
  stop(): Promise<void>;
}

export function buildServices(o: ServiceOptions): Services {
  const { config, pool, bus, log, instanceId } = o;
  const db = pool;
  const tracing = o.tracing ?? NO_TRACING;

  const metrics = new Metrics({
    maxEndpoints: config.metricsMaxEndpoints,
    queueWaitAlertSeconds: config.queueWaitAlertSeconds,
  });
  collectFromDatabase(metrics, pool);
  const cache = new CredentialCache({ reuseMs: config.mcp.credentialReuseMs });
  const credentials: CredentialLookup = {
    find: (token, sessionId) => cache.endpointFor(db, token, sessionId),
    forget: (endpointId, sessionId) => cache.forget(endpointId, sessionId),
    challenge: bearerChallenge(config.publicUrl),
  };

  // The quotas ride along wherever the identity deps are spread (the operator deps of the
  // API and the board), so every create use case sees the configured ones.
  const identity: TokenDeps & QuotaDeps & { tracing: Tracing; credentialGraceSeconds: number } = {
    db,
    tracing,
    publicUrl: config.publicUrl,
    tokenTtlSeconds: config.tokenTtlSeconds,
    credentials,
    credentialGraceSeconds: config.credentialGraceSeconds,
    quotas: config.quotas,
    passwordSignIn: config.passwordSignIn,
  };
  // Discovery happens on the first sign-in, not here: a provider that is down must not stop the server.
  const oidc = config.oidc ? new OidcProvider(config.oidc, `${config.publicUrl}/login/oidc/callback`) : null;
  const todos: TodoDeps = {
    db,
    defaultLeaseSeconds: config.todos.defaultLeaseSeconds,
    idempotencyWindowSeconds: config.todos.idempotencyWindowSeconds,
    keepAttempts: config.todos.keepAttempts,
    coalesce: coalescing(db, { maxBatch: config.todos.coalesceMaxBatch, metrics }),
    metrics,
    quotas: config.quotas,
    tracing,
    settled: (endpointId, sessionId) => doorbell.settled(endpointId, sessionId),
    asks: { defaultSeconds: config.todos.askTimeoutSeconds, maxSeconds: config.todos.askMaxTimeoutSeconds },
    asked: (e) =>
      void hooks.waitingOnHuman({
        endpointId: e.endpointId,
        todoId: e.todo.id,
        queue: e.todo.queue,
        title: e.todo.title,
        question: e.question,
        choices: e.choices,
        askedAt: e.askedAt,
        expiresAt: e.expiresAt,
        traceparent: e.traceparent,
      }),
  };
  const sessions: SessionDeps = { db, instanceId, credentials, metrics: metrics.sessions };
  const capacity = new CapacitySetting({ db, envCapacity: config.messages.envCapacity, log });
  const messages: MessageDeps = { db, capacity, metrics };
  const hookGuard = new HookGuard(config.hooks);
  const waiters = new Waiters({
    maxPerEndpoint: config.mcp.maxWaitersPerEndpoint,
    metrics: metrics.latency,
    // A waiting session is busy: an initialize at the cap must not evict it.
    onWait: (endpointId, sessionId, seconds) =>
      void recordWait(sessions, endpointId, sessionId, seconds).catch((err: unknown) =>
        log.warn({ err }, 'recording a waiting call on its session failed'),
      ),
  });

  // The doorbell writes to this instance's streams and tells its recorder what it wrote;
  // the self-test ringer sends through the doorbell.
  const streams = new LocalStreams({ sessions, log });
  metrics.health.read({
    pool: () => poolCounts(pool),
    openStreams: () => streams.count(),
    waitingLongPolls: () => waiters.waiting(),
  });
  const writer = new RingRowWriter({ db, log, metrics: metrics.doorbell, deliveries: metrics });
  const outcomes = new SelfTestOutcomes({ db, log });
  const doorbell = new Doorbell({
    db,
    instanceId,
    log,
    writer: streams,
    recorder: ringRecorder(writer, outcomes),
    tracing,
    ackWindowMs: config.doorbell.ackWindowMs,
  });
  const ringer = new SelfTestRinger({ db, log, doorbell, outcomes });
  const pump = new MessagePump({ messages, instanceId, log, writer: streams });
  const replies = new ReplyDelivery({ db, messages, log });

  const keyring = o.keyring ?? NO_KEYRING;
  const delivery = new HookDelivery({
    db,
    guard: hookGuard,
    keyring,
    log,
    metrics: metrics.hooks,
    version: o.version.version,
    tracing,
  });
  const hooks = new NotifyHooks({ db, log, delivery });
  const presence = new PresenceService({ db, log, doorbell, hooks });

  // Liveness: this instance's row, beaten on its own timer; the sweep below finds dead ones.
  const heartbeat = new InstanceHeartbeat({
    db,
    info: { id: instanceId, host: hostname(), pid: process.pid, version: o.version.version },
    intervalMs: config.instances.heartbeatMs,
    log,
    onRevived: () => streams.reopen(),
  });
  const redelivery: Redelivery = {
    messages,
    ring: (endpointId, queue) => doorbell.ready(endpointId, queue),
    ringMarginMs: config.instances.heartbeatMs,
  };

  const doorbellSweeps = [
    unheardSweep({ db, log, ackWindowMs: config.doorbell.ackWindowMs, metrics: metrics.doorbell }),
    doorbellTestsSweep({ db, ringer }),
  ];
  const pushSweeps = [presenceSweep(presence), hookSweep(hooks)];
  const promoter = new SchedulePromoter({ db, log });
  const sweeps: Sweep[] = [
    schedulePromotionSweep(promoter, config.sweeps.reaperIntervalMs),
    reaperSweep(pool, config.sweeps.reaperIntervalMs, metrics),
    askTimeoutSweep(pool, config.sweeps.reaperIntervalMs, metrics),
    retryRequeueSweep(pool, config.sweeps.reaperIntervalMs),
    retentionSweep(pool, config.sweeps.retentionIntervalMs, config.sweeps.retentionMs),
    endpointExpirySweep(pool, config.sweeps.reaperIntervalMs, credentials),
    reringSweep(doorbell),
    todoCountsFoldSweep(pool),
    queueRollupSweep(pool),
    idleSessionSweep(pool, {
      streamlessSeconds: config.mcp.streamlessIdleSeconds,
      metrics: metrics.sessions,
    }),
    admissionReopenSweep(pool),
    admissionRetentionSweep(pool, config.sweeps.retentionIntervalMs),
    scheduleSweep({
      pool,
      defaultLeaseSeconds: config.todos.defaultLeaseSeconds,
      log,
      metrics,
      quotas: config.quotas,
      tracing,
    }),
    ...retentionSweeps(pool, config.sweeps.retentionIntervalMs, config.retention),
    ...doorbellSweeps,
    messageRedeliverySweep(messages, config.messages.ackTimeoutMs),
    replySweep({ db, messages, log }),
    ...pushSweeps,
    deadInstanceSweep(pool, {
      intervalMs: config.instances.heartbeatMs,
      deadAfterMs: config.instances.deadAfterMs,
      redelivery,
      log,
      heartbeat,
      instanceId,
    }),
  ];

  let unsubscribe: Array<() => void> = [];
  return {
    config,
    log,
    instanceId,
    version: o.version,
    migrations: o.migrations,
    clock: o.clock ?? (() => new Date()),
    pool,
    bus,
    metrics,
    tracing,
    syntheticAdmin: o.syntheticAdmin,
    oidc,
    identity,
    todos,
    sessions,
    credentials,
    messages,
    waiters,
    hookGuard,
    keyring,
    streams,
    doorbell,
    doorbellAck: { writer, outcomes, ringer, sweeps: doorbellSweeps },
    pump,
    replies,
    push: { delivery, hooks, presence, sweeps: pushSweeps },
    heartbeat,
    redelivery,
    promoter,
    sweeps,
    start() {
      if (unsubscribe.length > 0) return;
      unsubscribe = [
        capacity.listen(bus),
        ringer.listen(bus),
        doorbell.listen(bus),
        pump.listen(bus),
        replies.listen(bus),
        hooks.listen(bus),
        presence.listen(bus),
        waiters.listen(bus),
        promoter.listen(bus),
        // Ring-on-attach, and the message pump's delivery to a stream that just opened here.
        streams.listen({
          opened: (s) => {
            void doorbell.attached(s.endpointId, s.sessionId);
            void pump.attached(s);
          },
          closed: (s) => void pump.detached(s),
        }),
      ];
    },
    async stop() {
      // Hear nothing new, then let what is in flight settle: doorbell passes, the heartbeat
      // (after the streams were marked closed), hook deliveries, the pump's in-flight
      // messages (they return to pending first), self-test rings, the buffered ring records.
      for (const off of unsubscribe.splice(0)) off();
      await promoter.settle();
      doorbell.stop();
      await doorbell.settle();
      await heartbeat.stop();
      await delivery.stop();
      await pump.settle();
      await replies.settle();
      await ringer.stop();
      await writer.flush();
    },
  };
}
