import type { BatchMeta } from "../ledger/batch-store.js";
import { isBatchFinished } from "../ledger/statuses.js";
import { resumeRequeues } from "../queue/requeued-jobs.js";
import { mayBeStranded, repairStranded } from "../ingest/stranded-keys.js";
import { claimedFiles } from "../ingest/drop-folder.js";
import { resumeClaimedFiles, type DropPassDeps } from "./drop-pass.js";
import { hostname } from "node:os";
import { sep } from "node:path";
import { BatchLostError } from "../ingest/errors/batch-lost-error.js";
import { BatchFileGoneError, goneWhy, type GoneBatch } from "../ingest/errors/batch-file-gone-error.js";
import { shownName } from "../names/shown-text.js";
import { leftFileText } from "../names/file-name.js";
import { locate, reportGoneFile } from "../results/finalize.js";
import type { DropFolder } from "../ingest/drop-folder.js";

/** Whether the batch's file was claimed into this drop folder on this machine (its record says so). */
export function claimedHere(folder: DropFolder, meta: BatchMeta): boolean {
  return (
    meta.path.startsWith(`${folder.root}${sep}`) && (meta.host === undefined || meta.host === hostname())
  );
}

/** How long the pending count may stand still before the queue is asked whether keys are stranded. */
const STRANDED_AFTER_MS = 5000;

/**
 * Whether a pass stops waiting for the batch: once it is finished (isBatchFinished), or `changed` (kept
 * in processing/ and never reported: not finished, but nothing more comes of it in this pass, which
 * ends and says so with exit 1).
 */
export function isFinished(meta: BatchMeta): boolean {
  return isBatchFinished(meta.state) || meta.state === "changed";
}

/**
 * The repairs a pass that waits for its batches makes as it goes, so that no invoice waits for ever:
 * - keys put back to queued whose job never came get it (requeued-jobs.ts);
 * - a batch Redis has lost while its file is still in processing/ is ingested again with the same keys;
 * - a file in processing/ keeps the pass going until its batch is finished, whoever claimed it;
 * - when the pending count stands still and the queue holds no job that will run, the waiting keys of
 *   the batches are given their jobs back (stranded-keys.ts).
 */
export class PassUpkeep {
  #pending = -1;
  #movedAt = Date.now();
  #checkedAt = 0;
  /** Batches seen finished: one gone since has passed its retention (RESULTS_RETENTION), it is not lost. */
  readonly #finished = new Set<string>();
  /**
   * Each batch last seen finished, as then read: a round reads only the others, and all of them again
   * once these are all there is (a `retry` may have reopened one meanwhile), so that a pass of many
   * files does not read every batch's record at every round.
   */
  readonly #lastFinished = new Map<string, BatchMeta>();
  /** Batches whose file was seen gone: named once. */
  readonly #gone = new Set<string>();

  constructor(private readonly deps: DropPassDeps) {}

  /** One round; returns the batches of `targets` (which it may extend). Throws BatchLostError. */
  async round(targets: Set<string>): Promise<BatchMeta[]> {
    await resumeRequeues(this.deps);
    let metas = await this.metas(targets, false);
    if (metas.length < targets.size || metas.every(isFinished)) {
      for (const passed of await resumeClaimedFiles(this.deps)) targets.add(passed.file.batchId);
      // A file in processing/ with no batch yet is not lost: it is read again (above), or, the pass
      // ending first, left claimed for the next.
      const claimed = new Set((await claimedFiles(this.deps.folder)).map((file) => file.batchId));
      for (const id of claimed) targets.add(id);
      metas = await this.metas(targets, true);
      const known = new Set(metas.map((m) => m.id));
      const lost = [...targets].filter((id) => !known.has(id) && !this.#finished.has(id) && !claimed.has(id));
      if (lost.length > 0) throw new BatchLostError(lost);
    }
    await this.repairIfStuck(metas);
    return metas;
  }

  /**
   * A batch of this drop folder whose file is gone from processing/ and archive/ (removed, its folder
   * unmounted) is named as soon as a round sees it, its invoices still sent; once they are all final its
   * report is written from Redis where it can be (reportGoneFile) and the pass ends naming it rather
   * than waiting for ever. A batch claimed on another machine is left to the process that has it.
   */
  async throwIfFilesGone(metas: readonly BatchMeta[]): Promise<void> {
    const open = metas.filter((m) => m.state === "ingested" && claimedHere(this.deps.folder, m));
    const gone: BatchMeta[] = [];
    for (const meta of open) if ((await locate(this.deps.folder, meta)) === undefined) gone.push(meta);
    // Read again: the report may have been written (and the file archived) since the record was read.
    const still = await this.deps.batches.getMany(gone.map((m) => m.id));
    const named: GoneBatch[] = [];
    for (const meta of still) {
      if (meta?.state !== "ingested") continue;
      if ((meta.pending ?? 0) > 0) {
        this.nameGone({ ...meta, report: meta.pending ?? 0 });
        continue;
      }
      const report = await reportGoneFile(this.deps, meta);
      if ("busy" in report) continue; // another process writes it now
      named.push({ id: meta.id, file: meta.file, path: meta.path, report });
    }
    if (named.length === 0) return;
    for (const batch of named) this.nameGone(batch);
    throw new BatchFileGoneError(named);
  }

  /** Names a gone batch's file once, in the log and the pass's record (`status`, the console). */
  private nameGone(batch: Parameters<typeof goneWhy>[0]): void {
    if (this.#gone.has(batch.id)) return;
    this.#gone.add(batch.id);
    const left = { where: "drop folder", shown: shownName(batch.file), why: goneWhy(batch) };
    this.deps.logger.error({ batch: batch.id, file: batch.file }, leftFileText(left));
    this.deps.onLeft?.(left);
  }

  /** The batches of `targets`: each read, or (`all` false) only those not last seen finished. */
  private async metas(targets: ReadonlySet<string>, all: boolean): Promise<BatchMeta[]> {
    // The others' records in a few round trips, not one each: a pass of many small files waits on thousands.
    const ids = [...targets];
    const unread = all ? ids : ids.filter((id) => !this.#lastFinished.has(id));
    const read = await this.deps.batches.getMany(unread);
    const byId = new Map(unread.map((id, i) => [id, read[i]]));
    const found = ids
      .map((id) => (byId.has(id) ? byId.get(id) : this.#lastFinished.get(id)))
      .filter((m): m is BatchMeta => m !== undefined);
    for (const meta of found) {
      if (isFinished(meta)) {
        this.#finished.add(meta.id);
        this.#lastFinished.set(meta.id, meta);
      } else this.#lastFinished.delete(meta.id);
    }
    return found;
  }

  private async repairIfStuck(metas: readonly BatchMeta[]): Promise<void> {
    const open = metas.filter((m) => m.state === "ingested");
    const pending = open.reduce((n, m) => n + Math.max(0, m.pending ?? 0), 0);
    const now = Date.now();
    if (pending !== this.#pending) {
      this.#pending = pending;
      this.#movedAt = now;
      return;
    }
    if (now - this.#movedAt < STRANDED_AFTER_MS || now - this.#checkedAt < STRANDED_AFTER_MS) return;
    this.#checkedAt = now;
    if (await mayBeStranded(this.deps.queue, pending)) await repairStranded(this.deps, open);
  }
}
