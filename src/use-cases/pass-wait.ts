import { access } from "node:fs/promises";
import { describeTarget, redisTarget } from "../config/redis-target.js";
import type { DropPassDeps } from "./drop-pass.js";
import { BatchLostError } from "../ingest/errors/batch-lost-error.js";
import { BatchFileGoneError } from "../ingest/errors/batch-file-gone-error.js";
import { IngestInterruptedError } from "../ingest/errors/ingest-interrupted-error.js";
import { PastResultsUnavailableError } from "../ingest/errors/past-results-unavailable-error.js";
import { FileSystemUnansweredError } from "../errors/file-system-unanswered-error.js";
import { claimedHere, isFinished, PassUpkeep } from "./pass-upkeep.js";
import { pauseWithin } from "../lifecycle/pass-signal.js";
import { ReportWriteError } from "../results/errors/report-write-error.js";
import { shownName } from "../names/shown-text.js";
import { isRedisUnavailable } from "../queue/connection.js";
import { readApiKeyRefusal } from "../queue/api-key-refusal.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import { finalizeCompleteBatches } from "../results/finalize.js";
import { takeChangedFilesAgain, type ChangedClaim } from "./take-again.js";
import type {
  GrowingFile,
  NightlyOutcome,
  NightlyPassDeps,
  NightlyPassOptions,
  PassProgress,
} from "./nightly-terms.js";

/** How often a pass reads its batches while it waits: a quarter second, as a drop folder is watched. */
export const POLL_MS = 250;

/** What a pass's wait is told besides the pass's options: its one signal, and the pacer's word. */
export type WaitOptions = NightlyPassOptions & {
  /** The pass's one signal (passSignal): its pauses end with it. */
  readonly until: AbortSignal;
  /** Whether the service has refused the fleet's every request for capacity long enough to say so. */
  readonly refusing: () => Promise<boolean>;
};

/**
 * Ingest stopped between two chunks: for a signal the pass failed, the file left claimed for the next
 * pass; for a refused API key or the deadline (a wait for room in the window ends with them) it says so
 * as it would while waiting for its invoices, the deadline's after reporting the batches done (the drop
 * folder's, whatever a source's file that came late does).
 */
export async function ingestStopped(
  deps: NightlyPassDeps,
  options: WaitOptions,
  error: IngestInterruptedError,
): Promise<NightlyOutcome> {
  if (options.signal.aborted) return { kind: "failed", error };
  const refusal = await readApiKeyRefusal(deps.redis, deps.config.queuePrefix);
  if (refusal !== undefined)
    return { kind: "api-key-refused", httpStatus: refusal.httpStatus, detail: refusal.detail };
  if (options.deadline === undefined || Date.now() < options.deadline) return { kind: "failed", error };
  await finalizeCompleteBatches(deps);
  return {
    kind: "stopped",
    why: "deadline",
    pending: (await unfinishedBatches(deps)).reduce((n, m) => n + Math.max(0, m.pending ?? 0), 0),
    redisDown: false,
    refusingForCapacity: await options.refusing(),
  };
}

/**
 * Waits until every batch of `targets` is finished (reported, rejected or changed) and every file of the
 * pass that grew since its claim is taken again, repairing on the way what would keep an invoice waiting
 * (PassUpkeep); Redis going away is waited out, within the deadline.
 */
