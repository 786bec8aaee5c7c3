import { timingSafeEqual } from "node:crypto";
import { EventEmitter } from "node:events";
import { CapacityModel, type Capacity } from "./capacity.js";
import { DeveloperKeys } from "./developer-keys.js";
import { EffectLedger } from "./effect-ledger.js";
import { IdempotencyStore } from "./idempotency-store.js";
import { applyFaultsPatch, faultsOf, validateApiKey, type Faults, type ResolvedOptions } from "./options.js";
import { PendingAnswers } from "./pending-answers.js";
import { RequestLog, type Attempt } from "./request-log.js";
import { RequestCounters, type SimulatorStats } from "./stats.js";

/** Events for tests that need to act at a precise moment instead of sleeping. */
export interface SimulatorEvents {
  /** A request was admitted as new: its key is now in flight until its answer (after latency). */
  "in-flight": [key: string];
  /** An attempt was decided and logged (emitted before the answer is written). */
  attempt: [attempt: Attempt];
}

const LIST_LIMIT = 1000;

/** Everything the handlers share: configuration that can change at run time, and what was recorded. */
export class SimulatorState {
  readonly store = new IdempotencyStore();
  readonly ledger = new EffectLedger();
  readonly counters = new RequestCounters();
  readonly developerKeys = new DeveloperKeys();
  readonly pending = new PendingAnswers();
  readonly events = new EventEmitter<SimulatorEvents>();
  readonly log: RequestLog;
  readonly capacity: CapacityModel;
  faults: Faults;
  #apiKey: Buffer;
  /** When the night's first invoice request passed the rules; its capacity changes are timed from then. */
  #nightStartedAt: number | undefined;
  #changes: NodeJS.Timeout[] = [];

  constructor(readonly options: ResolvedOptions) {
    this.log = new RequestLog(options.requestLogCapacity);
    this.faults = faultsOf(options);
    this.#apiKey = Buffer.from(options.apiKey);
    this.capacity = new CapacityModel(options.capacity);
  }

  setCapacity(patch: unknown): Capacity | null {
    return this.capacity.set(patch);
  }

  /** Ms since the night's first request, starting the night (and its capacity changes) on the first call. */
  sinceNightStart(now: number): number {
    if (this.#nightStartedAt === undefined) {
      this.#nightStartedAt = now;
      this.#changes = this.options.capacityChanges.map((change) =>
        setTimeout(() => this.capacity.set(change.patch), change.atMs).unref(),
      );
    }
    return now - this.#nightStartedAt;
  }

  /** The capacity changes not yet applied are dropped; the next request starts a night again. */
  endNight(): void {
    this.#changes.forEach(clearTimeout);
    this.#changes = [];
    this.#nightStartedAt = undefined;
  }

  setFaults(patch: unknown): Faults {
    this.faults = applyFaultsPatch(this.faults, patch);
    return this.faults;
  }

  setApiKey(key: string): void {
    this.#apiKey = Buffer.from(validateApiKey(key));
  }

  /** Constant-time, so the simulator does not teach clients a habit the real service would punish. */
  isAcceptedKey = (token: string): boolean => {
    const presented = Buffer.from(token);
    return presented.length === this.#apiKey.length && timingSafeEqual(presented, this.#apiKey);
  };

  recordAttempt(attempt: Attempt): void {
    this.log.add(attempt);
    if (this.events.listenerCount("attempt") > 0) this.events.emit("attempt", attempt);
  }

  stats(): SimulatorStats {
    const c = this.counters;
    return {
      requests: { total: c.total, byStatus: c.byStatus() },
      effects: this.ledger.snapshot(LIST_LIMIT),
      replays: c.replays,
      inFlightConflicts: c.inFlightConflicts,
      keyReuseRejections: c.keyReuseRejections,
      inFlight: this.store.inFlight,
      faults: { ...c.faults },
      developerKeysIssued: this.developerKeys.size,
      requestLog: { capacity: this.log.capacity, dropped: this.log.dropped },
      capacity: this.capacity.stats(),
    };
  }

  /** Back to the state right after start: nothing recorded, the start faults and API key. */
  reset(): void {
    this.endNight();
    this.pending.cancelAll();
    this.store.clear();
    this.ledger.clear();
    this.counters.clear();
    this.developerKeys.clear();
    this.log.clear();
    this.capacity.clear(this.options.capacity);
    this.faults = faultsOf(this.options);
    this.#apiKey = Buffer.from(this.options.apiKey);
  }
}
