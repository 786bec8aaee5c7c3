import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, open, readdir, rename, rm, stat, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../log/logger.js";
import { ClaimCopyLostError } from "./errors/claim-copy-lost-error.js";
import { syncToDisk } from "./local-files.js";
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

async function copyInto(folder: DropFolder, source: string, target: string, claimed: string): Promise<void> {
  const temp = join(folder.processing, copyingName(claimed));
  const out = await open(temp, "wx");
  try {
    for await (const chunk of createReadStream(source)) await writeAll(out, chunk as Buffer);
    await out.sync();
  } catch (error) {
    await out.close();
    await rm(temp, { force: true });
    throw error;
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

async function writeAll(out: FileHandle, chunk: Buffer): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await out.write(chunk, offset, chunk.length - offset);
    offset += bytesWritten;
  }
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
