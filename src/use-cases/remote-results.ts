import { basename, join } from "node:path";
import { claimedName } from "../ingest/drop-folder.js";
import { exists } from "../ingest/local-files.js";
import { remoteFolders, type RemoteSource } from "../ingest/sftp/remote-source.js";
import type { RemoteSession } from "../ingest/sftp/session.js";
import type { PulledBatch, RemoteClaims } from "../ledger/remote-claims.js";
import type { PulledFile } from "./ingest-claimed.js";
import { retake, type ClaimDeps } from "./remote-claim.js";

/** What is left to do for a source's pulled batches after `finishPulledBatches`. */
export interface PulledLeft {
  /** Batches whose results still wait to be uploaded. */
  readonly reportsPending: number;
  /** Batches whose file is in processing/ here and that have no batch record yet: the drop pass's to open. */
  readonly unopened: ReadonlyMap<string, PulledFile>;
}

/**
 * For each batch pulled from the source whose report is written: checks its copy in the server's
 * processing/ against what was taken (a `stat`, and a read again only when its size or time moved), takes
 * a copy that grew or changed again, whole, as a new batch (remote-claim.ts, `retake`), and moves an
 * intact one to archive/; then (with `reports: yes`) uploads its results CSV and summary to reports/,
 * each under a dot-name renamed once whole. What fails here is tried again at the next pass; it never
 * changes the batch.
 */
export async function finishPulledBatches(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
): Promise<PulledLeft> {
  const folders = remoteFolders(source);
  let reportsPending = 0;
  const unopened = new Map<string, PulledFile>();
  for (const [batch, pulled] of await claims.pulled()) {
    const meta = await deps.batches.get(batch);
    // No batch yet: pulled but not ingested (the drop pass opens it), unless its file is gone too
    // (the batch and its file outlived RESULTS_RETENTION: nothing is left to report).
    const here =
      meta === undefined && (await exists(join(deps.folder.processing, claimedName(batch, pulled.name))));
    if (here) unopened.set(batch, pulled.sameAs === undefined ? {} : { sameContentAs: pulled.sameAs });
    if (here || (meta !== undefined && meta.state !== "reported" && meta.state !== "rejected")) {
      if (pulled.report === "pending") reportsPending += 1;
      continue;
    }
    let next = pulled;
    if (!pulled.archived && pulled.remote !== undefined) {
      next = await archive(deps, session, claims, batch, pulled, pulled.remote, folders.archive);
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
  }
  return { reportsPending, unopened };
}

/**
 * Moves a reported batch's copy from the server's processing/ to archive/, unless it grew or changed
 * since it was taken: then it is given to a new claim that takes it again, whole, as a new batch.
 */
async function archive(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  batch: string,
  pulled: PulledBatch,
  remote: string,
  archiveDir: string,
): Promise<PulledBatch> {
  const target = join(archiveDir, claimedName(batch, pulled.name));
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
      const again = retake(pulled, remote, standing);
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
