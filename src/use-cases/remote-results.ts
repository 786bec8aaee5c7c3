import { basename, join } from "node:path";
import { claimedName } from "../ingest/drop-folder.js";
import { exists } from "../ingest/local-files.js";
import { remoteFolders, type RemoteSource } from "../ingest/sftp/remote-source.js";
import type { RemoteSession } from "../ingest/sftp/session.js";
import type { PulledBatch, RemoteClaims } from "../ledger/remote-claims.js";
import type { LeftFile } from "../names/file-name.js";
import { shownName } from "../names/shown-text.js";
import type { PulledFile } from "./ingest-claimed.js";
import { retake, type ClaimDeps } from "./remote-claim.js";
import { fileProblem } from "./remote-file-problem.js";

/** Where a source's pulled batches stand after `finishPulledBatches`. */
export interface PulledBatches {
  /** Batches whose results still wait to be uploaded. */
  readonly pending: number;
  /** Batches whose file is in processing/ here and that have no batch record yet: the drop pass's to open. */
  readonly unopened: ReadonlyMap<string, PulledFile>;
  /** Batches a step failed for, that batch's alone: said, and tried again at the next pass. */
  readonly left: readonly LeftFile[];
}

/**
 * For each batch pulled from the source whose report is written: checks its copy in the server's
 * processing/ against what was taken (a `stat`, and a read again only when its size or time moved), takes
 * a copy that grew or changed again, whole, as a new batch (remote-claim.ts, `retake`), and moves an
 * intact one to archive/; then (with `reports: yes`) uploads its results CSV and summary to reports/,
 * each under a dot-name renamed once whole. What fails here is tried again at the next pass; it never
 * changes the batch. A failure of one batch's own (the server refusing to read, move or write its
 * files) is said and the others go on.
 */
export async function finishPulledBatches(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
): Promise<PulledBatches> {
  let pending = 0;
  const unopened = new Map<string, PulledFile>();
  const left: LeftFile[] = [];
  for (const [batch, pulled] of await claims.pulled()) {
    try {
      const stands = await finishPulledBatch(deps, session, claims, source, batch, pulled);
      if (stands.unopened !== undefined) unopened.set(batch, stands.unopened);
      if (stands.pending) pending += 1;
    } catch (error) {
      const problem = fileProblem(error);
      if (problem === undefined) throw error;
      pending += pulled.report === "pending" ? 1 : 0;
      left.push({
        where: `SFTP source ${source.name}`,
        shown: shownName(pulled.name),
        why: `(batch ${batch}): it could not be archived or its results put back on the server: ${problem}`,
      });
    }
  }
  return { pending, unopened, left };
}

/**
 * One pulled batch archived and reported back, if its report is written. `pending`: its results still
 * wait to be uploaded; `unopened`: its file waits in processing/ here for the drop pass to open it.
 */
async function finishPulledBatch(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  batch: string,
  pulled: PulledBatch,
): Promise<{ readonly pending: boolean; readonly unopened?: PulledFile }> {
  const folders = remoteFolders(source);
  const meta = await deps.batches.get(batch);
  // No batch yet: pulled but not ingested (the drop pass opens it), unless its file is gone too
  // (the batch and its file outlived RESULTS_RETENTION: nothing is left to report).
  const here =
    meta === undefined && (await exists(join(deps.folder.processing, claimedName(batch, pulled.name))));
  const waiting = pulled.report === "pending";
  if (here)
    return {
      pending: waiting,
      unopened: pulled.sameAs === undefined ? {} : { sameContentAs: pulled.sameAs },
    };
  if (meta !== undefined && meta.state !== "reported" && meta.state !== "rejected")
    return { pending: waiting };
  let next = pulled;
  if (!pulled.archived && pulled.remote !== undefined) {
    next = await archive(deps, session, claims, source, batch, pulled);
    await claims.setPulled(batch, next);
  }
  if (next.report === "pending") {
    // A batch the retention has forgotten has no report left to send.
    for (const local of meta === undefined ? [] : [meta.report_csv, meta.summary_json])
      if (local !== undefined) await uploadWhole(session, local, join(folders.reports, basename(local)));
    next = { ...next, report: "uploaded", archived: true };
    await claims.setPulled(batch, next);
    deps.logger.info(
      { source: source.name, batch, file: pulled.name },
      "results uploaded to the SFTP source",
    );
  }
  return { pending: false };
}

/**
 * Moves a reported batch's copy from the server's processing/ to archive/, unless it grew or changed
 * since it was taken: then it is given to a new claim that takes it again, whole, as a new batch. Both
 * paths are made from the batch id and its checked name, never from a path read back from Redis.
 */
async function archive(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  batch: string,
  pulled: PulledBatch,
): Promise<PulledBatch> {
  const folders = remoteFolders(source);
  const remote = join(folders.processing, claimedName(batch, pulled.name));
  const target = join(folders.archive, claimedName(batch, pulled.name));
  const now = await session.stat(remote);
  const moved = { ...pulled, remote: target, archived: true };
  if (now === undefined) return moved; // archived before a crash
  const unchanged =
    pulled.size === undefined ||
    pulled.sha256 === undefined ||
    (now.size === pulled.size && (pulled.mtimeMs === undefined || now.mtimeMs === pulled.mtimeMs));
  if (!unchanged && pulled.size !== undefined && pulled.sha256 !== undefined) {
    const standing = await session.standing(remote, { size: pulled.size, sha256: pulled.sha256 });
    if (standing.kind === "grown" || standing.kind === "rewritten") {
      const again = retake(batch, pulled.name, standing);
      const left: PulledBatch = { ...pulled, remote: undefined, archived: true, takenAgainAs: again.batch };
      await claims.takeAgain(batch, left, again);
      deps.logger.warn(
        { batch, file: pulled.name, claimed: pulled.size, now: standing.size, as: again.batch },
        `remote file ${standing.kind} on the server after its batch took it: taken again, whole, as a new batch once settled`,
      );
      return left;
    }
  }
  if ((await session.stat(target)) === undefined) await session.rename(remote, target);
  return moved;
}

/** Uploads under a dot-name, then renames: the partner never sees half a report. */
async function uploadWhole(session: RemoteSession, local: string, remote: string): Promise<void> {
  if ((await session.stat(remote)) !== undefined) return; // uploaded before a crash
  const dir = remote.slice(0, remote.lastIndexOf("/"));
  const part = `${dir}/.${basename(remote)}.part`;
  await session.remove(part);
  await session.upload(local, part);
  await session.rename(part, remote);
}
