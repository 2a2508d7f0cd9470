// Group commit for one kind of statement (docs/design/coalescing.md): calls that arrive
// while the lane's statement is in flight wait, and the next statement serves them
// together. Never a timer: an idle lane runs a call at once, alone, with the statement
// as it was; a batch forms only from calls that queued behind a statement already
// running, so low load adds no latency and high load pays one round trip, one statement
// and one commit for many calls. Each caller's promise settles only when the statement
// carrying its input has answered (an autocommit statement: its row has committed).
//
// It knows no SQL: `one` and `many` are the store's statements. A batch that fails is
// told apart by `alone`: when the failure may be one input's (a constraint, bad data),
// each input runs again alone so only its own caller fails; otherwise (the connection
// died, the server is going away) every caller of the batch gets that error, and nothing
// runs again — an autocommit statement that failed committed nothing.

export interface GroupCommitOptions<I, O> {
  /** One call alone: the statement as it was before coalescing. */
  one: (input: I) => Promise<O>;
  /** Several calls at once: one answer per input, in input order. */
  many: (inputs: I[]) => Promise<O[]>;
  /** The most inputs one statement carries (SWITCHBOARD_COALESCE_MAX_BATCH). */
  maxBatch: number;
  /** Whether a failed batch's inputs should each run again alone (see the header). */
  alone: (error: unknown) => boolean;
  /** Told of each statement run, with how many calls it served (metrics). */
  observe?: (size: number) => void;
}

interface Waiting<I, O> {
  input: I;
  resolve: (out: O) => void;
  reject: (error: unknown) => void;
}

/** One lane: at most one statement in flight, and the calls queued behind it. */
export class GroupCommit<I, O> {
  private running = false;
  private queue: Waiting<I, O>[] = [];

  /** `idle`: told each time the lane has nothing in flight and nothing queued. */
  constructor(
    private readonly options: GroupCommitOptions<I, O>,
    private readonly idle?: () => void,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (!this.running) this.next();
    });
  }

  private next(): void {
    const batch = this.queue.splice(0, Math.max(1, this.options.maxBatch));
    if (batch.length === 0) {
      this.idle?.();
      return;
    }
    this.running = true;
    void this.run(batch).finally(() => {
      this.running = false;
      this.next();
    });
  }

  private async run(batch: Waiting<I, O>[]): Promise<void> {
    this.options.observe?.(batch.length);
    if (batch.length === 1) {
      const [w] = batch as [Waiting<I, O>];
      await this.options.one(w.input).then(w.resolve, w.reject);
      return;
    }
    let outs: O[];
    try {
      outs = await this.options.many(batch.map((w) => w.input));
    } catch (error) {
      if (!this.options.alone(error)) {
        for (const w of batch) w.reject(error);
        return;
      }
      await Promise.all(batch.map((w) => this.options.one(w.input).then(w.resolve, w.reject)));
      return;
    }
    batch.forEach((w, i) => w.resolve(outs[i] as O));
  }
}

/**
 * Lanes by key: calls coalesce only with calls of the same key (a claim's endpoint and
 * queues). A lane is dropped once idle, so the map holds only keys with calls in flight.
 */
export class GroupCommitLanes<I, O> {
  private lanes = new Map<string, GroupCommit<I, O>>();

  constructor(private readonly options: GroupCommitOptions<I, O>) {}

  submit(key: string, input: I): Promise<O> {
    let lane = this.lanes.get(key);
    if (!lane) {
      const created = new GroupCommit(this.options, () => {
        if (this.lanes.get(key) === created) this.lanes.delete(key);
      });
      this.lanes.set(key, created);
      lane = created;
    }
    return lane.submit(input);
  }

  /** How many lanes have calls in flight or queued. */
  get size(): number {
    return this.lanes.size;
  }
}

/**
 * Whether a failed batch may have failed for one input's sake, so each should run again
 * alone: a data exception (22), an integrity constraint (23), an error raised by a
 * function (P0), a deadlock or serialization failure between two batches (40). Anything
 * else — the connection closed, the server shutting down, a timeout — fails every caller.
 */
export function retryAlone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|23|P0|40)/.test(code);
}
