import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, open, readdir, rename, rm, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../log/logger.js";
import { fileSystemCode } from "../errors/file-system-fixes.js";
import { ClaimCopyLostError } from "./errors/claim-copy-lost-error.js";
import { TakeWriteError } from "./errors/take-write-error.js";
import { syncToDisk, writeWhole } from "./local-files.js";
import type { FileName } from "../names/file-name.js";
import {
  claimedName,
  newBatchId,
  removeDoneMarker,
  type ClaimedFile,
  type DropFolder,
} from "./drop-folder.js";

/**
 * Test hook, never a setting: `1` makes `ingest FILE` copy the file into processing/ as it does from
 * another file system, so the tests can interrupt that copy without a second file system. The copy
 * itself is the one every cross-file-system claim runs.
 */
export const FORCE_COPY_TEST_HOOK = "INVOICE_RELAY_TEST_FORCE_COPY";

/**
 * A copy in progress no file has been written to for this long is taken for one whose copier died and is
 * removed. A live copier that stalls that long loses its copy, finds it gone when it renames it and
 * fails without claiming anything (its source untouched), which is safe.
 */
export const STALE_COPY_MS = 60 * 60 * 1000;

const COPYING = /^\.(.+)\.copying-[0-9a-f]{8}$/s;

/**
 * Where a copy is written before it becomes the claimed file. A dot-name in processing/ is never resumed
 * as a claimed file, so a copy cut short by a crash is never ingested as if whole.
 */
function copyingName(claimed: string): string {
  return `.${claimed}.copying-${randomBytes(4).toString("hex")}`;
}

/**
 * Claims a file named on the command line: renamed into processing/ when it is a regular file on the
 * drop folder's file system, else (another file system, a named pipe) copied under a temporary name, flushed to disk, renamed to its claimed name (atomic), the
 * folder flushed, and only then the source removed. A crash at any point leaves either no claimed file
 * (the source still in place) or a complete one.
 */
export async function claimGiven(
  folder: DropFolder,
  source: string,
  name: FileName,
  options: { readonly forceCopy?: boolean } = {},
): Promise<ClaimedFile> {
  const batchId = newBatchId();
  const target = join(folder.processing, claimedName(batchId, name));
  // A named pipe (or a device) holds nothing to rename: moved into processing/, it was read as an empty
  // file, and what was written to it lost. Its content is copied instead, to the end of what is written.
  const regular = (await stat(source)).isFile();
  if (options.forceCopy !== true && regular) {
    try {
      await rename(source, target);
      await removeDoneMarker(folder, source);
      return { batchId, name, path: target };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    }
  }
  await copyInto(folder, source, target, claimedName(batchId, name));
  // A pipe of the shell's (`<(zcat …)`, /dev/fd/63) cannot be removed, and holds nothing more once read.
  await unlink(source).catch((error: unknown) => {
    if (regular) throw error;
  });
  await removeDoneMarker(folder, source);
  return { batchId, name, path: target };
}

/**
 * Copies `source` into processing/ under a temporary name. This machine's file system refusing the copy
 * (full, read-only) is a TakeWriteError naming the file, processing/ and the fix; nothing of it is kept.
 */
async function copyInto(folder: DropFolder, source: string, target: string, claimed: string): Promise<void> {
  const temp = join(folder.processing, copyingName(claimed));
  const refused = (error: unknown): unknown => {
    const errno = fileSystemCode(error);
    // Reading the source fails with its own path: that is the source's problem, said as it is.
    if (errno === undefined || (error as NodeJS.ErrnoException).path === source) return error;
    return new TakeWriteError(
      source,
      folder.processing,
      errno,
      "it is still in place: ingest it again then",
      {
        cause: error,
      },
    );
  };
  const out = await open(temp, "wx").catch((error: unknown) => {
    throw refused(error);
  });
  try {
    for await (const chunk of createReadStream(source)) await writeWhole(out, chunk as Buffer);
    await out.sync();
  } catch (error) {
    await out.close();
    await rm(temp, { force: true });
    throw refused(error);
  }
  await out.close();
  try {
    await rename(temp, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new ClaimCopyLostError(source, temp);
    throw error;
  }
  // the rename is durable before the source is removed
  await syncToDisk(folder.processing);
}

/**
 * Removes copies into processing/ left by a copier that died (`ingest FILE` killed mid-copy): none has
 * been written to for `STALE_COPY_MS`. A copy still being written is left alone. Returns their names.
 */
export async function removeStaleCopies(
  folder: DropFolder,
  logger: Logger,
  now = Date.now(),
): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await readdir(folder.processing)) {
    const match = COPYING.exec(entry);
    if (match === null) continue;
    const path = join(folder.processing, entry);
    try {
      const info = await lstat(path);
      if (now - info.mtimeMs < STALE_COPY_MS) continue;
      await rm(path, { force: true });
      removed.push(entry);
      logger.warn(
        { copy: entry, bytes: info.size, claimed: match[1] },
        "removed an interrupted copy from processing/ (ingest FILE was stopped mid-copy; its source was " +
          "left in place: ingest it again)",
      );
    } catch {
      continue; // renamed or removed meanwhile
    }
  }
  return removed;
}
