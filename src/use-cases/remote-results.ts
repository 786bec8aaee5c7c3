import { basename, join } from "node:path";
import { claimedName } from "../ingest/drop-folder.js";
import { exists } from "../ingest/local-files.js";
import { remoteFolders, type RemoteSource } from "../ingest/sftp/remote-source.js";
import type { RemoteSession } from "../ingest/sftp/session.js";
import type { PulledBatch, RemoteClaims } from "../ledger/remote-claims.js";
import type { LeftFile } from "../names/file-name.js";
import { shownName } from "../names/shown-text.js";
import { fileProblem } from "./remote-file-problem.js";
import type { ClaimDeps } from "./remote-claim.js";

/**
 * For each batch pulled from the source whose report is written: moves its file from the server's
 * processing/ to archive/, and (with `reports: yes`) uploads its results CSV and summary to reports/,
 * each under a dot-name renamed once whole. What fails here is tried again at the next pass; it never
 * changes the batch. A failure of one batch's own (the server refusing its upload) is said and the
 * others go on. Returns how many batches still wait for an upload, and those that failed so.
 */
export async function finishPulledBatches(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
): Promise<{ pending: number; left: LeftFile[] }> {
  let pending = 0;
  const left: LeftFile[] = [];
  for (const [batch, pulled] of await claims.pulled()) {
    try {
      if (await finishPulledBatch(deps, session, claims, source, batch, pulled)) pending += 1;
    } catch (error) {
      const problem = fileProblem(error);
      if (problem === undefined) throw error;
      pending += pulled.report === "pending" ? 1 : 0;
      left.push({
        where: `SFTP source ${source.name}`,
        shown: shownName(pulled.name),
        why: `(batch ${batch}): its results could not be put back on the server: ${problem}`,
      });
    }
  }
  return { pending, left };
}

/** One pulled batch archived and reported back, if its report is written; true while it waits for that. */
async function finishPulledBatch(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  batch: string,
  pulled: PulledBatch,
): Promise<boolean> {
  const folders = remoteFolders(source);
  const meta = await deps.batches.get(batch);
  // No batch yet: pulled but not ingested (the drop pass opens it), unless its file is gone too
  // (the batch and its file outlived RESULTS_RETENTION: nothing is left to report).
  const unopened =
    meta === undefined && (await exists(join(deps.folder.processing, claimedName(batch, pulled.name))));
  if (unopened || (meta !== undefined && meta.state !== "reported" && meta.state !== "rejected"))
    return pulled.report === "pending";
  let next = pulled;
  if (!pulled.archived && pulled.remote !== undefined) {
    const target = join(folders.archive, claimedName(batch, pulled.name));
    if ((await session.stat(target)) === undefined && (await session.stat(pulled.remote)) !== undefined)
      await session.rename(pulled.remote, target);
    next = { ...next, remote: target, archived: true };
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
  return false;
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
