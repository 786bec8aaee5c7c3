import { describe, expect, it } from "vitest";
import { newBatchId } from "../../../src/ledger/batch-id.js";
import type { BatchMeta } from "../../../src/ledger/batch-store.js";
import { batchPage } from "../../../src/ops/console/batch-page.js";
import { queuePage } from "../../../src/ops/console/queue-page.js";
import { STYLESHEET } from "../../../src/ops/console/stylesheet.js";
import { segment } from "../../support/file-names.js";

/** Each table's header cells and its first body row's cells, as `class` attributes (tags kept in order). */
function tables(page: string): { head: string[]; body: string[] }[] {
  return [...page.matchAll(/<table[\s\S]*?<\/table>/g)].map(([table]) => {
    const classes = (part: string, tag: string) =>
      [...part.matchAll(new RegExp(`<${tag}(?=[\\s>])(?: class="([^"]*)")?[^>]*>`, "g"))].map(
        (m) => m[1] ?? "",
      );
    const head = /<thead>[\s\S]*?<\/thead>/.exec(table)?.[0] ?? "";
    const row = /<tbody>\s*<tr>[\s\S]*?<\/tr>/.exec(table)?.[0] ?? "";
    return { head: classes(head, "th"), body: classes(row, "td") };
  });
}

/** For each table, whether every column of numbers has its header set as numbers are (right-aligned). */
function misaligned(page: string): string[] {
  return tables(page).flatMap(({ head, body }, t) =>
    body.flatMap((cell, i) =>
      cell.split(" ").includes("num") && !(head[i] ?? "").split(" ").includes("num")
        ? [`table ${t + 1}, column ${i + 1}`]
        : [],
    ),
  );
}

const id = newBatchId(new Date("2026-11-20T01:00:00Z"));
const meta: BatchMeta = {
  id,
  file: segment("night.csv"),
  format: "csv",
  path: "/nowhere",
  state: "reported",
  host: "test",
  created_at: Date.UTC(2026, 10, 20, 1),
  rows: 1,
  counts: JSON.stringify({ succeeded: 1 }),
};

describe("the console's tables and ids", () => {
  it("when the queue page shows job counts and SFTP sources, then each column of numbers has its header over the numbers", () => {
    const page = queuePage({
      queue: { counts: { waiting: 12, delayed: 0, active: 3, paused: 0, failed: 1 }, isPaused: false },
      coolDownMs: 0,
      apiKeyRefusal: undefined,
      sendRate: undefined,
      sftpSources: new Map([["acme", { waiting: 2, claimed: 5, reportsPending: 1, failures: 0 }]]),
    }).toString();
    expect(tables(page)).toHaveLength(2);
    expect(misaligned(page)).toEqual([]);
  });

  it("when a batch page lists rows, then its numbers sit under their headers and ids are kept on one line, never broken inside", () => {
    const key = "6f1c2a9e-4b7d-5e3f-9a1b-2c3d4e5f6a7b";
    const page = batchPage({
      meta,
      page: {
        rows: [
          {
            line: 2,
            external_id: "RE-2026-11-0003-Ä",
            idempotency_key: key,
            status: "succeeded",
            http_status: "201",
            correlation_id: "c-1",
            error: "",
          },
        ],
        source: "report",
      },
      after: 0,
      viewer: { writable: false, signedIn: false },
    }).toString();
    expect(misaligned(page)).toEqual([]);
    for (const shown of [id, key]) expect(page).toMatch(new RegExp(`class="[^"]*\\bid\\b[^"]*">${shown}<`));
    expect(STYLESHEET).toMatch(/\.id \{ white-space: nowrap; \}/);
    expect(STYLESHEET).not.toMatch(/break-all/);
  });
});
