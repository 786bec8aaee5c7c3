import { resumeClaimedFiles, type DropPassDeps } from "./drop-pass.js";
import { passIntake } from "./pass-intake.js";
import { IngestInterruptedError } from "../ingest/errors/ingest-interrupted-error.js";
import { PastResultsUnavailableError } from "../ingest/errors/past-results-unavailable-error.js";
import { FileSystemUnansweredError } from "../errors/file-system-unanswered-error.js";
import { startSubmission } from "../queue/submission-service.js";
import { finalizeCompleteBatches } from "../results/finalize.js";
import { rateSettingsOf, readSendRate } from "../queue/send-rate-view.js";
import { takeChangedFilesAgain } from "./take-again.js";
import type { RemoteRetake } from "./remote-pull.js";
import { passWindow } from "./pass-window.js";
import { passSignal, pauseWithin } from "../lifecycle/pass-signal.js";
import { waitForBatches, ingestStopped, unfinishedBatches, POLL_MS, type WaitOptions } from "./pass-wait.js";
import type { GrowingFile, NightlyOutcome, NightlyPassDeps, NightlyPassOptions } from "./nightly-terms.js";

export type {
  GrowingFile,
  NightlyOutcome,
  NightlyPassDeps,
  NightlyPassOptions,
  PassProgress,
} from "./nightly-terms.js";

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
    // Every process's word, as `status` reads it: this one may not have sent for a while.
    const refusing = async (): Promise<boolean> => {
      const view = await readSendRate(deps.redis, config.queuePrefix, rateSettingsOf(config));
      return view?.refusingForCapacity === true;
    };
    const waitOptions = { ...options, until, refusing };
    // Its look-ups of the results of record (PostgreSQL) end with `until` too.
    const beyondRetention = deps.beyondRetention && { ...deps.beyondRetention, until };
    // The pass's one signal, not the stop signal alone: past the deadline no file is claimed or opened,
    // so what the pass holds is reported rather than cut by an ingest begun too late.
    const passDeps = { ...deps, signal: until, window, beyondRetention };
    let passed;
    try {
      const settled = Date.now() + SETTLE_WAITS * config.settleMs;
      const waitUntil = options.deadline === undefined ? settled : Math.min(settled, options.deadline);
      passed = await passIntake(passDeps, deps.remote, until, config.settleMs, waitUntil);
    } catch (error) {
      if (error instanceof IngestInterruptedError) return await ingestStopped(deps, waitOptions, error);
      if (error instanceof PastResultsUnavailableError) return { kind: "failed", error };
      if (error instanceof FileSystemUnansweredError) {
        // At the deadline: the files taken beside the one that did not answer are reported if done.
        await finalizeCompleteBatches(deps);
        return { kind: "failed", error };
      }
      throw error;
    }
    const targets = new Set(passed.map((p) => p.file.batchId));
    for (const meta of await unfinishedBatches(deps, targets)) targets.add(meta.id);
    // A claimed file that grew and is still being written keeps the pass until it is taken again.
    const again = await takeChangedFilesAgain(passDeps, config.settleMs);
    for (const taken of again.passed) targets.add(taken.file.batchId);
    for (const waiting of again.waiting) targets.add(waiting.batch.id);
    if (targets.size === 0) {
      // The deadline came before a file could be taken (a start-up as long as it): not "nothing to do".
      if (until.aborted && !options.signal.aborted)
        return { kind: "stopped", why: "deadline", pending: 0, redisDown: false, refusingForCapacity: false };
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
 * Archives and reports back the SFTP sources' batches. A server copy that grew or changed after its batch
 * took it is taken again, whole, as a new batch (remote-results.ts): its rows are sent and waited for in
 * this pass, as a local file that grew is. One still being written when the pass must end is named in
 * `growing`, so `run` never says all is well while a server's copy holds rows nobody read.
 */
async function finishRemote(
  deps: NightlyPassDeps & DropPassDeps,
  targets: Set<string>,
  finished: NightlyOutcome & { kind: "finished" },
  options: WaitOptions,
): Promise<NightlyOutcome> {
  let outcome: NightlyOutcome = finished;
  while (deps.remote !== undefined && outcome.kind === "finished") {
    const { taken, again } = await deps.remote.finish(options.until);
    if (taken.size === 0 && again.length === 0) break;
    if (taken.size === 0) {
      const ending =
        options.signal.aborted || (options.deadline !== undefined && Date.now() > options.deadline);
      if (ending) return { ...outcome, growing: [...outcome.growing, ...again.map(remoteGrowing)] };
      // Waiting for the copy to settle ends with the pass, whatever SETTLE_MS is.
      await pauseWithin(Math.max(options.pollMs ?? POLL_MS, deps.config.settleMs), options.until);
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
