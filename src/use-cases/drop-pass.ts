import { removeStaleCopies } from "../ingest/claim-copy.js";
import { claim, claimedFiles, type ClaimedFile } from "../ingest/drop-folder.js";
import { QuietWatch, scanDropFolder, type DropCandidate, type DropScan } from "../ingest/drop-scan.js";
import { leftFileText, type LeftFile } from "../names/file-name.js";
import { takeChangedFilesAgain } from "./take-again.js";
import { RegistrationOrder } from "../ingest/registration-order.js";
import { InFlight } from "../ingest/files-in-flight.js";
import { shownName } from "../names/shown-text.js";
import { folderProblemOf } from "../ingest/drop-folder-usable.js";
import { readLeftSince } from "../ingest/reads-under-way.js";
import { FileSystemUnansweredError } from "../errors/file-system-unanswered-error.js";
import { endedBy } from "../lifecycle/pass-signal.js";

import {
  ingestClaimed,
  type ClaimedHow,
  type DropPassDeps,
  type PassedFile,
  type PassResult,
} from "./ingest-claimed.js";

export { ingestClaimed, type DropPassDeps, type PassedFile };
export type { PassResult } from "./ingest-claimed.js";

/**
 * How often a pass that waits for files to settle looks at the folder again: a file is taken within a
 * quarter second of settling, and a listing four times a second costs a folder of files nothing.
 */
const SETTLE_POLL_MS = 250;

/**
 * Resumes files left in processing/ by a run that did not finish, then claims and ingests ready files,
 * then takes again, whole, each claimed file that grew or changed since its claim and has settled
 * (take-again.ts). Copies into processing/ whose copier died are removed on the way. Files are claimed
 * one by one, oldest first, and ingested side by side (files-in-flight.ts), each registering its rows
 * after the files claimed before it (registration-order.ts). With `waitUntil`, files not ready yet
 * (still being written, dated in the future, without their done-marker) are waited for until then.
 * Every drop file seen and not taken is named with its reason (`deps.onLeft`, and the log).
 */
export async function dropPass(
  deps: DropPassDeps,
  settleMs: number,
  options: DropPassOptions = {},
): Promise<PassedFile[]> {
  try {
    return await takeDropFiles(deps, settleMs, options);
  } catch (error) {
    // The folder removed, unmounted or made read-only since its check: said as the check says it.
    throw await folderProblemOf(deps.folder, error);
  }
}

interface DropPassOptions {
  /** `false`: the caller compares the claimed files with their claims itself, right after. */
  readonly takeAgain?: boolean;
  /** Epoch ms until which files not ready yet are waited for; without it, they are named at once. */
  readonly waitUntil?: number | undefined;
  /** Which files in processing/ with no batch yet to open (resumeClaimedFiles); all if absent. */
  readonly unrecorded?: ((batch: string) => boolean) | undefined;
}

async function takeDropFiles(
  deps: DropPassDeps,
  settleMs: number,
  { takeAgain = true, waitUntil, unrecorded }: DropPassOptions,
): Promise<PassedFile[]> {
  await removeStaleCopies(deps.folder, deps.logger);
  // Resumed beside the new files, not before them, each in an order of its own: a claimed file whose
  // read does not return (a hung share) keeps no new file from being taken; it ends at the deadline.
  const [resumed, taken] = await Promise.allSettled([
    resumeClaimedFiles(deps, unrecorded, await claimedFiles(deps.folder)),
    takeNewFiles(deps, settleMs, waitUntil),
  ]);
  if (resumed.status === "rejected") throw resumed.reason;
  if (taken.status === "rejected") throw taken.reason;
  const passed = [...resumed.value, ...taken.value];
  if (takeAgain && deps.signal?.aborted !== true)
    passed.push(...(await takeChangedFilesAgain(deps, settleMs)).passed);
  return passed;
}

async function takeNewFiles(
  deps: DropPassDeps,
  settleMs: number,
  waitUntil: number | undefined,
): Promise<PassedFile[]> {
  const watch = deps.quiet ?? new QuietWatch();
  let scan = await scanDropFolder(deps.folder, settleMs, watch);
  nameLeft(deps, scan);
  const order = new RegistrationOrder();
  const window = new InFlight();
  const claimed: PassedFile[] = [];
  const claimAll = async (ready: readonly DropCandidate[]): Promise<void> => {
    for (const [i, candidate] of ready.entries()) {
      if (window.failed) break; // stopping on its error: claim nothing more
      if (deps.signal?.aborted === true) {
        leaveUnclaimed(deps, ready.slice(i), deps.signal); // stopping: claim nothing more
        return;
      }
      const file = await claim(deps.folder, candidate.name, undefined, deps.signal);
      if (file === undefined) continue; // another process claimed it first
      deps.logger.info({ batch: file.batchId, file: file.name }, "claimed");
      const turn = order.next();
      const at = claimed.length;
      claimed.push({ file, result: { kind: "busy" } }); // until its ingest says what came of it
      await window.start(async () => {
        const result = await ingestUnlessCut(deps, file, { turn, fresh: true });
        if (result !== undefined) claimed[at] = { file, result };
      });
    }
  };
  await claimAll(scan.ready);
  while (scan.waiting.length > 0 && waitUntil !== undefined && deps.signal?.aborted !== true) {
    const left = waitUntil - Date.now();
    if (left <= 0 || window.failed) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(SETTLE_POLL_MS, left)));
    scan = await scanDropFolder(deps.folder, settleMs, watch);
    await claimAll(scan.ready);
  }
  for (const waiting of scan.waiting) {
    const left = {
      where: "drop folder",
      shown: waiting.shown,
      why: `left in the drop folder: it ${waiting.why}`,
    };
    // A scan of `start` looks again soon: a file still settling is only noted (not left: the next scan
    // takes it); a pass that waited its bounded time names it.
    if (waitUntil === undefined) {
      deps.logger.info({ file: waiting.shown }, leftFileText(left));
      continue;
    }
    deps.logger.warn({ file: waiting.shown }, leftFileText(left));
    deps.onLeft?.(left);
  }
  await window.settle();
  return claimed;
}

