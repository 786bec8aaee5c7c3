import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { claimedContent } from "../ingest/claimed-content.js";
import { claimedName, type DropFolder } from "../ingest/drop-folder.js";
import { syncToDisk } from "../ingest/local-files.js";
import { onFileSystem } from "../ingest/file-system-waits.js";
import { shownName } from "../names/shown-text.js";
import type { RemoteStanding } from "../ingest/sftp/remote-content.js";
import type { RemoteCandidate } from "../ingest/sftp/remote-settle.js";
import { remoteFolders, type RemoteSource } from "../ingest/sftp/remote-source.js";
import type { RemoteSession } from "../ingest/sftp/session.js";
import { RemoteFileUnstableError } from "../ingest/sftp/errors/remote-file-unstable-error.js";
import { RemoteFileRefusedError } from "../ingest/sftp/errors/remote-file-refused-error.js";
import { RemoteFileSizeError } from "../ingest/sftp/errors/remote-file-size-error.js";
import type { BatchStore } from "../ledger/batch-store.js";
import type { LedgerClock } from "../ledger/clock.js";
import type { RedisClient } from "../ledger/redis-client.js";
import type { RemoteClaim, RemoteClaims } from "../ledger/remote-claims.js";
import type { Logger } from "../log/logger.js";

export interface ClaimDeps {
  readonly folder: DropFolder;
  readonly batches: BatchStore;
  readonly logger: Logger;
  readonly redis: RedisClient;
  /** A file taken again (its server copy changed) must be unchanged this long first. */
  readonly settleMs: number;
  /** The ledger's clock (src/ledger/clock.ts): when a content was taken, for RESULTS_RETENTION. */
  readonly now?: LedgerClock | undefined;
}

/**
 * - `taken`: the file is here, whole, in processing/ under its claimed name, and the server's copy was
 *   read again and holds the same bytes (`standing`, absent when a cut pass had got that far);
 * - `settling`: the server's copy changed while it was being taken, after it was moved to the server's
 *   processing/ (or it is a copy taken again): it is taken once it has settled;
 * - `left`: the file changed or went away before it was moved: nothing of it is kept, the claim is
 *   dropped, and the listing takes it again once it has settled; `why` names it if it never does.
 *   `vanished`: it went away once its download began, or from the server's processing/ after it was
 *   moved there: no listing finds it again, so it is named at once.
 */
export type Take =
  | { readonly kind: "taken"; readonly claim: RemoteClaim; readonly standing?: RemoteStanding | undefined }
  | { readonly kind: "settling" }
  | { readonly kind: "left"; readonly why: string; readonly vanished?: boolean | undefined };

/** Where the server's copy of a claimed file is: where it was listed (or taken again from), or processing/. */
export interface ServerPaths {
  readonly listed: string;
  /** The server's processing/<batch id>--<name> (`after_claim: move`), undefined with `delete`. */
  readonly target: string | undefined;
}

export function serverPaths(source: RemoteSource, claim: RemoteClaim): ServerPaths {
  const processing = remoteFolders(source).processing;
  return {
    listed:
      claim.againOf === undefined
        ? join(source.path, claim.name)
        : join(processing, claimedName(claim.againOf, claim.name)),
    target: source.afterClaim === "move" ? join(processing, claimedName(claim.batch, claim.name)) : undefined,
  };
}

/**
 * The temporary name a download is written under in processing/ until it is checked and renamed: a
 * dot-name (never taken for a claimed file) made from the batch id alone, so it is as long whatever the
 * remote name is.
 */
export function downloadName(batch: string): string {
  return `.${batch}.download`;
}

function partPath(deps: ClaimDeps, claim: RemoteClaim): string {
  return join(deps.folder.processing, downloadName(claim.batch));
}

