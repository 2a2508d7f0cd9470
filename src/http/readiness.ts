// Why this instance is (not) ready, for /readyz: set by the start sequence while it waits
// for the database and by each /readyz check afterwards. `since` is when the current
// state began, so an operator sees how long an outage has lasted. /readyz is open to anyone,
// so a database problem shows only "database unavailable": the error text (host, port, role)
// goes to the log, never into the body.

export type NotReadyReason =
  /** Starting: the database has not been tried yet. */
  | 'starting'
  /** Connecting fails: refused, timed out, server shutting down or starting up. */
  | 'database_unreachable'
  /** The server answers but refuses us: authentication, missing database. */
  | 'database_rejected'
  /** Connected; migrations are being applied (or some are missing). */
  | 'migrations_pending'
  /** The database holds migrations this build does not know (a newer version ran on it). */
  | 'schema_unknown'
  /** Shutting down. */
  | 'stopping';

export interface ReadinessBody {
  status: 'ready' | 'unavailable';
  ready: boolean;
  reason?: NotReadyReason;
  detail?: string;
  since: string;
}

/** The only detail /readyz gives when the database cannot be reached or refuses us. */
export const DATABASE_UNAVAILABLE = 'database unavailable';

function isDatabaseReason(reason: NotReadyReason): boolean {
  return reason === 'database_unreachable' || reason === 'database_rejected';
}

export class Readiness {
  private ready = false;
  private reason: NotReadyReason = 'starting';
  private detail: string | null = null;
  private since = new Date();

  constructor(private readonly now: () => Date = () => new Date()) {}

  get isReady(): boolean {
    return this.ready;
  }

  get current(): { ready: boolean; reason: NotReadyReason | null; detail: string | null } {
    return { ready: this.ready, reason: this.ready ? null : this.reason, detail: this.ready ? null : this.detail };
  }

  markReady(): void {
    if (!this.ready) this.since = this.now();
    this.ready = true;
    this.detail = null;
  }

  /**
   * Records why not; `since` moves only when the state or the reason changes. A database
   * problem's own detail is not kept (callers log it): the body says only
   * "database unavailable".
   */
  markNotReady(reason: NotReadyReason, detail: string | null = null): void {
    if (this.ready || this.reason !== reason) this.since = this.now();
    this.ready = false;
    this.reason = reason;
    this.detail = isDatabaseReason(reason) ? DATABASE_UNAVAILABLE : detail;
  }

  body(): ReadinessBody {
    if (this.ready) return { status: 'ready', ready: true, since: this.since.toISOString() };
    return {
      status: 'unavailable',
      ready: false,
      reason: this.reason,
      ...(this.detail ? { detail: this.detail } : {}),
      since: this.since.toISOString(),
    };
  }
}
