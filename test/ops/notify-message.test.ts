import { describe, expect, it } from "vitest";
import {
  apiKeyRefusedNotice,
  batchUrl,
  runNotice,
  stuckBatchNotice,
  type BatchFacts,
  type NoticeContext,
} from "../../src/ops/notify/message.js";

const ctx: NoticeContext = {
  queuePrefix: "invoice-relay",
  consoleUrl: "https://relay.example.com/",
  now: new Date("2026-10-16T02:00:00Z"),
};

const batch = (over: Partial<BatchFacts> = {}): BatchFacts => ({
  file: "eu.csv",
  id: "20261016T020000Z-abc123",
  state: "reported",
  counts: { succeeded: 3, duplicate: 0, rejected: 2, failed: 1, conflict: 0, superseded: 0, pending: 0 },
  firstErrors: [
    { line: 4, external_id: "ACME-0003", error: "currency: not an ISO 4217 code" },
    { line: 5, external_id: "ACME-0004", error: "archive_policy: retention must be positive" },
  ],
  ...over,
});

describe("alert messages", () => {
  it("when a run ends with exit 2, then the text has a title line, one line per file with its counts, its first errors and its link", () => {
    const notice = runNotice(2, [batch()], "Some rows were rejected.", ctx);
    expect(notice.event).toBe("run_finished_with_problems");
    expect(notice.exit_code).toBe(2);
    expect(notice.text.split("\n")).toEqual([
      "invoice-relay run finished with problems (exit 2) [invoice-relay]",
      "Some rows were rejected.",
      "• `eu.csv` (batch `20261016T020000Z-abc123`): 3 succeeded, 2 rejected, 1 failed",
      "    line 4 (ACME-0003): currency: not an ISO 4217 code",
      "    line 5 (ACME-0004): archive_policy: retention must be positive",
      "    https://relay.example.com/batches/20261016T020000Z-abc123",
    ]);
    expect(notice.batches).toEqual([
      {
        file: "eu.csv",
        batch: "20261016T020000Z-abc123",
        state: "reported",
        counts: batch().counts,
        first_errors: [
          { line: 4, external_id: "ACME-0003", error: "currency: not an ISO 4217 code" },
          { line: 5, external_id: "ACME-0004", error: "archive_policy: retention must be positive" },
        ],
        url: "https://relay.example.com/batches/20261016T020000Z-abc123",
      },
    ]);
  });

  it("when a file name holds a bidi control, then the text has none: it cannot reorder what follows", () => {
    const notice = runNotice(2, [batch({ file: "evil\u202Evsc.exe.csv", firstErrors: [] })], undefined, ctx);
    expect(notice.text).not.toContain("\u202E");
    expect(notice.text).toContain("`evil vsc.exe.csv`");
  });

  it("when a file name holds line breaks, markup and backticks, then it stays on its line, escaped", () => {
    const notice = runNotice(2, [batch({ file: "a\nb<@here>&`x`*_.csv", firstErrors: [] })], undefined, ctx);
    const lines = notice.text.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe(
      "• `a b&lt;@here&gt;&amp;'x'*_.csv` (batch `20261016T020000Z-abc123`): 3 succeeded, 2 rejected, 1 failed",
    );
    // The JSON keeps the name as it is: a program reading it gets the real file name.
    expect(notice.batches[0]?.file).toBe("a\nb<@here>&`x`*_.csv");
  });

  it("when a batch has many errors, then three are shown and each is bounded", () => {
    const many = Array.from({ length: 10 }, (_, i) => ({
      line: i + 2,
      external_id: `X-${i}`,
      error: "e".repeat(1000),
    }));
    const notice = runNotice(2, [batch({ firstErrors: many })], undefined, ctx);
    const shown = notice.batches[0]?.first_errors ?? [];
    expect(shown.map((e) => e.line)).toEqual([2, 3, 4]);
    expect(shown.map((e) => e.error.length)).toEqual([300, 300, 300]);
    expect(notice.text.split("\n").filter((l) => l.startsWith("    line "))).toHaveLength(3);
  });

  it("when CONSOLE_URL is not set, then no link is given", () => {
    const notice = runNotice(1, [batch()], "Deadline passed.", { ...ctx, consoleUrl: undefined });
    expect(notice.event).toBe("run_could_not_finish");
    expect(notice.batches[0]?.url).toBeNull();
    expect(notice.text).not.toContain("http");
  });

  it("when CONSOLE_URL has a path without a trailing slash, then the link keeps the path", () => {
    expect(batchUrl("https://example.com/relay", "b 1")).toBe("https://example.com/relay/batches/b%201");
  });

  it("when CONSOLE_URL carries a credential, then the alert's link carries none", () => {
    expect(batchUrl("https://ops:c0nsole-pw@example.com/relay/?token=t0ken-xyz", "b1")).toBe(
      "https://ops:***@example.com/relay/batches/b1",
    );
  });

  it("when the API key is refused, then the event says so and the text says what to do", () => {
    const notice = apiKeyRefusedNotice(401, "invalid bearer key", ctx, "INVOICE_API_KEY");
    expect(notice.event).toBe("api_key_refused");
    expect(notice.exit_code).toBeNull();
    expect(notice.text).toContain("fix INVOICE_API_KEY");
    expect(notice.batches).toEqual([]);
  });

  it("when a batch is stuck, then it names the batch, its age and the setting", () => {
    const notice = stuckBatchNotice(
      batch({ state: "ingested", counts: { pending: 7 }, firstErrors: [] }),
      7_260_000,
      3_600_000,
      ctx,
    );
    expect(notice.event).toBe("batch_stuck");
    expect(notice.reason).toContain("not finished 121m after its drop (NOTIFY_STUCK_AFTER=1h)");
    expect(notice.text).toContain("7 pending");
  });
});
