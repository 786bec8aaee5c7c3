import { describe, expect, it } from "vitest";
import { settleListing } from "../../../src/ingest/sftp/remote-settle.js";
import type { RemoteSource } from "../../../src/ingest/sftp/remote-source.js";
import type { RemoteEntry } from "../../../src/ingest/sftp/session.js";
import { admitName } from "../../../src/names/file-name.js";

const source: RemoteSource = {
  name: "acme",
  host: "127.0.0.1",
  port: 22,
  user: "relay",
  path: "/outbox",
  auth: { kind: "password-env", passwordEnv: "ACME_PASSWORD" },
  hostKey: { kind: "fingerprint", fingerprint: "SHA256:x" },
  match: ["invoices-*.csv"],
  afterClaim: "move",
  reports: false,
};

function entry(listed: string, type: RemoteEntry["type"] = "file"): RemoteEntry {
  return { listed, name: admitName(listed), size: 10, mtimeMs: 1_000, type };
}

/** What each listed name came to, and why when it is not taken. */
function verdicts(entries: readonly RemoteEntry[]): Record<string, string> {
  const { candidates } = settleListing(source, entries, new Map(), 0, 10_000);
  return Object.fromEntries(
    candidates.map((c) => [c.entry.listed, "why" in c ? `${c.readiness}: ${c.why}` : c.readiness]),
  );
}

describe("SFTP names the source's globs almost take", () => {
  it("when a name matches only when case is ignored, ends in a space or a dot, or is a folder's, then it is refused (named at every pass) with what to do, and the exact match is taken", () => {
    expect(
      verdicts([
        entry("invoices-1.csv"),
        entry("invoices-2.CSV"),
        entry("INVOICES-3.csv"),
        entry("invoices-4.csv "),
        entry("invoices-5.csv."),
        entry("invoices-6.csv", "folder"),
        entry("notes.txt"),
        entry("other.csv"),
      ]),
    ).toEqual({
      "invoices-1.csv": "writing",
      "invoices-2.CSV":
        "refused: its name matches the source's globs only when case is ignored; rename it, or add a glob for it",
      "INVOICES-3.csv":
        "refused: its name matches the source's globs only when case is ignored; rename it, or add a glob for it",
      "invoices-4.csv ":
        'refused: its name "invoices-4.csv " ends in a space or a dot after the extension; rename it to invoices-4.csv',
      "invoices-5.csv.":
        'refused: its name "invoices-5.csv." ends in a space or a dot after the extension; rename it to invoices-5.csv',
      "invoices-6.csv": "refused: it is a folder: folders are not looked into; put the file itself there",
      "notes.txt": "ignored: not a drop file name (hidden, an upload in progress, or not .csv/.json/.ndjson)",
      "other.csv": "ignored: matches none of invoices-*.csv",
    });
  });

  it("when the listing leaves out a file's size or modification time (SFTP v3 allows it), then it is refused, named with why, never waited for in silence", () => {
    const bare = (listed: string, size: number | undefined, mtimeMs: number | undefined): RemoteEntry => ({
      ...entry(listed),
      size,
      mtimeMs,
    });
    const why =
      "refused: the server lists it without its size or modification time, so whether it has settled cannot be told; " +
      "ask the partner to have the server send them (or to use a done_marker)";
    expect(
      verdicts([bare("invoices-1.csv", undefined, 1_000), bare("invoices-2.csv", 10, undefined)]),
    ).toEqual({ "invoices-1.csv": why, "invoices-2.csv": why });
  });
});
