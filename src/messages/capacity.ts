// The install-wide message queue capacity (docs/design/message-queue.md, "Capacity"):
// valid environment value > persisted install setting > default 10. The live value is
// held here and read once per admission; an admin's save is persisted first and applied
// only after the write committed, and every other instance applies it when it hears
// `settings_changed`. Writes carry a version, so overlapping saves end with the last one
// written everywhere.

import type { Queryable } from '../db/pool.js';
import { AppError } from '../domain/errors.js';
import { capacityInput, parseStoredCapacity, resolveCapacity, type Capacity } from '../domain/messages.js';
import { parseInput } from '../domain/todo.js';
import { readSetting, writeSetting, type StoredSetting } from '../store/settings.js';
import type { Bus } from '../domain/events.js';

export const CAPACITY_KEY = 'message_queue';

export interface CapacityDeps {
  db: Queryable;
  /** The valid environment value (non-positive already normalised to 0), or null. */
  envCapacity: number | null;
  log?: { warn(obj: object, msg: string): void };
}

export class CapacitySetting {
  private configured: number | null = null;
  private version = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly deps: CapacityDeps) {}

  /** Reads the persisted value once; admissions wait for it, so none runs on a guess. */
  load(): Promise<void> {
    this.loading ??= this.refresh();
    return this.loading;
  }

  /** The live capacity (for status and reads); a notice from another instance may still be on its way. */
  async snapshot(): Promise<Capacity> {
    await this.load();
    return this.current();
  }

  /**
   * The capacity one admission uses, read in its own transaction: the persisted setting is
   * applied first if it is newer than the live one, so the very next admission after a save
   * on any instance obeys it, even before that instance hears the notice.
   */
  async forAdmission(db: Queryable): Promise<Capacity> {
    await this.load();
    const stored = await readSetting(db, CAPACITY_KEY);
    if (stored) this.apply(stored);
    return this.current();
  }

  current(): Capacity {
    return resolveCapacity(this.deps.envCapacity, this.configured);
  }

  /** An admin's save: refused when the environment locks it; persisted, then applied. */
  async save(input: unknown): Promise<Capacity> {
    const data = parseInput(capacityInput, input);
    await this.load();
    if (data.max_per_session === undefined) return this.current();
    if (this.deps.envCapacity !== null) {
      throw new AppError(
        'conflict',
        'max_per_session: set by the server environment (SWITCHBOARD_QUEUE_MAX_PER_SESSION), which locks it; change it there',
        { field: 'max_per_session', locked: true },
      );
    }
    const written = await writeSetting(this.deps.db, CAPACITY_KEY, { max_per_session: data.max_per_session });
    this.apply(written);
    return this.current();
  }

  /** Re-reads the persisted value (on a `settings_changed` notice, a reconnect, or at start). */
  async refresh(): Promise<void> {
    const stored = await readSetting(this.deps.db, CAPACITY_KEY);
    if (stored) this.apply(stored);
  }

  listen(bus: Bus): () => void {
    const reread = () =>
      void this.refresh().catch((err: unknown) =>
        this.deps.log?.warn({ err }, 'could not re-read the message queue capacity; keeping the current one'),
      );
    const offs = [
      bus.subscribe('settings_changed', (e) => {
        if (e.key === CAPACITY_KEY) reread();
      }),
      bus.onReconnect(reread),
    ];
    return () => offs.forEach((off) => off());
  }

  private apply(stored: StoredSetting): void {
    if (stored.version <= this.version) return;
    this.version = stored.version;
    const value = parseStoredCapacity(stored.value);
    if (value === null) {
      this.deps.log?.warn(
        { setting: CAPACITY_KEY, value: stored.value },
        'the saved message queue capacity is not a whole number ≥ 0; using the default until an admin saves one',
      );
    }
    this.configured = value;
  }
}
