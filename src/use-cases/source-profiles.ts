import type { Config } from "../config/load.js";
import { loadSources } from "../ingest/profiles/sources-file.js";
import type { SourceProfile } from "../ingest/profiles/source-profile.js";
import type { Logger } from "../log/logger.js";

/**
 * The source profiles of this deployment (SOURCES_FILE, else the drop folder's sources.yaml), loaded as
 * every command that reads drop files does before it claims anything: a broken file throws its
 * SourceProfileError, SourcesSyntaxError or SourcesFileMissingError, and nothing is claimed.
 */
export async function loadSourceProfiles(
  config: Pick<Config, "sourcesFile" | "dropDir">,
  logger: Logger,
): Promise<readonly SourceProfile[]> {
  const { file, profiles } = await loadSources(config);
  if (file !== undefined)
    logger.debug({ sources: file, profiles: profiles.map((p) => p.name) }, "source profiles loaded");
  return profiles;
}
