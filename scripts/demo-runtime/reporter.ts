/**
 * Event reporting of the demo runtime: builds events with deterministic ids
 * (`<task>:a<attempt>:<seq, 4 digits>`, so a retried batch deduplicates on the server), strictly increasing
 * `occurred_at` times, and posts them through {@link CustodyClient.postEvents} when flushed.
 * Events can also be *held* (the runtime's receipt buffer): they keep their id and time, and are posted only
 * if released — a lost sandbox loses them.
 */
import type { EventInput, Plane } from "@/lib/contract/api";
import type { CustodyClient } from "@/lib/sdk/runtime-client";

/** A clock whose ISO times strictly increase within the process (1 ms apart at least). */
export class MonotonicClock {
  private last = 0;

  /** The current time as ISO 8601 (UTC), later than every earlier answer. */
  now(): string {
    let t = Date.now();
    if (t <= this.last) t = this.last + 1;
    this.last = t;
    return new Date(t).toISOString();
  }
}

export type EmitOptions = {
  environmentId?: string;
  actor?: string;
  /** Keep the event in the hold buffer instead of the send queue. */
  hold?: boolean;
};

/** Events of one attempt of one task. */
export class EventReporter {
  private seq = 0;
  private queue: EventInput[] = [];
  private held: EventInput[] = [];

  /**
   * @param client API client used by {@link flush}.
   * @param log one-line logger for rejected events.
   */
  constructor(
    private readonly client: CustodyClient,
    readonly taskId: string,
    readonly attempt: number,
    private readonly clock: MonotonicClock,
    private readonly log: (line: string) => void,
  ) {}

  /** Builds the next event and queues (or holds) it. @returns the event. */
  emit(plane: Plane, type: string, attrs: Record<string, unknown>, opts: EmitOptions = {}): EventInput {
    this.seq += 1;
    const event: EventInput = {
      id: `${this.taskId}:a${this.attempt}:${String(this.seq).padStart(4, "0")}`,
      task_id: this.taskId,
      plane,
      type,
      occurred_at: this.clock.now(),
      attempt: this.attempt,
      ...(opts.environmentId ? { environment_id: opts.environmentId } : {}),
      ...(opts.actor ? { actor: opts.actor } : {}),
      attrs,
    };
    (opts.hold ? this.held : this.queue).push(event);
    return event;
  }

  /** Number of events in the hold buffer. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Moves every held event to the send queue (they keep their ids and times). */
  releaseHeld(): void {
    this.queue.push(...this.held);
    this.held = [];
  }

  /** Discards the hold buffer. @returns the discarded events. */
  dropHeld(): EventInput[] {
    const dropped = this.held;
    this.held = [];
    return dropped;
  }

  /**
   * Posts the queued events in one call (the client splits above 1000).
   * @throws CustodyApiError when the server refuses the batch or stays unreachable (the queue is kept).
   */
  async flush(): Promise<void> {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    let results;
    try {
      results = await this.client.postEvents(batch);
    } catch (err) {
      this.queue = [...batch, ...this.queue];
      throw err;
    }
    for (const r of results) {
      if (r.status === "rejected")
        this.log(`event ${r.id} rejected: ${r.error?.code ?? "?"} ${r.error?.message ?? ""}`);
    }
  }
}
