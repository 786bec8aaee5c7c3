import picomatch from "picomatch";
import { isDropName } from "../drop-folder.js";
import type { SeenFile } from "../../ledger/remote-claims.js";
import type { RemoteSource } from "./remote-source.js";
import type { RemoteEntry } from "./session.js";
import { isRefused, type FileName } from "../../names/file-name.js";

/**
 * A remote file and why it is, or is not, taken now: `settled` (unchanged across two polls SETTLE_MS
 * apart, or marked done after its last change), `writing`, `unmarked` (waits for its done-marker);
 * `ignored` (not a drop file, a folder: left as ever) or `refused` (a drop file whose name is refused,
 * a name that is not one path segment at all, or a link or device with a drop file's name: left on the
 * server, and said at every pass).
 */
export type RemoteCandidate =
  | {
      readonly entry: AttributedEntry;
      readonly name: FileName;
      readonly readiness: "settled" | "writing" | "unmarked";
    }
  | { readonly entry: RemoteEntry; readonly readiness: "ignored" | "refused"; readonly why: string };

/** A listed file whose listing gave its size and modification time: whether it settled can be told. */
export type AttributedEntry = RemoteEntry & { readonly size: number; readonly mtimeMs: number };

function attributed(entry: RemoteEntry): entry is AttributedEntry {
  return entry.size !== undefined && entry.mtimeMs !== undefined;
}

const LEFT_ALONE: Readonly<Record<Exclude<RemoteEntry["type"], "file">, string>> = {
  folder: "a folder: folders are not looked into",
  link: "a symbolic link: links are not followed (a server-side link may point anywhere)",
  other: "not a regular file",
};

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
): { candidates: RemoteCandidate[]; seen: Map<FileName, SeenFile> } {
  const matches = source.match.length === 0 ? () => true : picomatch([...source.match], { dot: true });
  const matchesIgnoringCase =
    source.match.length === 0 ? () => true : picomatch([...source.match], { dot: true, nocase: true });
  const byName = new Map(entries.map((e) => [e.listed, e]));
  const marker = source.doneMarker;
  const candidates: RemoteCandidate[] = [];
  const next = new Map<FileName, SeenFile>();
  const sorted = [...entries].sort(
    (a, b) => (a.mtimeMs ?? 0) - (b.mtimeMs ?? 0) || a.listed.localeCompare(b.listed),
  );
  for (const entry of sorted) {
    const listed = entry.listed;
    if (entry.type !== "file") {
      // A folder, a link or a device named as a drop file the source's globs take: the partner meant it
      // to be taken, so it is said at every pass, as the drop folder says of one, never passed over.
      const meant = isDropName(listed) && matches(listed);
      candidates.push({
        entry,
        readiness: meant ? "refused" : "ignored",
        why: meant ? `it is ${LEFT_ALONE[entry.type]}; put the file itself there` : LEFT_ALONE[entry.type],
      });
      continue;
    }
    if (marker !== undefined && listed.endsWith(marker) && byName.has(listed.slice(0, -marker.length)))
      continue;
    const name = entry.name;
    const wanted = isDropName(listed) && matches(listed);
    // A name that would leave its folder is hostile whatever it ends with: always said.
    if (isRefused(name) && (wanted || name.problem === "not-one-segment")) {
      candidates.push({ entry, readiness: "refused", why: `its name ${name.why}` });
      continue;
    }
    const almost = nearMiss(listed, matches, matchesIgnoringCase);
    if (almost !== undefined) {
      candidates.push({ entry, readiness: "refused", why: almost });
      continue;
    }
    if (!isDropName(listed)) {
      candidates.push({
        entry,
        readiness: "ignored",
        why: "not a drop file name (hidden, an upload in progress, or not .csv/.json/.ndjson)",
      });
      continue;
    }
    // (a refused name gets here only when no glob matches it)
    if (!matches(listed) || isRefused(name)) {
      candidates.push({ entry, readiness: "ignored", why: `matches none of ${source.match.join(", ")}` });
      continue;
    }
    // SFTP v3 lets a listing leave attributes out: unchanged or not cannot then be told, so such a file
    // would wait unnamed for ever.
    if (!attributed(entry)) {
      candidates.push({
        entry,
        readiness: "refused",
        why:
          "the server lists it without its size or modification time, so whether it has settled cannot be " +
          "told; ask the partner to have the server send them (or to use a done_marker)",
      });
      continue;
    }
    if (marker !== undefined) {
      const done = byName.get(`${listed}${marker}`);
      candidates.push({
        entry,
        name,
        readiness: (done?.mtimeMs ?? -Infinity) >= entry.mtimeMs ? "settled" : "unmarked",
      });
      continue;
    }
    const before = seen.get(name);
    if (before !== undefined && before.size === entry.size && before.mtimeMs === entry.mtimeMs) {
      next.set(name, before);
      candidates.push({ entry, name, readiness: now - before.at >= settleMs ? "settled" : "writing" });
    } else {
      next.set(name, { size: entry.size, mtimeMs: entry.mtimeMs, at: now });
      candidates.push({ entry, name, readiness: "writing" });
    }
  }
  return { candidates, seen: next };
}

/**
 * Why a name the source's globs almost take is not taken, said at every pass: a drop file's name but
 * for a trailing space or dot (which a Windows share hides), or matched only when case is ignored.
 */
function nearMiss(
  listed: string,
  matches: (name: string) => boolean,
  matchesIgnoringCase: (name: string) => boolean,
): string | undefined {
  const meant = listed.replace(/[ .]+$/, "");
  if (meant !== listed && isDropName(meant) && matches(meant))
    return `its name ${JSON.stringify(listed)} ends in a space or a dot after the extension; rename it to ${meant}`;
  if (isDropName(listed) && !matches(listed) && matchesIgnoringCase(listed))
    return "its name matches the source's globs only when case is ignored; rename it, or add a glob for it";
  return undefined;
}
