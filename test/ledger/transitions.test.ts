import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { TRANSITIONS, type KeyStatus } from "../../src/ledger/statuses.js";
import { testPrefix, testRedis } from "../support/redis.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

interface Subject {
  readonly ledger: RedisLedger;
  readonly key: string;
  readonly externalId: string;
}

/** A key brought to `status` through the ledger's own verbs, on a fresh prefix. */
async function keyIn(status: KeyStatus | null): Promise<Subject> {
  const ledger = new RedisLedger(redis, testPrefix());
  const subject = { ledger, key: randomUUID(), externalId: `INV-${randomUUID()}` };
  if (status === null) return subject;
  await ledger.registerRows("b1", [{ line: 2, key: subject.key, externalId: subject.externalId }]);
  if (status === "retrying") await ledger.recordRetrying(subject.key, { httpStatus: 503, error: "HTTP 503" });
  if (status === "succeeded") await ledger.recordSucceeded(subject.key, { httpStatus: 201 });
  if (status === "failed" || status === "superseded")
    await ledger.recordFailed(subject.key, { httpStatus: 422, error: "bad", document: "{}" });
  if (status === "superseded") await registerNewerVersion(subject);
  expect(await ledger.statusOf(subject.key)).toBe(status);
  return subject;
}

const registerNewerVersion = (s: Subject) =>
  s.ledger.registerRows("b2", [{ line: 2, key: randomUUID(), externalId: s.externalId }]);

/** What makes each move, by the table's `by` column. */
async function move(s: Subject, from: KeyStatus | null, to: KeyStatus, by: string): Promise<void> {
  if (to === "queued" && by.startsWith("`retry`")) {
    expect(await s.ledger.requeueFailed(s.key)).toBe("requeued");
    // the other way the table names: a re-drop of the same invoice
    const again = await keyIn("failed");
    await again.ledger.registerRows("b3", [{ line: 2, key: again.key, externalId: again.externalId }]);
    expect(await again.ledger.statusOf(again.key)).toBe("queued");
  } else if (to === "queued") {
    // a re-drop of a superseded version is a conflict while the newer one is live; here it has failed
    const newer = (await s.ledger.get(s.key))?.superseded_by;
    if (from === "superseded" && newer !== undefined)
      await s.ledger.recordFailed(newer, { httpStatus: 422, error: "bad" });
    await s.ledger.registerRows("b3", [{ line: 2, key: s.key, externalId: s.externalId }]);
  } else if (to === "superseded") await registerNewerVersion(s);
  else if (to === "retrying") await s.ledger.recordRetrying(s.key, { httpStatus: 503, error: "HTTP 503" });
  else if (to === "succeeded") await s.ledger.recordSucceeded(s.key, { httpStatus: 201 });
  else await s.ledger.recordFailed(s.key, { httpStatus: 422, error: "bad" });
  if (from === null) expect(by).toContain("register");
}

describe("the ledger's transition table", () => {
  it.each(TRANSITIONS.map((t) => [t.from ?? "(no record)", t.to, t]))(
    "when a key in %s gets what the table names, then it is %s",
    async (_from, _to, t) => {
      const s = await keyIn(t.from);
      await move(s, t.from, t.to, t.by);
      expect(await s.ledger.statusOf(s.key)).toBe(t.to);
    },
  );

  it("when a final key gets any other answer, then it does not move, as the table says (nothing else moves)", async () => {
    const succeeded = await keyIn("succeeded");
    await succeeded.ledger.recordFailed(succeeded.key, { httpStatus: 500, error: "late" });
    await succeeded.ledger.recordRetrying(succeeded.key, { error: "late" });
    expect(await succeeded.ledger.requeueFailed(succeeded.key)).toBe("not-failed");
    expect(await succeeded.ledger.statusOf(succeeded.key)).toBe("succeeded");
    const superseded = await keyIn("superseded");
    await superseded.ledger.recordFailed(superseded.key, { httpStatus: 500, error: "late" });
    await superseded.ledger.recordRetrying(superseded.key, { error: "late" });
    expect(await superseded.ledger.statusOf(superseded.key)).toBe("superseded");
    const failed = await keyIn("failed");
    await failed.ledger.recordRetrying(failed.key, { error: "late" });
    expect(await failed.ledger.statusOf(failed.key)).toBe("failed");
  });

  it("when docs/ledger.md shows the table, then it is row for row the table in src/ledger/statuses.ts", async () => {
    const page = await readFile(new URL("../../docs/ledger.md", import.meta.url), "utf8");
    const section = page.slice(
      page.indexOf("## Transitions"),
      page.indexOf("\n## ", page.indexOf("## Transitions") + 1),
    );
    const rows = section
      .split("\n")
      .filter((line) => line.startsWith("| ") && !line.startsWith("| from") && !line.startsWith("| ---"))
      .map((line) =>
        line
          .split("|")
          .slice(1, -1)
          .map((cell) => cell.trim().replace(/^`(.*)`$/, "$1")),
      );
    expect(rows).toEqual(TRANSITIONS.map((t) => [t.from ?? "(no record)", t.to, t.by]));
  });
});