export async function waitForBatches(
  deps: NightlyPassDeps & DropPassDeps,
  targets: Set<string>,
  options: WaitOptions,
): Promise<NightlyOutcome> {
  const { config, logger } = deps;
  const upkeep = new PassUpkeep(deps);
  let metas: BatchMeta[] = [];
  let growing: GrowingFile[] = [];
  let outageSince: number | undefined;
  for (;;) {
    try {
      await finalizeCompleteBatches(deps);
      metas = await upkeep.round(targets);
      options.onBatches?.(metas);
      // After the pass has noted them: a batch whose file is gone is named with its tally.
      await upkeep.throwIfFilesGone(metas);
      growing = [];
      if (metas.every(isFinished)) {
        // Never done while a file of the pass has rows nobody sent: one that grew since its claim (even
        // after its report and archive) is taken again, whole, in this pass once it has settled.
        await options.beforeArchiveCheck?.();
        const again = await takeChangedFilesAgain(deps, config.settleMs, metas);
        for (const passed of again.passed) targets.add(passed.file.batchId);
        growing = again.waiting.map(growingFile);
        // Read again only when the look just made may have marked a batch changed (a file it found).
        if (again.passed.length === 0 && !growing.some((g) => g.readiness !== "unmarked"))
          return {
            kind: "finished",
            batches: again.waiting.length === 0 ? metas : await upkeep.round(targets),
            growing,
          };
      }
      const refusal = await readApiKeyRefusal(deps.redis, config.queuePrefix);
      if (refusal !== undefined)
        return { kind: "api-key-refused", httpStatus: refusal.httpStatus, detail: refusal.detail };
      options.onProgress?.(await progressOf(deps, metas));
      if (outageSince !== undefined) {
        logger.info({ downMs: Date.now() - outageSince }, "Redis is back; waiting for the invoices goes on");
        outageSince = undefined;
      }
    } catch (error) {
      if (error instanceof IngestInterruptedError) return await ingestStopped(deps, options, error);
      if (
        error instanceof BatchLostError ||
        error instanceof BatchFileGoneError ||
        error instanceof PastResultsUnavailableError ||
        error instanceof FileSystemUnansweredError
      )
        return { kind: "failed", error };
      if (error instanceof ReportWriteError) {
        // The drop folder made read-only (or full) mid-night: named in the pass's record, not only said.
        const why = `(batch ${error.batchId}): its report could not be written: ${error.message}`;
        deps.onLeft?.({ where: "drop folder", shown: shownName(error.file), why });
        return { kind: "failed", error };
      }
      // A Redis restart or failover must not end a pass that may have hours to run: every step above
      // is safe to repeat, so wait for Redis (within the deadline) instead of giving up.
      if (!isRedisUnavailable(deps.redis, error)) throw error;
      if (outageSince === undefined) {
        outageSince = Date.now();
        logger.warn(
          { redis: describeTarget(redisTarget(config)) },
          "Redis is unreachable; waiting for it to come back",
        );
      }
    }
    const interrupted = options.signal.aborted;
    if (interrupted || (options.deadline !== undefined && Date.now() > options.deadline)) {
      if (growing.length > 0) return { kind: "finished", batches: metas, growing };
      return {
        kind: "stopped",
        why: interrupted ? "interrupted" : "deadline",
        pending: metas.reduce((n, m) => n + Math.max(0, m.pending ?? 0), 0),
        redisDown: outageSince !== undefined,
        refusingForCapacity: outageSince === undefined && (await options.refusing()),
      };
    }
    await pauseWithin(options.pollMs ?? POLL_MS, options.until);
  }
}

/**
 * Batches from earlier runs still waiting on invoices, or whose file changed after its claim and is
 * still kept in processing/ until it settles (each run says so again), their files on this machine (or claimed here and gone).
 */
export async function unfinishedBatches(
  deps: NightlyPassDeps,
  /** Batches already waited for, not read again. */
  known: ReadonlySet<string> = new Set(),
): Promise<BatchMeta[]> {
  const ids = (await deps.batches.list()).filter((id) => !known.has(id));
  const metas = await deps.batches.getMany(ids);
  const open = metas.filter(
    (m): m is BatchMeta =>
      m !== undefined &&
      (m.state === "ingested" || m.state === "ingesting" || m.state === "changed") &&
      m.replaced_by === undefined,
  );
  const here = await Promise.all(
    open.map((m) =>
      access(m.path).then(
        () => true,
        () => false,
      ),
    ),
  );
  // One claimed here whose file is gone is waited for too, to be named (PassUpkeep), never passed over.
  return open.filter((m, i) => here[i] === true || claimedHere(deps.folder, m));
}

function growingFile(changed: ChangedClaim): GrowingFile {
  return {
    file: changed.batch.file,
    batch: changed.batch.id,
    claimed: changed.batch.size ?? 0,
    size: changed.size,
    readiness: changed.readiness,
  };
}

async function progressOf(deps: NightlyPassDeps, metas: readonly BatchMeta[]): Promise<PassProgress> {
  const counts = await deps.ledger.counts();
  return {
    files: metas.length,
    filesDone: metas.filter(isFinished).length,
    invoices: metas.reduce((n, m) => n + (m.valid_rows ?? 0), 0),
    pending: metas.reduce((n, m) => n + Math.max(0, m.pending ?? 0), 0),
    retrying: counts.retrying,
  };
}
