import { z } from "zod";
import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const script = new LuaScript("send-budget");

const replySchema = z
  .tuple([
    z.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.string(),
    z.string(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
  ])
  .transform(([booked, waitMs, sentPerSec, version, state, heldUntil, now, lastSentAt, refused]) => ({
    refused,
    booked,
    waitMs,
    sentPerSec,
    version,
    state,
    heldUntil,
    now,
    lastSentAt,
  }));

/**
 * What the budget says after a call: `booked` send times (the first in `waitMs`, then one every
 * interval), or none and when to ask again (`waitMs`); the shared state as stored (`state` is the learned
 * rate's JSON, '' when none yet, under `version`); the hold from Retry-After; what the fleet sent per
 * second lately; and the server's clock (`now`) and when a request was last booked before this call.
 */
export type BudgetReply = z.output<typeof replySchema>;

/**
 * The fleet's send budget in Redis (send-budget.lua): one GCRA schedule for every process of a
 * deployment, so together they never send faster than the learned rate and never in bursts, a hold every
 * process honours, and the learned rate's state, written only when it still has the version it was
 * computed from. The state is opaque here; src/submit/send-rate.ts gives it meaning.
 */
export class SendBudget {
  readonly #name: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.#name = new LedgerNames(prefix).sendBudget;
  }

  /** Books up to `wanted` send times `intervalMs` apart, none further than `aheadMs` from now. */
  async take(wanted: number, intervalMs: number, aheadMs: number): Promise<BudgetReply> {
    const reply = await script.run(
      this.redis,
      [this.#name],
      ["take", wanted, intervalMs.toFixed(3), aheadMs],
    );
    return replySchema.parse(reply);
  }

  /**
   * Writes `state` (as version `version`) if the stored one is still `from`, and holds every request
   * back for `holdMs` (0: no hold), and counts `refused` more requests answered 429; `from`
   * undefined writes no state.
   */
  async event(
    change: { readonly from: string; readonly state: string; readonly version: string } | undefined,
    holdMs: number,
    refused = 0,
  ): Promise<BudgetReply> {
    const reply = await script.run(
      this.redis,
      [this.#name],
      [
        "event",
        change?.from ?? "",
        change?.state ?? "",
        change?.version ?? "",
        Math.max(0, Math.round(holdMs)),
        refused,
      ],
    );
    return replySchema.parse(reply);
  }

  /** The budget as it stands, without booking anything (status, /metrics). */
  read(): Promise<BudgetReply> {
    return this.event(undefined, 0);
  }
}
