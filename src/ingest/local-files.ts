import type { Stats } from "node:fs";
import { access, open, stat } from "node:fs/promises";

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
