import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { Passes } from "../../../src/ledger/passes.js";
import { RedisLedger } from "../../../src/ledger/redis-ledger.js";
import { recordRateSample } from "../../../src/ledger/send-series.js";
import { columnsOf, niceCeil, passChart, timeTicks } from "../../../src/ops/console/pass-chart.js";
import { consoleApp, reportedBatch, type ConsoleApp } from "./console-app.js";

const apps: ConsoleApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
const HOST = "console.test";
const DAY = 86_400_000;
/** A pass of two minutes, well inside one hour. */
const START = Date.now() - 10 * 60_000;
const END = START + 120_000;

/** The fleet's answers over the pass as the processes write them: 3 seconds accepted, then refused. */
async function series(c: ConsoleApp): Promise<void> {
  const ledger = new RedisLedger(c.redis, c.prefix, undefined, DAY);
  for (const [offset, answers] of [
    [10_000, ["2xx", "2xx", "2xx"]],
    [11_000, ["2xx", "4xx"]],
    [60_000, ["5xx"]],
  ] as const)
    for (const answerClass of answers) {
      const retry = answerClass === "4xx" ? ("throttled" as const) : undefined;
      const attempt = {
        number: 1,
        startedAt: START + offset,
        durationMs: 0,
        counted: { answerClass, retry },
      };
      await ledger.recordRetrying(randomUUID(), { attempt });
    }
  await recordRateSample(c.redis, c.prefix, START + 11_000, { learned: 40, sent: 3 }, DAY);
}

