import { join } from "node:path";
import { settleListing, type RemoteCandidate } from "../ingest/sftp/remote-settle.js";
import type { RemoteSource } from "../ingest/sftp/remote-source.js";
import type { OpenSession } from "../ingest/sftp/session.js";
import { untaken } from "./remote-take.js";

/** One file of an SFTP source and what a pass would do with it now. */
export interface CheckedRemoteFile {
  /** As the server listed it (print it with shownName). */
  readonly name: string;
  /** As listed; null when the listing left it out (such a file is left, as a pass leaves and names it). */
  readonly size: number | null;
  readonly take: boolean;
  readonly why: string;
}

const WHY: Record<RemoteCandidate["readiness"], string> = {
  settled: "settled: unchanged across two polls, or marked done",
  writing: "still being written: its size or time changed between two polls SETTLE_MS apart",
  unmarked: "waits for its done-marker",
  ignored: "",
  refused: "",
};

/**
 * `check --source`: connects as a pass would (the host key pinned, the login), lists the folder twice
 * SETTLE_MS apart, asks for each settled file as a pass does before taking it, and says which files a
 * pass would take and why the others are left. Nothing is taken
 * and nothing is written, in Redis or on the server; the errors of openSession are thrown as they are.
 */
export async function checkRemoteSource(
  source: RemoteSource,
  openSession: OpenSession,
  settleMs: number,
): Promise<CheckedRemoteFile[]> {
  const session = await openSession(source);
  try {
    const first = settleListing(source, await session.list(source.path), new Map(), settleMs, Date.now());
    if (source.doneMarker === undefined) await new Promise((r) => setTimeout(r, settleMs));
    const seen = new Map([...first.seen].map(([name, s]) => [name, { ...s, at: s.at - settleMs }]));
    const second = settleListing(source, await session.list(source.path), seen, settleMs, Date.now());
    const checked: CheckedRemoteFile[] = [];
    for (const c of second.candidates) {
      const file = { name: c.entry.listed, size: c.entry.size ?? null };
      if (c.readiness !== "settled") {
        checked.push({ ...file, take: false, why: "why" in c ? c.why : WHY[c.readiness] });
        continue;
      }
      // As a pass asks before it takes a file (remote-take.ts): gone, or other than listed, it is left.
      const now = await session.stat(join(source.path, c.name));
      const same = now !== undefined && now.size === c.entry.size && now.mtimeMs === c.entry.mtimeMs;
      checked.push({ ...file, take: same, why: same ? WHY.settled : untaken(c.entry, now) });
    }
    return checked;
  } finally {
    await session.close();
  }
}