/**
 * Downloads a claimed file and makes sure what was read is what the server keeps: the file is moved to
 * the server's processing/ first (with `after_claim: move`; nobody writes there by name), then read again
 * there and compared, by size and SHA-256, with the download (with `delete`, read again where it is).
 * Only then is the download renamed to its claimed name here. A partial download left by a cut or kill
 * is gone on with while the server's file is unchanged, removed once it changed. Each step is safe to
 * repeat.
 */
export async function takeFile(
  deps: ClaimDeps,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  start: RemoteClaim,
  log: Logger,
): Promise<Take> {
  const local = join(deps.folder.processing, claimedName(start.batch, start.name));
  const part = partPath(deps, start);
  // Renamed here before a crash came before the step was recorded: the file here is whole and checked.
  const here = await claimedContent(local).catch(() => undefined);
  if (here !== undefined) {
    await rm(part, { force: true });
    const done = { ...start, step: "downloaded" as const, sha256: start.sha256 ?? here.sha256 };
    await claims.update(done);
    return { kind: "taken", claim: done };
  }
  const { listed, target } = serverPaths(source, start);
  const moved = target !== undefined && (await session.stat(target)) !== undefined;
  let at = moved && target !== undefined ? target : listed;
  let downloading = false;
  // Changed before it could be taken: `listed` is left to the listing; a copy of ours settles first.
  const changed = async (
    seen: { size: number; mtimeMs: number } | undefined,
    claim = start,
  ): Promise<Take> => {
    await rm(part, { force: true });
    if (seen === undefined || (at === listed && start.againOf === undefined)) {
      await claims.abandon(start);
      const vanished = seen === undefined && (at !== listed || downloading);
      const why = !vanished ? untaken(start, seen) : at === listed ? GONE_WHILE_DOWNLOADED : VANISHED;
      // A vanished file is said at error with the pass's other left files (remote-pass.ts).
      if (!vanished)
        log.info(
          { why },
          "remote file changed or went away before it was taken whole; it is taken once settled",
        );
      return { kind: "left", why, vanished };
    }
    return settle(claims, claim, seen, claim !== start);
  };
  const before = await session.stat(at);
  if (before === undefined || before.size !== start.size || before.mtimeMs !== start.mtimeMs)
    return changed(before);
  if (start.settlingSince !== undefined && Date.now() - start.settlingSince < deps.settleMs)
    return { kind: "settling" };
  // The server says the size and time it had at the claim: a partial download a pass's end cut is gone
  // on with (its bytes are checked whole below, against the server's), never begun again.
  downloading = true;
  try {
    await session.download(at, part, start.size);
  } catch (error) {
    if (!(error instanceof RemoteFileSizeError || error instanceof RemoteFileRefusedError)) throw error;
    // Gone, or other than listed: a file still being written is taken once settled; one the server
    // still has so is named, its part removed (remote-claim.ts).
    const now = await session.stat(at);
    if (now?.size !== start.size || now.mtimeMs !== start.mtimeMs) return changed(now);
    throw error;
  }
  const got = await claimedContent(part);
  // The size and time the server says, against those it said before: whether it says it changed. What
  // was read is judged by its bytes alone (`standing`), never by the size said (which a server may get
  // wrong: remote-content.ts).
  const after = await session.stat(at);
  if (after?.size !== start.size || after.mtimeMs !== start.mtimeMs) return changed(after);
  if (target !== undefined && at !== target) {
    try {
      await session.rename(at, target);
    } catch (error) {
      // Gone since the download (removed or renamed by the partner): left, as before the download.
      if ((await session.stat(at)) === undefined && (await session.stat(target)) === undefined)
        return changed(undefined);
      throw error;
    }
    at = target;
  }
  const standing = await session.standing(at, got);
  // Other bytes with the size and time unchanged: a copy replaced so is taken again once; a second time,
  // the server makes the file anew at each read, and taking it again would never end.
  const sameStat =
    standing.kind === "rewritten" && standing.size === start.size && standing.mtimeMs === start.mtimeMs;
  if (sameStat && (start.rereads ?? 0) >= 1) {
    await rm(part, { force: true });
    throw new RemoteFileUnstableError(at);
  }
  if (standing.kind !== "intact") {
    log.warn(
      { claimed: got.size, now: standing.kind === "gone" ? undefined : standing.size },
      `remote file ${standing.kind === "gone" ? "went away" : standing.kind} while it was taken; ` +
        "nothing of it is kept, and it is taken again, whole, once settled",
    );
    if (standing.kind === "gone") return changed(undefined);
    return changed(standing, sameStat ? { ...start, rereads: (start.rereads ?? 0) + 1 } : start);
  }
  await syncToDisk(part);
  const checked: RemoteClaim = {
    ...start,
    rereads: undefined,
    sha256: got.sha256,
    size: got.size,
    mtimeMs: standing.mtimeMs,
    settlingSince: undefined,
  };
  await claims.update(checked);
  await onFileSystem(
    `the download of ${shownName(start.name)}, renamed into processing/`,
    session.signal,
    () => rename(part, local),
  );
  await syncToDisk(deps.folder.processing);
  const done = { ...checked, step: "downloaded" as const };
  await claims.update(done);
  return { kind: "taken", claim: done, standing };
}

