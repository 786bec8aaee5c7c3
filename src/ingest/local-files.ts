import type { Stats } from "node:fs";
import { access, open, stat, type FileHandle } from "node:fs/promises";

/** Whether `path` exists on this machine (and this process may see it). */
export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** The first of `paths` that exists, in the order given; undefined when none does. */
export async function firstExisting(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) if (await exists(path)) return path;
  return undefined;
}

/** The first of `paths` that exists, with its `stat`: one call for each path tried, not two. */
export async function firstExistingStat(
  paths: readonly string[],
): Promise<{ readonly path: string; readonly stats: Stats } | undefined> {
  for (const path of paths) {
    try {
      return { path, stats: await stat(path) };
    } catch {
      continue; // as `exists`: whatever keeps it from being seen, it is not there for this process
    }
  }
  return undefined;
}

/**
 * Flushes a file's bytes, or a directory's entries, to disk: a rename in a directory not synced may be
 * undone by a power cut after its source is gone.
 */
export async function syncToDisk(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes all of `buffer` at `position` (at the file's offset when undefined). A write may take fewer bytes
 * than it was given (a file system that fills up takes what room is left, and fails only the next write):
 * the rest is written again until all is there or a write fails (ENOSPC), never dropped in silence.
 */
export async function writeWhole(out: FileHandle, buffer: Uint8Array, position?: number): Promise<void> {
  for (let written = 0; written < buffer.length;) {
    const at = position === undefined ? null : position + written;
    const { bytesWritten } = await out.write(buffer, written, buffer.length - written, at);
    // POSIX: a write of a regular file that takes no byte and says no error does not happen; were it
    // to, writing again would never end.
    if (bytesWritten === 0)
      throw Object.assign(new Error("a write took no byte"), { code: "EIO", syscall: "write" });
    written += bytesWritten;
  }
}
