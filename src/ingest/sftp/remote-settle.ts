import picomatch from "picomatch";
import { isDropName } from "../drop-folder.js";
import type { SeenFile } from "../../ledger/remote-claims.js";
import type { RemoteSource } from "./remote-source.js";
import type { RemoteEntry } from "./session.js";

/** A remote file and why it is, or is not, taken now. */
export interface RemoteCandidate {
  readonly entry: RemoteEntry;
  /** `settled`: unchanged across two polls SETTLE_MS apart, or marked done after its last change. */
  readonly readiness: "settled" | "writing" | "unmarked" | "ignored";
  /** For `ignored`: why (`check --source` says it). */
  readonly why?: string;
}

/**
 * Which files of a listing are ready (pure): a drop name (not hidden, not `.part`/`.tmp`, a known
 * format) matching the source's globs, either with a done-marker newer than it (`done_marker`) or with
 * the same size and mtime as a poll at least `settleMs` earlier. Returns the candidates and what this
 * poll saw, to keep for the next (only unchanged files keep their first sighting).
 */
export function settleListing(
  source: RemoteSource,
  entries: readonly RemoteEntry[],
  seen: ReadonlyMap<string, SeenFile>,
  settleMs: number,
  now: number,
): { candidates: RemoteCandidate[]; seen: Map<string, SeenFile> } {
  const matches = source.match.length === 0 ? () => true : picomatch([...source.match], { dot: true });
  const byName = new Map(entries.map((e) => [e.name, e]));
  const marker = source.doneMarker;
  const candidates: RemoteCandidate[] = [];
  const next = new Map<string, SeenFile>();
  for (const entry of [...entries].sort((a, b) => a.mtimeMs - b.mtimeMs || a.name.localeCompare(b.name))) {
    if (!entry.isFile) continue;
    if (
      marker !== undefined &&
      entry.name.endsWith(marker) &&
      byName.has(entry.name.slice(0, -marker.length))
    )
      continue;
    if (!isDropName(entry.name)) {
      candidates.push({
        entry,
        readiness: "ignored",
        why: "not a drop file name (hidden, an upload in progress, or not .csv/.json/.ndjson)",
      });
      continue;
    }
    if (!matches(entry.name)) {
      candidates.push({ entry, readiness: "ignored", why: `matches none of ${source.match.join(", ")}` });
      continue;
    }
    if (marker !== undefined) {
      const done = byName.get(`${entry.name}${marker}`);
      candidates.push({
        entry,
        readiness: done !== undefined && done.mtimeMs >= entry.mtimeMs ? "settled" : "unmarked",
      });
      continue;
    }
    const before = seen.get(entry.name);
    if (before !== undefined && before.size === entry.size && before.mtimeMs === entry.mtimeMs) {
      next.set(entry.name, before);
      candidates.push({ entry, readiness: now - before.at >= settleMs ? "settled" : "writing" });
    } else {
      next.set(entry.name, { size: entry.size, mtimeMs: entry.mtimeMs, at: now });
      candidates.push({ entry, readiness: "writing" });
    }
  }
  return { candidates, seen: next };
}