describe("the console's passes", () => {
  it("when passes are recorded, then /passes lists them newest first with what each came to, and a pass's page draws its chart and links its files", async () => {
    const c = await consoleApp(undefined);
    apps.push(c);
    const batch = await reportedBatch(c.batches, "<b>night<b>&amp;.csv", { succeeded: 4, rejected: 1 });
    const passes = new Passes(c.redis, c.prefix);
    const ended = {
      id: "20261121T020000Z-0a0b0c",
      kind: "run" as const,
      startedAt: START,
      endedAt: END,
      batches: [batch],
      invoices: { succeeded: 4, rejected: 1 },
      refused: 1,
      busiestSecond: 3,
      learnedRate: 40,
      exitCode: 2,
    };
    await passes.write(ended, DAY);
    await passes.write(
      { id: "20261121T030000Z-0d0e0f", kind: "scan", startedAt: END + 1000, batches: [], invoices: {} },
      DAY,
    );
    await series(c);

    const list = await c.app.inject({ url: "/passes", headers: { host: HOST } });
    expect(list.statusCode).toBe(200);
    expect(list.body.indexOf("20261121T030000Z-0d0e0f")).toBeLessThan(list.body.indexOf(ended.id));
    expect(list.body).toContain("2 finished with problems");
    expect(list.body).toContain("scan of start");
    expect(list.body).toMatch(/status-running/);
    expect(list.body).toMatch(/Busiest second[\s\S]*>3 requests</);

    const page = await c.app.inject({ url: `/passes/${ended.id}`, headers: { host: HOST } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<svg viewBox="0 0 900 260" role="img"/);
    for (const drawn of ["chart-accepted", "chart-refused", "chart-other", "chart-learned"])
      expect(page.body, drawn).toContain(`class="${drawn}"`);
    expect(page.body).toContain("4 accepted, 1 refused for capacity, 1 other");
    expect(page.body).toContain("learned rate at the end 40/s");
    expect(page.body).toContain("3 requests answered in one whole second, every process together");
    expect(page.body).toContain(`href="/batches/${batch}"`);
    expect(page.body).toContain("&lt;b&gt;night&lt;b&gt;&amp;amp;.csv");
    expect(page.body).not.toMatch(/<script/i);
  });

  it("when a pass left files where they are, then its page names each with why, escaped", async () => {
    const c = await consoleApp(undefined);
    apps.push(c);
    const id = "20261121T040000Z-0a0b0d";
    await new Passes(c.redis, c.prefix).write(
      {
        id,
        kind: "run",
        startedAt: START,
        endedAt: END,
        batches: [],
        invoices: {},
        exitCode: 2,
        left: [
          {
            where: "drop folder",
            shown: "<i>late</i>.csv",
            why: "left in the drop folder: it is still being written (changed 0.2 s ago; SETTLE_MS=2000 ms)",
          },
        ],
        leftOut: 3,
      },
      DAY,
    );
    const page = await c.app.inject({ url: `/passes/${id}`, headers: { host: HOST } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("Files left where they are");
    expect(page.body).toContain("drop folder: &lt;i&gt;late&lt;/i&gt;.csv");
    expect(page.body).toContain("it is still being written (changed 0.2 s ago; SETTLE_MS=2000 ms)");
    expect(page.body).toContain("… and 3 more");
  });

  it("when a file of a pass has a name holding a line break or a bidi control, then its pass page shows the name escaped, as every other page does", async () => {
    const c = await consoleApp(undefined);
    apps.push(c);
    const batch = await reportedBatch(c.batches, "invoice\u202Evsc.exe\nfake.csv", { succeeded: 1 });
    const pass = { id: "20261121T040000Z-0a0b0d", kind: "run" as const, startedAt: START, endedAt: END };
    await new Passes(c.redis, c.prefix).write({ ...pass, batches: [batch], invoices: { succeeded: 1 } }, DAY);

    const page = await c.app.inject({ url: `/passes/${pass.id}`, headers: { host: HOST } });

    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain("\u202E");
    expect(page.body).not.toContain("vsc.exe\nfake");
    expect(page.body).toContain("&quot;invoice\\u202evsc.exe\\nfake.csv&quot;");
  });

  it("when a pass is not kept or the address is not a pass id, then 404 says so before Redis is asked for a name", async () => {
    const c = await consoleApp(undefined);
    apps.push(c);
    const missing = await c.app.inject({ url: "/passes/20261121T020000Z-ffffff", headers: { host: HOST } });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain("RESULTS_RETENTION");
    const malformed = await c.app.inject({ url: "/passes/..%2Fbatches", headers: { host: HOST } });
    expect(malformed.statusCode).toBe(404);
    const none = await c.app.inject({ url: "/passes", headers: { host: HOST } });
    expect(none.body).toContain("No passes yet");
  });
});

describe("the pass chart's arithmetic", () => {
  it("when a pass is longer than the chart has columns, then seconds are summed into wider columns as rates per second", () => {
    const from = 1_800_000_000_000;
    const to = from + 600_000; // 600 s: two seconds a column
    const points = [
      { second: from / 1000, accepted: 4, refused: 2, other: 0, learned: undefined, sent: undefined },
      { second: from / 1000 + 1, accepted: 2, refused: 0, other: 0, learned: 7, sent: 6 },
      { second: from / 1000 + 599, accepted: 1, refused: 0, other: 1, learned: undefined, sent: undefined },
    ];
    const c = columnsOf({ from, to, points });
    expect(c.width).toBe(2);
    expect(c.accepted).toHaveLength(300);
    expect([c.accepted[0], c.refused[0], c.learned[0]]).toEqual([3, 1, 7]);
    expect([c.accepted[299], c.other[299]]).toEqual([0.5, 0.5]);
  });

  it("when the scale is chosen, then it is the next of a few tops a reader divides by four, times a power of ten", () => {
    expect([0.3, 1, 1.3, 3, 7, 42, 100, 101, 260].map(niceCeil)).toEqual([
      1, 1, 1.6, 3, 8, 50, 100, 120, 300,
    ]);
  });

  it("when a pass lasts three seconds and answered one request a second, then the time axis labels distinct whole seconds and the rate axis whole requests per second", () => {
    const from = 1_800_000_000_400; // 400 ms into a second
    const points = [0, 1, 2].map((k) => ({
      second: Math.floor(from / 1000) + k,
      accepted: 1,
      refused: 0,
      other: 0,
      learned: undefined,
      sent: undefined,
    }));
    const svg = passChart({ from, to: from + 2_600, points }).toString();
    const labels = [...svg.matchAll(/class="chart-label"[^>]*>([^<]+)</g)].map((m) => m[1]);
    const times = labels.filter((l) => /^\d\d:\d\d:\d\d$/.test(l ?? ""));
    expect(times).toEqual(["08:00:00", "08:00:01", "08:00:02", "08:00:03"]);
    expect(labels.filter((l) => l?.endsWith("/s"))).toEqual(["0/s", "1/s", "2/s", "3/s", "4/s"]);
  });

  it("when the scale's top is 5/s, then its quarter ticks are written exactly, 1.25/s, not rounded to 1.3/s", () => {
    const second = 1_800_000_000;
    const points = [{ second, accepted: 5, refused: 0, other: 0, learned: undefined, sent: undefined }];
    const svg = passChart({ from: second * 1000, to: second * 1000 + 1000, points }).toString();
    expect(svg).toContain(">1.25/s<");
    expect(svg).toContain(">3.75/s<");
  });

  it("when the ticks of a long pass are chosen, then they are round clock times at most five, never two alike", () => {
    const from = Date.UTC(2026, 10, 21, 2, 0, 7);
    const ticks = timeTicks(from, from + 7 * 3_600_000);
    expect(ticks.map((t) => new Date(t).toISOString().slice(11, 19))).toEqual([
      "04:00:00",
      "06:00:00",
      "08:00:00",
    ]);
  });

  it("when a pass sent no request, then its page says so in a sentence and draws no empty chart", () => {
    const out = passChart({
      from: Date.UTC(2026, 10, 21, 2),
      to: Date.UTC(2026, 10, 21, 2, 0, 4),
      points: [],
    });
    expect(out.toString()).not.toContain("<svg");
    expect(out.toString()).toContain(
      "No request was answered from 02:00:00 to 02:00:04 UTC: nothing to chart.",
    );
  });
});
