import { z } from "zod";
import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const script = new LuaScript("send-budget");

/** send-budget.lua's QUARTER_MS (a test holds them alike): rates lately quick enough to follow slow start. */
export const LATELY_MS = 250;

const count = z.coerce.number().nonnegative();
const TIMES = ["booked", "waitMs", "now", "hold", "seen", "capped", "refusedAt"] as const;
const COUNTS = ["accepted", "refused", "sentPerSec", "acceptedPerSec", "refusedPerSec"] as const;
type Counted = Record<(typeof TIMES)[number] | (typeof COUNTS)[number], typeof count>;
const counts = Object.fromEntries([...TIMES, ...COUNTS].map((name) => [name, count])) as Counted;
const fields = z.object({ v: z.string(), state: z.string(), ...counts });

/** The script's name, value pairs, checked. */
const named = (pairs: (string | number)[]): Record<string, unknown> =>
  Object.fromEntries(pairs.flatMap((x, i) => (i % 2 === 1 ? [] : [[String(x), pairs[i + 1] ?? ""]])));
const replySchema = z
  .array(z.union([z.string(), z.number()]))
  .transform(named)
  .pipe(fields);

/** What the budget says after a call: send-budget.lua's reply, by name (times are the server's ms). */
export type BudgetReply = z.output<typeof fields>;

/** What one call asks of the budget: send-budget.lua's ARGV, by name, every part optional. */
type CallNumber = "wanted" | "intervalMs" | "aheadMs" | "owed" | "spanMs" | "accepted" | "refused" | "holdMs";
export interface BudgetCall extends Partial<Readonly<Record<CallNumber, number>>> {
  readonly write?: { readonly from: string; readonly state: string; readonly version: string };
  readonly capped?: boolean;
}

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
    const ms = (value = 0) => Math.max(0, Math.round(value));
    const { wanted = 0, intervalMs = 1, aheadMs = 0, owed = 0, accepted = 0, refused = 0 } = call;
    const { from = "", state = "", version = "" } = call.write ?? {};
    const booking = [wanted, intervalMs.toFixed(3), aheadMs, owed, ms(call.spanMs)];
    const told = [accepted, refused, ms(call.holdMs), from, state, version, call.capped ? 1 : 0];
    return replySchema.parse(await script.run(this.redis, [this.#name], [...booking, ...told]));
  }

  /** The budget as it stands, booking and counting nothing (status, /metrics). */
  read(): Promise<BudgetReply> {
    return this.call({});
  }
}
