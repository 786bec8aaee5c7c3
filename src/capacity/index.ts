/**
 * The learned rate: how fast the fleet sends, learned from what the service accepts.
 * Words, each used in one sense (docs/capacity.md says why each rule is what it is):
 * - rate: requests per second for every process together; the budget spaces send times evenly at it.
 * - budget: one hash in Redis per deployment (src/ledger/lua/send-budget.lua), mechanism only: the
 *   schedule of send times, the hold, the state, and the fleet's answers counted.
 * - state: what the rate is a function of (rate.ts RateState), shared through the budget and written
 *   only on events, by compare-and-set; every process computes the same rate from it.
 * - accepted rate: what the service took per second lately (any answer but a refusal), fleet-wide.
 * - slow start: nothing learned yet, the rate is twice the accepted rate (it doubles per round trip);
 *   past the threshold (the plateau last measured), a quarter more.
 * - plateau: the accepted rate at the last cut (the least its count allows), the capacity as shown.
 * - cut: refusals past chance take the rate to β of the plateau, once per round trip.
 * - curve: after a cut, CUBIC's: back up to the plateau within K, then past it ever faster (a probe).
 * - hold: every process waits for the least Retry-After asked, when the service refuses everything at a
 *   rate already cut; else a Retry-After is the refused request's own wait (the worker's retry). After a
 *   hold the fleet goes on at the long-run rate the service allowed over the cycle.
 * - cycle: from the pass's start, or the end of one hold, to the end of the next.
 * - concurrency: requests in flight, the rate × the slowest answer lately (Little's law), under
 *   SUBMIT_CONCURRENCY, the operator's ceiling.
 */
export { SendPacer, type RateEvent, type SendTicket } from "./pacer.js";
export { tellPacer, withPacing } from "./paced-submitter.js";
export { BETA, MIN_RATE, RECOVER_MS, atLeast, parseRateState, phaseAt, rateAt, startState } from "./rate.js";
export type { RatePhase, RateSettings } from "./rate.js";
