import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { claimedContent } from "../ingest/claimed-content.js";
import { claimedName, type DropFolder } from "../ingest/drop-folder.js";
import { syncToDisk } from "../ingest/local-files.js";
import { remoteFolders, type RemoteSource } from "../ingest/sftp/remote-source.js";
import type { RemoteSession } from "../ingest/sftp/session.js";
import type { BatchStore } from "../ledger/batch-store.js";
import type { RemoteClaim, RemoteClaims } from "../ledger/remote-claims.js";
import type { Logger } from "../log/logger.js";

export interface ClaimDeps {
  readonly folder: DropFolder;
  readonly batches: BatchStore;
  readonly logger: Logger;
}

/** `taken`: a new batch's file is in processing/; `known`: same content as an earlier batch; `left`: not taken. */
export type ClaimEnd = "taken" | "known" | "left";

/**
 * Takes one remote file, or finishes taking it after a pass was cut (the claim in Redis says how far it
 * got). Each step is safe to repeat and is recorded before the next: the batch id is given first; the
 * file is downloaded under a dot-name in processing/, measured, fsynced and renamed to its claimed name
 * (the drop pass ingests it from there); only then is it moved to the server's processing/ (or removed).
 * A file that changed or went away before it was whole here is left, nothing of it kept.
 */
export async function finishClaim(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  start: RemoteClaim,
): Promise<ClaimEnd> {
  const log = deps.logger.child({ source: source.name, file: start.name, batch: start.batch });
  const remotePath = join(source.path, start.name);
  let claim = start;
  if (claim.step === "downloading") {
    const fetched = await download(deps, session, claims, source, claim);
    if (fetched === undefined) {
      await claims.abandon(claim.name);
      log.info("remote file changed or went away before it was downloaded whole; it is taken once settled");
      return "left";
    }
    claim = fetched;
  }
  const folders = remoteFolders(source);
  const target = join(
    claim.step === "recognised" ? folders.archive : folders.processing,
    claimedName(claim.batch, claim.name),
  );
  let remote: string | undefined = target;
  if (source.afterClaim === "delete" || (await session.stat(target)) === undefined) {
    const now = await session.stat(remotePath);
    const same = now !== undefined && now.size === claim.size && now.mtimeMs === claim.mtimeMs;
    if (!same) {
      remote = undefined;
      if (source.afterClaim === "move")
        log.warn(
          "remote file was gone or replaced before it was moved to processing/; the copy here is kept",
        );
    } else if (source.afterClaim === "move") await session.rename(remotePath, target);
    else {
      await session.remove(remotePath);
      remote = undefined;
    }
  }
  if (source.doneMarker !== undefined) await session.remove(`${remotePath}${source.doneMarker}`);
  const taken = claim.step === "downloaded";
  await claims.finish(
    claim.name,
    claim,
    taken
      ? {
          name: claim.name,
          ...(remote === undefined ? {} : { remote }),
          archived: remote === undefined,
          report: source.reports ? "pending" : "off",
        }
      : undefined,
  );
  if (taken) log.info("pulled from the SFTP source");
  else
    log.warn(
      { earlier: claim.earlier },
      "remote file has the content an earlier batch took: archived, not sent again",
    );
  return taken ? "taken" : "known";
}

/**
 * Where a download is written before it is whole: a dot-name (never taken for a claimed file) made from
 * the batch id alone, so it is as long whatever the remote name is.
 */
export function downloadName(batch: string): string {
  return `.${batch}.download`;
}

async function download(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  claim: RemoteClaim,
): Promise<RemoteClaim | undefined> {
  const local = join(deps.folder.processing, claimedName(claim.batch, claim.name));
  // Renamed before a crash that came before the step was recorded: the file here is whole.
  const known = await deps.batches.get(claim.batch);
  const here = await claimedContent(local).catch(() => undefined);
  if (known !== undefined || here !== undefined) {
    const done = { ...claim, step: "downloaded" as const, sha256: known?.sha256 ?? here?.sha256 };
    await claims.update(claim.name, done);
    return done;
  }
  const remotePath = join(source.path, claim.name);
  const before = await session.stat(remotePath);
  if (before === undefined || before.size !== claim.size || before.mtimeMs !== claim.mtimeMs)
    return undefined;
  const part = join(deps.folder.processing, downloadName(claim.batch));
  await rm(part, { force: true });
  try {
    await session.download(remotePath, part);
    const got = await claimedContent(part);
    const after = await session.stat(remotePath);
    if (got.size !== claim.size || after?.size !== claim.size || after.mtimeMs !== claim.mtimeMs) {
      await rm(part, { force: true });
      return undefined;
    }
    await syncToDisk(part);
    const earlier = await claims.takenBefore(got.sha256);
    if (earlier !== undefined) {
      await rm(part, { force: true });
      const known = { ...claim, step: "recognised" as const, sha256: got.sha256, earlier };
      await claims.update(claim.name, known);
      return known;
    }
    await rename(part, local);
    await syncToDisk(deps.folder.processing);
    const done = { ...claim, step: "downloaded" as const, sha256: got.sha256 };
    await claims.update(claim.name, done);
    return done;
  } catch (error) {
    await rm(part, { force: true });
    throw error;
  }
}
