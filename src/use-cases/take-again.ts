import { link } from "node:fs/promises";
import { join } from "node:path";
import type { BatchMeta } from "../ledger/batch-store.js";
import { BatchLease } from "../ledger/batch-lease.js";
import { standingOf } from "../ingest/claimed-content.js";
import { FileChangedError } from "../ingest/errors/file-changed-error.js";
import { firstExistingStat } from "../ingest/local-files.js";
import {
  claimedName,
  moveClaimed,
  newBatchId,
  removeDoneMarker,
  type Readiness,
} from "../ingest/drop-folder.js";
import { readinessOf } from "../ingest/drop-scan.js";
import { markSummaryReplaced, replacementOf } from "../results/batch-report.js";
import { ingestClaimed, type DropPassDeps, type PassedFile } from "./ingest-claimed.js";
import { mapInFlight } from "../ingest/files-in-flight.js";

/** A claimed file that is no longer what its batch claimed, found under the batch's own claimed name. */
export interface ChangedClaim {
  readonly batch: BatchMeta;
  readonly path: string;
  /** `grown`: the claimed bytes intact, more after them; `rewritten`: the claimed bytes changed. */
  readonly kind: "grown" | "rewritten";
  readonly size: number;
  /** Taken again only once `settled`; see readinessOf. */
  readonly readiness: Readiness;
}

export interface TakenAgain {
  /** The new batches, each a changed file taken again whole. */
  readonly passed: PassedFile[];
  /** Changed files not settled yet, or not taken because the pass is stopping: a later pass takes them. */
  readonly waiting: ChangedClaim[];
}

/**
 * Compares the file of every batch the ledger keeps (RESULTS_RETENTION), or of `batches`, with
 * what the batch claimed: its size, then the SHA-256 of the claimed bytes. A file that grew (a writer's
 * open handle appending after the pass archived it) or was rewritten is taken again, once it has settled,
 * as a new batch of the whole file, and the first batch is marked replaced by it. Rows already sent then
 * come out `duplicate`, rows rewritten in place are decided as a re-drop's are, and only the rest are
 * sent. A rewritten file's first batch is `changed`. See docs/reliability.md, "A file still being written".
 * The files are compared side by side (files-in-flight.ts), then taken again one by one, in batch order.
 */
export async function takeChangedFilesAgain(
  deps: DropPassDeps,
  settleMs: number,
  /** The batches to look at, by id or as just read; every batch the ledger keeps when absent. */
  batches?: Iterable<string | BatchMeta>,
): Promise<TakenAgain> {
  const passed: PassedFile[] = [];
  const waiting: ChangedClaim[] = [];
  const given = [...(batches ?? (await deps.batches.list()))];
  // The records not given are read many to a round trip (getMany), not one by one.
  const ids = given.filter((batch): batch is string => typeof batch === "string");
  const read = await deps.batches.getMany(ids);
  const byId = new Map(ids.map((id, i) => [id, read[i]]));
  const metas = given.map((batch) => (typeof batch === "string" ? byId.get(batch) : batch));
  const claims = await mapInFlight(metas, async (meta) =>
    meta === undefined ? undefined : changedClaim(deps, meta, settleMs),
  );
  for (const changed of claims) {
    if (changed === undefined) continue;
    // Stopping (a signal): nothing more is ingested, but what is left unsent is still said.
    if (changed.readiness !== "settled" || deps.signal?.aborted === true) waiting.push(changed);
    else {
      const taken = await takeAgain(deps, changed);
      if (taken !== undefined) passed.push(taken);
    }
  }
  return { passed, waiting };
}

