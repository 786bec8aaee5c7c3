import { rm } from "node:fs/promises";
import { join } from "node:path";
import { newBatchId } from "../ingest/drop-folder.js";
import type { RemoteSource } from "../ingest/sftp/remote-source.js";
import type { RemoteStanding } from "../ingest/sftp/remote-content.js";
import type { RemoteSession } from "../ingest/sftp/session.js";
import { ledgerNow } from "../ledger/clock.js";
import { claimKey, type PulledBatch, type RemoteClaim, type RemoteClaims } from "../ledger/remote-claims.js";
import { admitName, isRefused, type FileName, type LeftFile } from "../names/file-name.js";
import { shownName } from "../names/shown-text.js";
import { TakeWriteError } from "../ingest/errors/take-write-error.js";
import { fileProblem, machineRefusal } from "./remote-file-problem.js";
import { downloadName, serverPaths, takeFile, type ClaimDeps } from "./remote-take.js";

export type { ClaimDeps };

/**
 * `taken`: the claim's batch has its file in processing/ (this call put it there or finished it);
 * `settling`: its server copy changed while it was being taken and is taken once settled; `left`: not
 * taken (changed or gone before it was moved), and why; `vanished`: gone where no listing finds it again.
 */
export type ClaimEnd =
  "taken" | "settling" | { readonly left: string; readonly vanished?: boolean | undefined };

/**
 * Takes one remote file, or finishes taking it after a pass was cut (the claim in Redis says how far it
 * got), each step recorded before the next: the batch id is given first; the file is downloaded, moved to
 * the server's processing/ and read there again (remote-take.ts); only a copy found the same is renamed
 * into processing/ here, for the drop pass to ingest. With `after_claim: delete` the file is read again
 * where it is and removed once found the same. A claim resumed after a cut checks the server's copy
 * again: bytes that changed meanwhile are never archived or removed unread (docs/sftp.md).
 */
export async function finishClaim(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  start: RemoteClaim,
): Promise<ClaimEnd> {
  const log = deps.logger.child({ source: source.name, file: start.name, batch: start.batch });
  let claim = start;
  let standing: RemoteStanding | undefined;
  if (claim.step === "downloading") {
    const taken = await takeFile(deps, session, claims, source, claim, log);
    if (taken.kind === "settling") return "settling";
    if (taken.kind === "left") return { left: taken.why, vanished: taken.vanished };
    claim = taken.claim;
    standing = taken.standing;
  }
  const { listed, target } = serverPaths(source, claim);
  const copy = target !== undefined && (await session.stat(target)) !== undefined ? target : listed;
  standing ??= await session.standing(copy, { size: claim.size, sha256: claim.sha256 ?? "" });
  const earlier = claim.sha256 === undefined ? undefined : await claims.takenBefore(claim.sha256);
  const pulled: PulledBatch = {
    name: claim.name,
    archived: true,
    report: source.reports ? "pending" : "off",
    size: claim.size,
    ...(claim.sha256 === undefined ? {} : { sha256: claim.sha256 }),
    ...(earlier === undefined || earlier.batch === claim.batch
      ? {}
      : { sameAs: { batch: earlier.batch, file: earlier.name } }),
  };
  let again: RemoteClaim | undefined;
  if (standing.kind === "intact") {
    if (target !== undefined && copy !== target) await session.rename(copy, target); // claimed before this order
    if (target === undefined) await session.remove(listed);
    else Object.assign(pulled, { remote: target, archived: false, mtimeMs: standing.mtimeMs });
  } else if (standing.kind === "gone") {
    log.warn("remote file went away from the server after it was taken; nothing is left there to archive");
  } else if (copy === target) {
    // Our copy in the server's processing/ changed after it was taken: the new bytes are a new batch.
    again = retake(claim.batch, claim.name, standing);
    pulled.takenAgainAs = again.batch;
    log.warn(
      { claimed: claim.size, now: standing.size, as: again.batch },
      `remote file ${standing.kind} after it was taken: taken again, whole, as a new batch once settled`,
    );
  } else {
    log.warn(
      { claimed: claim.size, now: standing.size },
      `remote file ${standing.kind} after it was taken: left on the server, and taken again once settled`,
    );
  }
  if (source.doneMarker !== undefined) await session.remove(`${listed}${source.doneMarker}`);
  await claims.finish(claim, pulled, await ledgerNow(deps.redis, deps.now), again);
  if (pulled.sameAs !== undefined)
    log.warn(
      { earlier: pulled.sameAs },
      "remote file has the same bytes as a file taken before: a batch of its own, whose rows come out as that file's did",
    );
  log.info("pulled from the SFTP source");
  return "taken";
}

