import { access } from "node:fs/promises";
import type { SubmitConfig } from "../config/load.js";
import { describeTarget, redisTarget } from "../config/redis-target.js";
import { resumeClaimedFiles, type DropPassDeps } from "./drop-pass.js";
import { passIntake } from "./pass-intake.js";
import { BatchLostError } from "../ingest/errors/batch-lost-error.js";
import { BatchFileGoneError } from "../ingest/errors/batch-file-gone-error.js";
import { IngestInterruptedError } from "../ingest/errors/ingest-interrupted-error.js";
import { PastResultsUnavailableError } from "../ingest/errors/past-results-unavailable-error.js";
import { claimedHere, isFinished, PassUpkeep } from "./pass-upkeep.js";
import { isRedisUnavailable } from "../queue/connection.js";
import { readApiKeyRefusal } from "../queue/api-key-refusal.js";
import { startSubmission, type SubmissionHooks } from "../queue/submission-service.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import { REFUSING_REPORTED_AFTER_MS } from "../queue/send-rate-view.js";
import { finalizeCompleteBatches } from "../results/finalize.js";
import { takeChangedFilesAgain, type ChangedClaim } from "./take-again.js";
import type { Readiness } from "../ingest/drop-folder.js";
import type { RemoteRetake } from "./remote-pull.js";
import type { RemotePass } from "./remote-pass.js";
import { passWindow } from "./pass-window.js";
import { passSignal } from "../lifecycle/pass-signal.js";

export interface NightlyPassDeps extends Omit<DropPassDeps, "signal"> {
  readonly config: SubmitConfig;
  /** Observers of the pass's submission worker (metrics, alerts); its ledger clock is `now`. */
  readonly submissionHooks?:
    Pick<SubmissionHooks, "onAttempt" | "onOutcome" | "onApiKeyRefused" | "onHeld"> | undefined;
  /**
   * The SFTP sources (docs/sftp.md): their settled files are taken into processing/ before the drop
   * folder is claimed, and once the pass is finished the files are archived and the results sent back.
   * A source that fails is recorded there (`failures()`); it never stops the pass.
   */
  readonly remote?: RemotePass | undefined;
}

export interface NightlyPassOptions {
  /** Epoch ms after which the pass stops waiting (work left continues next time). */
  readonly deadline?: number | undefined;
  /** Aborted (SIGTERM, SIGINT): ingest stops between chunks and waiting ends. */
  readonly signal: AbortSignal;
  readonly onProgress?: (progress: PassProgress) => void;
  /** The batches the pass waits for, as each round of waiting reads them (the pass's record keeps them). */
  readonly onBatches?: (batches: readonly BatchMeta[]) => void;
  readonly pollMs?: number;
  /** Before each check that the files of the pass are still as claimed (tests place a writer there). */
  readonly beforeArchiveCheck?: () => Promise<void>;
}

/** A file of the pass that grew or changed since its claim and has not settled: taken again later. */
export interface GrowingFile {
  readonly file: string;
  readonly batch: string;
  readonly claimed: number;
  readonly size: number;
  /**
   * `writing`: changed within SETTLE_MS; `unmarked`: DONE_MARKER_SUFFIX is set and its marker is missing;
   * `settled`: the pass was stopped before it took the file again.
   */
  readonly readiness: Readiness;
  /**
   * For a file of an SFTP source: its name. Its copy on the server grew or changed after it was taken
   * and is still being written; `batch` is the batch it is taken again as, `size` its size last seen.
   */
  readonly source?: string | undefined;
}

export interface PassProgress {
  readonly files: number;
  readonly filesDone: number;
  readonly invoices: number;
  readonly pending: number;
  readonly retrying: number;
}

/**
 * - `nothing-to-do`: no ready file and no unfinished batch;
 * - `finished`: every batch waited for is reported, rejected, or `changed` (never reported), and every
 *   file of theirs that grew or changed since its claim was taken again, save those in `growing` (still
 *   being written at the deadline, or waiting for their done-marker);
 * - `api-key-refused`: the service refused the API key; submission is paused, nothing was marked failed;
 * - `stopped`: interrupted or past the deadline, with invoices not final yet (they stay queued);
 * - `failed`: ingest interrupted or the results of record unreachable, or a batch Redis lost whose file
 *   is gone (the error says what to do).
 */
export type NightlyOutcome =
  | { readonly kind: "nothing-to-do" }
  | {
      readonly kind: "finished";
      readonly batches: readonly BatchMeta[];
      readonly growing: readonly GrowingFile[];
    }
  | { readonly kind: "api-key-refused"; readonly httpStatus: number; readonly detail: string }
  | {
      readonly kind: "stopped";
      readonly why: "interrupted" | "deadline";
      readonly pending: number;
      readonly redisDown: boolean;
      /** The service has refused every request for capacity (429) for a minute or more: a quota spent. */
      readonly refusingForCapacity: boolean;
    }
  | {
      readonly kind: "failed";
      readonly error:
        BatchLostError | BatchFileGoneError | IngestInterruptedError | PastResultsUnavailableError;
    };

const POLL_MS = 250;

/**
 * How long a pass waits, in SETTLE_MS, for drop files not ready when it looked (still being written,
 * dated in the future, without their done-marker) before it names them and goes on: one SETTLE_MS to
 * watch a file dated in the future stay unchanged by this machine's clock, and one more for a writer's
 * last burst. Within the deadline.
 */
export const SETTLE_WAITS = 2;

/**
 * One nightly pass: claim and ingest every ready file (and resume those left in processing/), submit,
 * wait until every invoice of those files and of earlier unfinished ones is final, write the reports.
 * Redis going away while it waits is waited out (every step is safe to repeat), within the deadline.
 */
