import { settleListing, type RemoteCandidate } from "../ingest/sftp/remote-settle.js";
import type { RemoteSource } from "../ingest/sftp/remote-source.js";
import type { OpenSession } from "../ingest/sftp/session.js";

/** One file of an SFTP source and what a pass would do with it now. */
export interface CheckedRemoteFile {
  /** As the server listed it (print it with shownName). */
  readonly name: string;
  readonly size: number;
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
 * SETTLE_MS apart and says which files a pass would take and why the others are left. Nothing is taken
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
    return second.candidates.map((c) => ({
      name: c.entry.listed,
      size: c.entry.size,
      take: c.readiness === "settled",
      why: "why" in c ? c.why : WHY[c.readiness],
    }));
  } finally {
    await session.close();
  }
}