/**
 * The claim that takes batch `of`'s changed copy in the server's processing/ again, whole, as a new
 * batch once it has settled.
 */
export function retake(
  of: string,
  name: FileName,
  seen: { readonly size: number; readonly mtimeMs: number },
): RemoteClaim {
  return {
    batch: newBatchId(),
    name,
    againOf: of,
    size: seen.size,
    mtimeMs: seen.mtimeMs,
    step: "downloading",
    settlingSince: Date.now(),
  };
}

/**
 * Takes one file, or finishes taking it, as `finishClaim`; a failure that is this file's alone (this
 * machine or the server refusing a step for it) leaves it, said in `left`, and the source's other files
 * go on (undefined). This machine's file system full or read-only is the source's failure this pass, a
 * TakeWriteError naming the file, processing/ and the fix. Either way its partial download is removed
 * (a new attempt downloads afresh). A claim still
 * downloading whose file is still where it was listed (nothing kept here, nothing moved there) is
 * dropped, so the next listing decides afresh; any other (its file in the server's processing/, or a
 * copy being taken again) is kept and finished at a later pass, so no file waits there unseen. Any
 * other failure is the source's, thrown.
 */
export async function finishClaimAlone(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  claim: RemoteClaim,
  left: LeftFile[],
): Promise<ClaimEnd | undefined> {
  try {
    return await finishClaim(deps, session, claims, source, claim);
  } catch (error) {
    const errno = machineRefusal(error);
    const problem = errno === undefined ? fileProblem(error) : undefined;
    if (errno === undefined && problem === undefined) throw error;
    await rm(join(deps.folder.processing, downloadName(claim.batch)), { force: true });
    const now = (await claims.claims()).get(claimKey(claim));
    if (now?.step === "downloading" && now.againOf === undefined && !(await movedThere(session, source, now)))
      await claims.abandon(now);
    if (errno !== undefined)
      throw new TakeWriteError(
        `SFTP source ${source.name}: ${shownName(claim.name)}`,
        deps.folder.processing,
        errno,
        "it stays on the server, and the next pass takes it",
        { cause: error },
      );
    left.push({
      where: `SFTP source ${source.name}`,
      shown: shownName(claim.name),
      why: `left on the server: ${problem}`,
    });
    return undefined;
  }
}

/**
 * Whether the claim's file may be in the server's processing/ already (`after_claim: move`). A server
 * that refuses even to look there is taken to say yes: the claim is kept rather than a file forgotten.
 */
async function movedThere(
  session: RemoteSession,
  source: RemoteSource,
  claim: RemoteClaim,
): Promise<boolean> {
  const { target } = serverPaths(source, claim);
  if (target === undefined) return false;
  try {
    return (await session.stat(target)) !== undefined;
  } catch (error) {
    if (fileProblem(error) === undefined) throw error;
    return true;
  }
}

/**
 * Claims an earlier version began under a name refused now (over 200 bytes, not UTF-8), still
 * downloading: none can be finished (the names made from it do not fit), and nothing of them was moved
 * on the server before the download. Each is dropped with its partial download and named, as the
 * listing names the file itself.
 */
export async function dropClaimsOfRefusedNames(
  deps: ClaimDeps,
  claims: RemoteClaims,
  source: RemoteSource,
): Promise<LeftFile[]> {
  const left: LeftFile[] = [];
  for (const claim of (await claims.claims()).values()) {
    const verdict = admitName(claim.name);
    if (claim.step !== "downloading" || claim.againOf !== undefined || !isRefused(verdict)) continue;
    await dropClaim(deps, claims, claim);
    left.push({
      where: `SFTP source ${source.name}`,
      shown: verdict.shown,
      why: `left on the server: its name ${verdict.why}`,
    });
  }
  return left;
}

async function dropClaim(deps: ClaimDeps, claims: RemoteClaims, claim: RemoteClaim): Promise<void> {
  await rm(join(deps.folder.processing, downloadName(claim.batch)), { force: true });
  await claims.abandon(claim);
}