export async function nightlyPass(
  deps: NightlyPassDeps,
  options: NightlyPassOptions,
): Promise<NightlyOutcome> {
  const { config, logger } = deps;
  // The worker's answers and the retention sweeps go by the same clock as the ingest (deps.now).
  const service = await startSubmission(config, logger, {
    ...deps.submissionHooks,
    now: deps.now,
    tracing: deps.tracing,
  });
  // Every wait of the pass ends at its deadline or a signal to stop, whichever is first.
  const until = passSignal(options.signal, options.deadline);
  // Ingest keeps to the window while this process's worker sends; its waits end with the pass.
  const window = passWindow(deps.window, { redis: deps.redis, prefix: config.queuePrefix }, until);
  try {
    const refusing = (): boolean => {
      const since = service.pacer?.snapshot()?.refusingSince ?? 0;
      return since > 0 && Date.now() - since >= REFUSING_REPORTED_AFTER_MS;
    };
    const waitOptions = { ...options, until, refusing };
    // The pass's one signal, not the stop signal alone: past the deadline no file is claimed or opened,
    // so what the pass holds is reported rather than cut by an ingest begun too late.
    const passDeps = { ...deps, signal: until, window };
    let passed;
    try {
      const settled = Date.now() + SETTLE_WAITS * config.settleMs;
      const waitUntil = options.deadline === undefined ? settled : Math.min(settled, options.deadline);
      passed = await passIntake(passDeps, deps.remote, until, config.settleMs, waitUntil);
    } catch (error) {
      if (error instanceof IngestInterruptedError) return await ingestStopped(deps, waitOptions, error);
      if (error instanceof PastResultsUnavailableError) return { kind: "failed", error };
      throw error;
    }
    const targets = new Set(passed.map((p) => p.file.batchId));
    for (const meta of await unfinishedBatches(deps, targets)) targets.add(meta.id);
    // A claimed file that grew and is still being written keeps the pass until it is taken again.
    const again = await takeChangedFilesAgain(passDeps, config.settleMs);
    for (const taken of again.passed) targets.add(taken.file.batchId);
    for (const waiting of again.waiting) targets.add(waiting.batch.id);
    if (targets.size === 0) {
      // Nothing here; a server copy being taken again (still settling) may still be.
      const outcome = await finishRemote(
        passDeps,
        targets,
        { kind: "finished", batches: [], growing: [] },
        waitOptions,
      );
      const none = outcome.kind === "finished" && outcome.batches.length + outcome.growing.length === 0;
      return none ? { kind: "nothing-to-do" } : outcome;
    }
    const outcome = await waitForBatches(passDeps, targets, waitOptions);
    return outcome.kind === "finished"
      ? await finishRemote(passDeps, targets, outcome, waitOptions)
      : outcome;
  } finally {
    await service.close(config.shutdownGraceMs);
  }
}

/**
 * Ingest stopped between two chunks: for a signal the pass failed, the file left claimed for the next
 * pass; for a refused API key or the deadline (a wait for room in the window ends with them) it says so
 * as it would while waiting for its invoices, the deadline's after reporting the batches done (the drop
 * folder's, whatever a source's file that came late does).
 */
async function ingestStopped(
  deps: NightlyPassDeps,
  options: NightlyPassOptions & { readonly refusing: () => boolean },
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
    refusingForCapacity: options.refusing(),
  };
}

/**
 * Archives and reports back the SFTP sources' batches. A server copy that grew or changed after its batch
 * took it is taken again, whole, as a new batch (remote-results.ts): its rows are sent and waited for in
 * this pass, as a local file that grew is. One still being written when the pass must end is named in
 * `growing`, so `run` never says all is well while a server's copy holds rows nobody read.
 */
async function finishRemote(
  deps: NightlyPassDeps & DropPassDeps,
  targets: Set<string>,
  finished: NightlyOutcome & { kind: "finished" },
  options: NightlyPassOptions & {
    readonly until: AbortSignal;
    readonly refusing: () => boolean;
  },
): Promise<NightlyOutcome> {
  let outcome: NightlyOutcome = finished;
  while (deps.remote !== undefined && outcome.kind === "finished") {
    const { taken, again } = await deps.remote.finish(options.until);
    if (taken.size === 0 && again.length === 0) break;
    if (taken.size === 0) {
      const ending =
        options.signal.aborted || (options.deadline !== undefined && Date.now() > options.deadline);
      if (ending) return { ...outcome, growing: [...outcome.growing, ...again.map(remoteGrowing)] };
      await new Promise((r) => setTimeout(r, Math.max(options.pollMs ?? POLL_MS, deps.config.settleMs)));
      continue;
    }
    for (const passed of await resumeClaimedFiles({ ...deps, pulled: taken }))
      targets.add(passed.file.batchId);
    outcome = await waitForBatches(deps, targets, options);
  }
  return outcome;
}

function remoteGrowing(retake: RemoteRetake): GrowingFile {
  return {
    file: retake.file,
    batch: retake.batch,
    claimed: retake.size,
    size: retake.size,
    readiness: "writing",
    source: retake.source,
  };
}

async function waitForBatches(
  deps: NightlyPassDeps & DropPassDeps,
  targets: Set<string>,
  options: NightlyPassOptions & { readonly refusing: () => boolean },
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
        error instanceof PastResultsUnavailableError
      )
        return { kind: "failed", error };
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
        refusingForCapacity: options.refusing(),
      };
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? POLL_MS));
  }
}

/**
 * Batches from earlier runs still waiting on invoices, or whose file changed after its claim and is
 * still kept in processing/ until it settles (each run says so again), their files on this machine (or claimed here and gone).
 */
async function unfinishedBatches(
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
