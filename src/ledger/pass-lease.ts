import { hostname } from "node:os";
import { deadOnThisHost } from "./batch-lease.js";

/**
 * A `run` pass's lease (as a batch's, src/ledger/batch-lease.ts): its process says it is alive every
 * PASS_RENEW_MS; a pass whose process has not said so for PASS_LEASE_MS, or whose process on this host is
 * gone, ended without a word (killed, power lost). The next process that reads the passes records that
 * end: exit 1 (could not finish, README.md "Exit codes"), at its last sign of life. A scan of `start`
 * needs none: whichever `start` process sees its batches finished ends it.
 */

/** Three renewals missed, as a batch's lease: a pause of the event loop or of Redis is not a death. */
export const PASS_LEASE_MS = 15_000;
/** A third of the lease, so that two renewals may be lost. */
export const PASS_RENEW_MS = 5_000;

/** This process, as a lease names its holder. */
export function leaseOwner(): string {
  return `${hostname()}:${process.pid}`;
}

/**
 * When the pass's process was last seen alive, if its lease has lapsed at `now` (Redis's clock); else
 * undefined, and for a pass without a lease (written before passes had them). Pure but for the look at
 * this host's processes.
 */
export function lapsedAt(lease: string | null, now: number): number | undefined {
  const match = lease === null ? null : /^(\d+) (.+)$/.exec(lease);
  if (match === null) return undefined;
  const seen = Number(match[1]);
  return now - seen > PASS_LEASE_MS || deadOnThisHost(match[2] ?? "") ? seen : undefined;
}