/** The batch's file when it is on this machine under the batch's own claimed name and not as claimed. */
async function changedClaim(
  deps: DropPassDeps,
  meta: BatchMeta,
  settleMs: number,
): Promise<ChangedClaim | undefined> {
  if (meta.size === undefined || meta.sha256 === undefined) return undefined;
  if (meta.state !== "reported" && meta.state !== "changed") return undefined;
  // Replaced already, unless a crash came between noting the new batch and giving it the file.
  if (meta.replaced_by !== undefined) {
    const taken =
      (await deps.batches.get(meta.replaced_by)) !== undefined ||
      (await ownFile(deps, { id: meta.replaced_by, file: meta.file })) !== undefined;
    if (taken) return undefined;
  }
  const own = await ownFile(deps, meta);
  if (own === undefined) return undefined;
  const path = own.path;
  const claimed = { size: meta.size, sha256: meta.sha256 };
  const standing = await standingOf(path, claimed, meta.created_at, own.stats);
  if (standing.kind === "intact") return undefined;
  if (standing.kind === "rewritten" && meta.state === "reported") {
    // Archived, then rewritten: what was sent and reported is no longer what the file says.
    const error = new FileChangedError(meta.file, path, claimed, standing.size, false);
    deps.logger.error({ batch: meta.id, file: meta.file, err: error.message }, "archived file rewritten");
    await deps.batches.markChanged(meta.id, error.message);
  }
  const readiness =
    meta.replaced_by !== undefined
      ? "settled" // the take was decided before a crash: finish it
      : await readinessOf(deps.folder, meta.file, standing.mtimeMs, settleMs);
  return { batch: meta, path, kind: standing.kind, size: standing.size, readiness };
}

/** Where the batch's file is, found with the `stat` that says whether it changed. */
function ownFile(deps: DropPassDeps, meta: Pick<BatchMeta, "id" | "file">) {
  const name = claimedName(meta.id, meta.file);
  return firstExistingStat([join(deps.folder.archive, name), join(deps.folder.processing, name)]);
}

/**
 * One changed file taken again. The new batch's id is noted on the first batch before anything else, so
 * a crash at any step is finished by the next pass under the same id, and two processes never take the
 * file twice (the first batch's report lease, held throughout). The new batch's file is a hard link to
 * the same file, so the first batch keeps its own under its name in archive/ (its report and a `retry`
 * read its claimed bytes there) and a writer still holding it open is seen by both.
 */
async function takeAgain(deps: DropPassDeps, changed: ChangedClaim): Promise<PassedFile | undefined> {
  const old = changed.batch;
  const lease = new BatchLease(deps.redis, deps.batches.names.reportLease(old.id));
  if (!(await lease.acquire())) return undefined; // another process is at it
  try {
    const now = await deps.batches.get(old.id);
    if (now === undefined || (now.replaced_by !== undefined && now.replaced_by !== old.replaced_by))
      return undefined;
    const id = now.replaced_by ?? newBatchId();
    if (now.replaced_by === undefined) await deps.batches.markReplaced(old.id, id);
    const file = {
      batchId: id,
      name: old.file,
      path: join(deps.folder.processing, claimedName(id, old.file)),
    };
    await link(changed.path, file.path).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    });
    await removeDoneMarker(deps.folder, join(deps.folder.root, old.file));
    if (changed.path.startsWith(deps.folder.processing)) {
      // A `changed` batch's file goes to archive/ under its own name, out of the passes' way.
      const path = await moveClaimed(
        deps.folder,
        { batchId: old.id, name: old.file, path: changed.path },
        "archive",
        deps.signal,
      );
      await deps.batches.update(old.id, { path });
    }
    if (now.summary_json !== undefined)
      await markSummaryReplaced(now.summary_json, replacementOf(deps.folder.reports, old.file, id)).catch(
        (error: unknown) => {
          deps.logger.warn({ batch: old.id, err: error }, "could not note the replacement in the summary");
        },
      );
    deps.logger.warn(
      { batch: old.id, file: old.file, claimed: old.size, now: changed.size, as: id },
      changed.kind === "grown"
        ? "file grew after its batch claimed it: taken again, whole, as a new batch"
        : "file rewritten after its batch claimed it: taken again, whole, as a new batch",
    );
    return { file, result: await ingestClaimed(deps, file) };
  } finally {
    await lease.release();
  }
}