/** Names the ready files a pass stops before claiming (its deadline, a signal to stop): never unnamed. */
function leaveUnclaimed(deps: DropPassDeps, unclaimed: readonly DropCandidate[], signal: AbortSignal): void {
  for (const candidate of unclaimed) {
    const shown = shownName(candidate.name);
    const why = `left in the drop folder: ${endedBy(signal)} came before it was taken; a later pass takes it`;
    const left: LeftFile = { where: "drop folder", shown, why };
    deps.logger.warn({ file: shown }, leftFileText(left));
    deps.onLeft?.(left);
  }
}

/** Names the drop folder's entries a pass never takes as they are: refused names, no files, near misses. */
function nameLeft(deps: DropPassDeps, scan: DropScan): void {
  const leave = (shown: string, why: string, detail: object): void => {
    const left: LeftFile = { where: "drop folder", shown, why: `left in the drop folder: ${why}` };
    deps.logger.error({ file: shown, ...detail }, leftFileText(left));
    deps.onLeft?.(left);
  };
  for (const name of scan.refused) leave(name.shown, `its name ${name.why}`, { problem: name.problem });
  for (const entry of scan.notFiles)
    leave(entry.shown, `it is a ${entry.kind}, not a file; put the file itself there under another name`, {
      kind: entry.kind,
    });
  for (const near of scan.nearMisses)
    leave(
      near.shown,
      // Quoted: a trailing space is seen only so.
      `its name "${near.shown}" ends in a space or a dot after the extension, so it is no drop file; ` +
        `rename it to ${shownName(near.meant)}`,
      {},
    );
}

/**
 * Ingests again, under the same batch id and so with the same keys, every file in processing/ whose
 * batch is not ingested: one a run left half-ingested, or one whose batch Redis has lost (a restart
 * without persistence, a failover to a stale replica). A file another process is ingesting comes back
 * `busy`.
 */
export async function resumeClaimedFiles(
  deps: DropPassDeps,
  /**
   * Which files with no batch yet to open now, by batch id (others are left: an SFTP source may be
   * putting them there now); all if absent.
   */
  unrecorded: (batch: string) => boolean = () => true,
  /** The files to look at, listed before the caller claims more; all those in processing/ if absent. */
  listed?: readonly ClaimedFile[],
): Promise<PassedFile[]> {
  const order = new RegistrationOrder();
  const window = new InFlight();
  const passed: (PassedFile | undefined)[] = [];
  for (const file of listed ?? (await claimedFiles(deps.folder))) {
    if (deps.signal?.aborted === true || window.failed) break;
    if (!unrecorded(file.batchId) && (await deps.batches.get(file.batchId)) === undefined) continue;
    const since = readLeftSince(file.path, deps.reads);
    if (since !== undefined) {
      leaveUnanswered(deps, file, since);
      continue;
    }
    const turn = order.next();
    const at = passed.push(undefined) - 1;
    await window.start(async () => {
      try {
        const meta = await deps.batches.get(file.batchId);
        if (meta !== undefined && meta.state !== "ingesting") return; // ingested: waiting for its report
        if (meta === undefined && deps.pulled?.has(file.batchId) === true)
          deps.logger.info({ batch: file.batchId, file: file.name }, "claimed (pulled from an SFTP source)");
        else if (meta === undefined)
          deps.logger.warn(
            { batch: file.batchId, file: file.name },
            "a file in processing/ has no batch in Redis (Redis lost data?); ingesting it again with the same keys",
          );
        else
          deps.logger.info({ batch: file.batchId, file: file.name }, "resuming a file left in processing/");
        const result = await ingestUnlessCut(deps, file, { turn });
        if (result !== undefined) passed[at] = { file, result };
      } finally {
        turn.done();
      }
    });
  }
  await window.settle();
  return passed.filter((p): p is PassedFile => p !== undefined);
}

/**
 * ingestClaimed, in a scan of `start` whose read of the file was cut, nothing delivered while the next
 * scan fell due (ScanReads): the file is named as left, the scan goes on (undefined).
 */
async function ingestUnlessCut(
  deps: DropPassDeps,
  file: ClaimedFile,
  how: ClaimedHow,
): Promise<PassResult | undefined> {
  try {
    return await ingestClaimed(deps, file, how);
  } catch (error) {
    const cut = error instanceof FileSystemUnansweredError && deps.reads !== undefined;
    if (!cut || deps.signal?.aborted === true) throw error;
    leaveUnanswered(deps, file, readLeftSince(file.path, deps.reads) ?? Date.now());
    return undefined;
  }
}

/**
 * A claimed file whose read began at `since` in this process and has not returned (a hung share): named
 * as left, not opened again while that read holds its thread.
 */
function leaveUnanswered(deps: DropPassDeps, file: ClaimedFile, since: number): void {
  const left: LeftFile = {
    where: "drop folder",
    shown: shownName(file.name),
    why:
      `left in processing/: still being read since ${new Date(since).toISOString().slice(11, 16)} UTC, ` +
      "not answering (a hung share?); it is not opened again until that read returns or the service is " +
      "restarted; check the mount",
  };
  deps.logger.warn({ batch: file.batchId, file: file.name }, leftFileText(left));
  deps.onLeft?.(left);
}