/** Why a file whose listing changed at every poll of a pass is left: said once the pass waited for it. */
export const STILL_WRITTEN =
  "it is still being written: its size or time changed from poll to poll, or it was first seen at the " +
  "last; it is taken once settled";

/** Why a listed file polled through the pass's wait is left: still being written, or without its done-marker. */
export function unsettledWhy(candidate: RemoteCandidate, source: RemoteSource): string {
  return candidate.readiness === "unmarked"
    ? `it waits for its done-marker ${candidate.entry.listed}${source.doneMarker ?? ""} (missing, or older than ` +
        "the file); it is taken once that is there"
    : STILL_WRITTEN;
}

/** Why a file that went away from where it was listed once its download began is not taken. */
const GONE_WHILE_DOWNLOADED =
  "it went away from the server while it was being downloaded; nothing of it is taken";

/** Why a file moved to the server's processing/ and gone from there since is not taken. */
const VANISHED =
  "it went away from the server's processing/ after it was moved there to be taken (removed or renamed " +
  "on the server); nothing of it is kept or sent; ask the server's operator, and drop it again to have it taken";

/**
 * Why a file listed is not taken (as `left`): gone when asked for, or other than its listing said. Said
 * only if the pass's last poll still finds it so (remote-pull.ts, pullSettled).
 */
export function untaken(
  listed: { size: number; mtimeMs: number },
  seen: { size: number; mtimeMs: number } | undefined,
): string {
  if (seen === undefined)
    return (
      "it was listed, but was gone when asked for (removed or renamed since); named at every pass, ask the " +
      "server's operator why the listing shows a file the server does not serve"
    );
  const at = (s: { size: number; mtimeMs: number }) =>
    `${s.size} bytes, ${new Date(s.mtimeMs).toISOString()}`;
  return (
    `its size or modification time changed between the listing and a later look (listed ${at(listed)}; ` +
    `then ${at(seen)}): still being written, it is taken once settled; named at every pass, ask the ` +
    "server's operator why its listing and stat disagree"
  );
}

/**
 * Waits for a copy of ours to settle: noted when its size or time changed (or, `reread`, its bytes with
 * them unchanged), taken once SETTLE_MS passed.
 */
async function settle(
  claims: RemoteClaims,
  claim: RemoteClaim,
  seen: { readonly size: number; readonly mtimeMs: number },
  reread: boolean,
): Promise<Take> {
  if (
    reread ||
    claim.settlingSince === undefined ||
    seen.size !== claim.size ||
    seen.mtimeMs !== claim.mtimeMs
  )
    await claims.update({ ...claim, size: seen.size, mtimeMs: seen.mtimeMs, settlingSince: Date.now() });
  return { kind: "settling" };
}
