import { stat } from "node:fs/promises";
import { join } from "node:path";
import { loadProfiles } from "./load-profiles.js";
import type { SourceProfile } from "./source-profile.js";

/** Where the source profiles come from, and what was read there. */
export interface LoadedSources {
  /** The file read; undefined when there is none (SOURCES_FILE unset, no DROP_DIR/sources.yaml). */
  readonly file: string | undefined;
  readonly profiles: readonly SourceProfile[];
}

/** The name looked for in the drop folder when SOURCES_FILE is not set. */
export const DEFAULT_SOURCES_NAME = "sources.yaml";

/**
 * The source profiles file: SOURCES_FILE when set (its absence is then an error, raised when it is
 * read), else `sources.yaml` in the drop folder if there is one there, else none.
 */
export async function sourcesFilePath(
  sourcesFile: string | undefined,
  dropDir: string,
): Promise<string | undefined> {
  if (sourcesFile !== undefined) return sourcesFile;
  const fallback = join(dropDir, DEFAULT_SOURCES_NAME);
  try {
    await stat(fallback);
    return fallback;
  } catch {
    return undefined;
  }
}

/**
 * Finds and loads the source profiles, as every command that reads drop files does once before it
 * claims anything (and `start` again before each scan). Throws the errors of `loadProfiles`.
 */
export async function loadSources(settings: {
  readonly sourcesFile: string | undefined;
  readonly dropDir: string;
}): Promise<LoadedSources> {
  const file = await sourcesFilePath(settings.sourcesFile, settings.dropDir);
  return { file, profiles: file === undefined ? [] : await loadProfiles(file) };
}
