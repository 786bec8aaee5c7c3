import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const addScript = new LuaScript("outbox-add");

/** At most this many report rows per `rows` event. */
export const ROWS_PER_EVENT = 1000;

/** One report row as a `rows` event carries it: line, key (null: rejected), decision, external_id, error, conflict_with. */
export type OutboxRow = readonly [
  line: number,
  key: string | null,
  decision: string,
  externalId: string | null,
  error: string | null,
  conflictWith: string | null,
];

/**
 * The outbox switch and the events written outside the scripts. While `outboxOn` exists every ledger
 * script writes its events to the `outbox` stream in the step that records the change; without it
 * nothing is written there at all.
 */
export class Outbox {
  readonly names: LedgerNames;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.names = new LedgerNames(prefix);
  }

  /** Turns the outbox on for the deployment (every process sharing this prefix writes events from now on). */
  async enable(): Promise<void> {
    await this.redis.set(this.names.outboxOn, "1");
  }

  async enabled(): Promise<boolean> {
    return (await this.redis.exists(this.names.outboxOn)) === 1;
  }

  /**
   * A batch report's rows as `rows` events (ROWS_PER_EVENT each, at least one), all of one report
   * generation: `report` empty for the report's first call, then what it resolved to. Resolves to the
   * generation, or empty when the outbox is off (nothing added).
   */
  async addRows(batchId: string, rows: readonly OutboxRow[], report = ""): Promise<string> {
    const events: string[] = [];
    for (let at = 0; at < rows.length || at === 0; at += ROWS_PER_EVENT)
      events.push(JSON.stringify({ t: "rows", batch: batchId, rows: rows.slice(at, at + ROWS_PER_EVENT) }));
    const generation = await addScript.run(
      this.redis,
      [this.names.outboxOn, this.names.outbox],
      [report, ...events],
    );
    return typeof generation === "string" ? generation : "";
  }
}
