import { z } from "zod";
import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const script = new LuaScript("send-budget");

/** send-budget.lua's QUARTER_MS: its rates lately count the answers of about this long (a test holds them alike). */
export const LATELY_MS = 250;

const count = z.coerce.number().nonnegative();
const NUMBERS = ["booked", "waitMs", "now", "hold", "seen", "capped", "accepted", "refused"] as const;
const RATES = ["sentPerSec", "acceptedPerSec", "refusedPerSec"] as const;
const counts = Object.fromEntries([...NUMBERS, ...RATES].map((name) => [name, count]));
const fields = z.object({
  v: z.string(),
  state: z.string(),
  ...(counts as Record<(typeof NUMBERS)[number] | (typeof RATES)[number], typeof count>),
});

/** The script's name, value pairs, checked. */
const replySchema = z
  .array(z.union([z.string(), z.number()]))
  .transform((pairs): Record<string, unknown> => {
    const named: Record<string, unknown> = {};
    for (let i = 0; i + 1 < pairs.length; i += 2) named[String(pairs[i])] = pairs[i + 1] ?? "";
    return named;
  })
  .pipe(fields);

/**
 * What the budget says after a call (times are the server's ms): `booked` send times (the first in
 * `waitMs`, then one per interval), or none and `waitMs` until one can be; the hold (nothing goes before
 * it); the learned rate's state as stored (`state`, '' when none, under version `v`); when a request was
 * last booked before this call (`seen`); the fleet's rates lately (sent, accepted, refused) and its
 * counts in all; when a process last found SUBMIT_CONCURRENCY too low (`capped`, 0: never).
 */
export type BudgetReply = z.output<typeof fields>;

/**
 * What one call asks of the budget, every part optional: `wanted` send times `intervalMs` apart, none
 * further than `aheadMs` from now; `owed` requests sent already while the schedule had room, the first
 * `spanMs` ago, charged first; the answers heard since the last call; a hold of every process for
 * `holdMs` from now (Retry-After); `write` the state if the stored version is still `from`; `capped`: this
 * process found SUBMIT_CONCURRENCY below what the rate needs.
 */
export type BudgetCall = Partial<
  Readonly<
    Record<
      "wanted" | "intervalMs" | "aheadMs" | "owed" | "spanMs" | "accepted" | "refused" | "holdMs",
      number
    >
  >
> & {
  readonly write?: { readonly from: string; readonly state: string; readonly version: string };
  readonly capped?: boolean;
};

/** The budget as the pacer uses it (src/capacity/pacer.ts); the fleet model has one in memory. */
export interface BudgetPort {
  call(call: BudgetCall): Promise<BudgetReply>;
}

/**
 * The fleet's send budget in Redis (send-budget.lua): one GCRA schedule for every process of a
 * deployment, so together they never send faster than the learned rate nor in bursts; a hold every
 * process honours; the learned rate's state, written by compare-and-set; the fleet's answers counted.
 * The script is mechanism only: what the counts mean is src/capacity/rate.ts's.
 */
export class SendBudget implements BudgetPort {
  readonly #name: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.#name = new LedgerNames(prefix).sendBudget;
  }

  async call(call: BudgetCall): Promise<BudgetReply> {
    const { wanted = 0, intervalMs = 1, aheadMs = 0, owed = 0, accepted = 0, refused = 0, write } = call;
    const [span, hold] = [call.spanMs ?? 0, call.holdMs ?? 0].map((ms) => Math.max(0, Math.round(ms)));
    const args = [wanted, intervalMs.toFixed(3), aheadMs, owed, span ?? 0, accepted, refused, hold ?? 0];
    const written = [
      write?.from ?? "",
      write?.state ?? "",
      write?.version ?? "",
      call.capped === true ? 1 : 0,
    ];
    return replySchema.parse(await script.run(this.redis, [this.#name], [...args, ...written]));
  }

  /** The budget as it stands, booking and counting nothing (status, /metrics). */
  read(): Promise<BudgetReply> {
    return this.call({});
  }
}
