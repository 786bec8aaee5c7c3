import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { newBatchId } from "../../src/ledger/batch-id.js";
import type { BatchMeta } from "../../src/ledger/batch-store.js";
import { batchPage } from "../../src/ops/console/batch-page.js";
import type { SafeHtml } from "../../src/ops/console/html.js";
import { page as framed } from "../../src/ops/console/layout.js";
import { queuePage } from "../../src/ops/console/queue-page.js";
import { STYLESHEET } from "../../src/ops/console/stylesheet.js";
import { segment } from "../support/file-names.js";

const CHROMIUM = "/usr/bin/chromium";
const VIEWER = { writable: false, signedIn: false };
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (bash .ci/run does)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
});
afterAll(() => browser.close());

/** A console page as a browser lays it out, `width` pixels wide, its stylesheet inline. */
async function shown(body: SafeHtml, width: number): Promise<Page> {
  const tab = await browser.newPage({ viewport: { width, height: 800 } });
  const markup = framed("test", VIEWER, body).replace(
    '<link rel="stylesheet" href="/console.css" />',
    `<style>${STYLESHEET}</style>`,
  );
  await tab.setContent(markup);
  return tab;
}

/**
 * Run in the page (as source: this project compiles without the DOM's types). `textRight`: where a cell's
 * text ends on screen; `lineCount`: on how many lines the element whose whole text is `text` is drawn.
 */
const IN_PAGE = `
  const textBoxes = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    return range;
  };
  const textRight = (cell) => textBoxes(cell).getBoundingClientRect().right;
  const lineCount = (text) => {
    const holder = [...document.querySelectorAll("body *")].find(
      (e) => e.children.length === 0 && e.textContent.trim() === text,
    );
    return holder === undefined ? -1 : new Set([...textBoxes(holder).getClientRects()].map((r) => Math.round(r.top))).size;
  };
`;

/** For each numeric column of each table: how far its header's text ends from its first number's, in px. */
async function headerOffsets(tab: Page): Promise<number[]> {
  const offsets: unknown = await tab.evaluate(`(() => { ${IN_PAGE}
    return [...document.querySelectorAll("table")].flatMap((table) => {
      const heads = [...table.querySelectorAll("thead th")];
      const cells = [...(table.querySelector("tbody tr")?.querySelectorAll("td") ?? [])];
      return cells.flatMap((td, i) =>
        td.classList.contains("num") && heads[i] !== undefined ? [Math.abs(textRight(heads[i]) - textRight(td))] : [],
      );
    });
  })()`);
  return z.array(z.number()).parse(offsets);
}

/** On how many lines each of `texts` is drawn (-1: not on the page). */
async function lineCounts(tab: Page, texts: readonly string[]): Promise<number[]> {
  const counts: unknown = await tab.evaluate(`(() => { ${IN_PAGE}
    return ${JSON.stringify(texts)}.map(lineCount);
  })()`);
  return z.array(z.number()).parse(counts);
}

describe("the console's pages as Chromium draws them", () => {
  it("when the queue page is drawn, then every count's header ends where its number ends", async () => {
    const tab = await shown(
      queuePage({
        queue: { counts: { waiting: 12, delayed: 0, active: 3, paused: 0, failed: 1 }, isPaused: false },
        coolDownMs: 0,
        apiKeyRefusal: undefined,
        sendRate: undefined,
        census: {
          records: 16,
          byStatus: { queued: 15, retrying: 0, succeeded: 1, failed: 0, superseded: 0 },
          batches: 1,
          waitingByBatch: new Map(),
          oldestUnfinishedAt: undefined,
          at: Date.now(),
        },
        passes: [],
        sftpSources: new Map([["acme", { waiting: 2, claimed: 5, reportsPending: 1, failures: 0 }]]),
      }),
      1200,
    );
    const offsets = await headerOffsets(tab);
    expect(offsets).toHaveLength(8);
    expect(Math.max(...offsets)).toBeLessThan(2);
    await tab.close();
  });

  it("when a batch page is drawn on a narrow screen, then its batch id and idempotency keys each stay on one line", async () => {
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
      counts: JSON.stringify({ failed: 1 }),
    };
    const row = {
      line: 2,
      external_id: "RE-2026-11-0003-Ä",
      idempotency_key: "6f1c2a9e-4b7d-5e3f-9a1b-2c3d4e5f6a7b",
      status: "failed",
      http_status: "422",
      correlation_id: "corr-0123456789",
      error: "routing.destination_country: must be an assigned ISO 3166-1 alpha-2 country code",
    };
    const tab = await shown(
      batchPage({ meta, page: { rows: [row], source: "report" }, after: 0, viewer: VIEWER }),
      600,
    );
    const lines = await lineCounts(tab, [id, row.idempotency_key]);
    expect(lines).toEqual([1, 1]);
    await tab.close();
  });
});
