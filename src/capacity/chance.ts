import { LATELY_MS } from "../ledger/send-budget.js";

/** Refusals told from chance: the binomial tails the learned rate's judgments (rate.ts) rest on. */

/** The fleet's answers per second lately (rate.ts Fleet). */
type Lately = Readonly<Record<"acceptedPerSec" | "refusedPerSec", number>>;

/** The share of the service's accepted rate a cut goes to (CUBIC's β, RFC 9438 §4.6). The plateau is a
 * measurement (what the service accepted), not a guess, so the cut only has to drain the service's queue;
 * and refusals below 1 − β of the answers cost less than a cut would: they are chance, not capacity. */
export const BETA = 0.9;

/**
 * Whether the refusals lately (all, or `refusedPerSec` of them) are more than chance: a service refusing
 * a share `p` at random (1 − β by default: below what a cut costs) would give that many of the answers
 * lately less often than 1 − β of the time. Two refusals out of two speak; one out of one does not; 5 %
 * refused at random never does.
 */
export function pastChance(fleet: Lately, refusedPerSec = fleet.refusedPerSec, p = 1 - BETA): boolean {
  const refused = Math.round((refusedPerSec * LATELY_MS) / 1000);
  const n = Math.max(refused, Math.round(((fleet.refusedPerSec + fleet.acceptedPerSec) * LATELY_MS) / 1000));
  return beyond(refused, n, p);
}

/** Whether `refused` of `n` is more than a share `p` at random gives but 1 − β of the time. */
export function beyond(refused: number, n: number, p: number): boolean {
  return refused > 0 && p < 1 && 1 - fewer(refused, n, p) < 1 - BETA;
}

/** Whether `refused` of `n` is fewer than a share `p` at random gives but 1 − β of the time. */
export function short(refused: number, n: number, p: number): boolean {
  return refused < n && fewer(refused + 1, n, p) < 1 - BETA;
}

/** The chance of fewer than `refused` of `n` at a share `p` (the binomial tail, summed in logs so that
 * thousands of answers stay finite). */
function fewer(refused: number, n: number, p: number): number {
  if (p <= 0) return 1;
  let log = n * Math.log(1 - p);
  let below = 0;
  for (let k = 0; k < refused; k++) {
    below += Math.exp(log);
    log += Math.log((n - k) / (k + 1)) + Math.log(p / (1 - p));
  }
  return below;
}
