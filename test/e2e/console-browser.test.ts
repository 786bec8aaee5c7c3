import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { poisonKey } from "../cli/ops-support.js";
import { copySamples, tempDropDir } from "../support/drop.js";
import { testInvoice, testInvoices } from "../support/invoices.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";

const CHROMIUM = "/usr/bin/chromium";
const API_KEY = "irs_live_ops_key_0123456789";
const TOKEN = "console-e2e-token-0123456789";
const XSS_ID = "<script>alert(1)</script>";
const cleanups: (() => Promise<void>)[] = [];
let sim: SimulatorHandle;
let browser: Browser;
const dialogs: string[] = [];

/** A drop folder with the samples (as `npm run demo` has it), a row whose id is markup and one the service refuses. */
async function dropFolder(failedId: string): Promise<string> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  await copySamples(drop.dir);
  const [refused] = testInvoices(1, failedId);
  if (refused === undefined) throw new Error("no test invoice");
  // The key was used at the service for another body first: the real invoice ends failed with 422.
  await poisonKey(sim, refused.key, testInvoice(99, `other-${randomUUID()}`).invoice);
  const i = refused.invoice;
  await writeFile(
    join(drop.dir, "console.csv"),
    "external_id,currency,destination_country,archive_policy\n" +
      `"${XSS_ID}",EUR,DE,eu-10y\n` +
      `${i.external_id},${i.currency},${i.routing.destination_country},${i.routing.archive_policy}\n`,
  );
  return drop.dir;
}

/** `run --serve` over the drop folder; the console's URL once its pass is done. */
async function serve(dir: string, extra: Record<string, string>): Promise<string> {
  const proc: Spawned = spawnNode(
    "workers/cli.js",
    ["run", "--serve"],
    cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, name: "console", dropDir: dir },
      {
        HTTP_ADDR: "127.0.0.1:0",
        ...extra,
      },
    ),
  );
  cleanups.push(async () => {
    proc.child.kill("SIGTERM");
    await proc.exited;
  });
  const served = () => /serving (http:\/\/\S+)\/ until/.exec(proc.output())?.[1];
  await until(
    () => Promise.resolve(served() !== undefined || proc.child.exitCode !== null),
    60_000,
    "run --serve to serve",
  );
  const url = served();
  if (url === undefined) throw new Error(`run --serve did not serve:\n${proc.output()}`);
  return url;
}

/** `invoice-relay console` alone (no pass, no API key) on a free loopback port; its URL. */
async function consoleOnly(extra: Record<string, string>): Promise<string> {
  const proc: Spawned = spawnNode(
    "workers/cli.js",
    ["console"],
    cliEnv(
      { name: "console" },
      {
        HTTP_ADDR: "127.0.0.1:0",
        ...extra,
      },
    ),
  );
  cleanups.push(async () => {
    proc.child.kill("SIGTERM");
    await proc.exited;
  });
  const served = () => /serving (http:\/\/\S+)\/ until/.exec(proc.output())?.[1];
  await until(
    () => Promise.resolve(served() !== undefined || proc.child.exitCode !== null),
    30_000,
    "console to serve",
  );
  const url = served();
  if (url === undefined) throw new Error(`console did not serve:\n${proc.output()}`);
  return url;
}

async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return page;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (bash .ci/run does)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      // What a DNS rebinding page achieves: a name of the attacker's that resolves to this machine.
      "--host-resolver-rules=MAP attacker.example 127.0.0.1",
    ],
  });
  sim = await startSimulator({ apiKey: API_KEY, seed: 7 });
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await browser.close();
  await sim.close();
});

describe("the web console in a browser, with CONSOLE_TOKEN", () => {
  let base: string;
  const failedId = `refused-${randomUUID()}`;
  beforeAll(async () => {
    base = await serve(await dropFolder(failedId), { CONSOLE_TOKEN: TOKEN });
  });

  it("when following a batch and filtering to rejected, then the error of a known bad row shows", async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.getByRole("link", { name: "invoices-eu.csv" }).click();
    await page.locator(".filters").getByRole("link", { name: "rejected", exact: true }).click();
    expect(page.url()).toContain("status=rejected");
    const row = page.locator("tr", { hasText: "ACME-2026-000106" });
    await expect.poll(() => row.locator("td.error").innerText()).toContain("ERU");
    expect(await page.locator("table.rows tbody tr").count()).toBe(3);
  });

  it("when an external id is searched, then its record shows with its status and batch", async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.getByRole("searchbox", { name: "Search" }).fill("ACME-2026-000101");
    await page.getByRole("button", { name: "Search" }).first().click();
    const record = page.locator("dl.record").first();
    expect(await record.innerText()).toMatch(/external_id\s+ACME-2026-000101/);
    expect(await record.innerText()).toMatch(/Status\s+succeeded/);
    expect(await record.locator("a").count()).toBe(1);
  });

  it("when an external id is markup, then it shows as text and no dialog opens", async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.getByRole("link", { name: "console.csv" }).click();
    expect(await page.locator("table.rows").innerText()).toContain(XSS_ID);
    await page.goto(`${base}/search?q=${encodeURIComponent(XSS_ID)}`);
    expect(await page.locator("main").innerText()).toContain(XSS_ID);
    expect(dialogs).toEqual([]);
  });

  it("when the console is opened under another name that resolves to this machine, then the browser gets the refusal page and no invoice data", async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    const report = await page.getByRole("link", { name: "results.csv" }).first().getAttribute("href");
    expect(report).toMatch(/^\/batches\/.+\/report\.csv$/);
    const port = new URL(base).port;
    for (const path of ["/", report ?? "/"]) {
      const answer = await page.goto(`http://attacker.example:${port}${path}`);
      expect(answer?.status(), path).toBe(421);
      const shown = await page.locator("body").innerText();
      expect(shown, path).toContain("does not answer to the host name");
      expect(shown, path).not.toMatch(/ACME-2026|invoices-eu\.csv|console\.csv/);
    }
  });

  it("when the passes page is opened with scripts off, then the run's pass shows its exit code, and its page draws its chart and links its files", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await page.goto(`${base}/`);
      await page.getByRole("link", { name: "Passes", exact: true }).click();
      const row = page.locator("table.passes tbody tr").first();
      expect(await row.innerText()).toMatch(/run[\s\S]*2 finished with problems/);
      await row.locator("a").first().click();
      const chart = page.getByRole("img", { name: "Requests per second over the pass" });
      expect(await chart.isVisible()).toBe(true);
      expect((await chart.boundingBox())?.width).toBeGreaterThan(400);
      expect(await page.locator("svg path.chart-accepted").count()).toBe(1);
      expect(await page.locator("figure.pass-chart figcaption").innerText()).toMatch(/[1-9]\d* accepted/);
      expect(await page.locator("script").count()).toBe(0);
      await page.getByRole("link", { name: "invoices-eu.csv" }).click();
      expect(page.url()).toMatch(/\/batches\/\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    } finally {
      await context.close();
    }
  });

  it("when signed in, then retry on a batch with failed rows puts them back to queued", async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.getByRole("link", { name: "console.csv" }).click();
    expect(await page.getByRole("button", { name: /Retry/ }).count()).toBe(0);
    await page.goto(`${base}/login`);
    await page.getByLabel("Console token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "console.csv" }).click();
    await page.getByRole("button", { name: "Retry 1 failed row(s)" }).click();
    expect(await page.locator(".notice.good").innerText()).toContain("1 failed row(s) re-enqueued");
    await page.goto(`${base}/search?q=${failedId}-1`);
    expect(await page.locator("dl.record").innerText()).toMatch(/Status\s+queued/);
  });
});

describe("the web console in a browser, without CONSOLE_TOKEN", () => {
  it("when a batch has failed rows, then no retry control is offered and a forged POST is refused", async () => {
    const base = await serve(await dropFolder(`refused-${randomUUID()}`), {});
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.getByRole("link", { name: "console.csv" }).click();
    expect(await page.locator("tr", { hasText: "HTTP 422" }).locator(".status").innerText()).toBe("failed");
    expect(await page.locator("form[action$='/retry']").count()).toBe(0);
    const forged = await fetch(`${page.url().split("?")[0] ?? ""}/retry`, {
      method: "POST",
      headers: { origin: base, "content-type": "application/x-www-form-urlencoded" },
      body: "csrf=guessed",
    });
    expect(forged.status).toBe(403);
  });
});

describe("wrong console tokens in a browser", () => {
  it("when several wrong tokens are tried, then the sign-in page says to wait and until when, and even the right token waits", async () => {
    const base = await consoleOnly({ CONSOLE_TOKEN: TOKEN });
    const page = await newPage();
    const statuses: number[] = [];
    page.on("response", (response) => {
      if (response.url().endsWith("/login") && response.request().method() === "POST")
        statuses.push(response.status());
    });
    await page.goto(`${base}/login`);
    for (let i = 0; i < 5; i++) {
      await page.getByLabel("Console token").fill(`not-the-token-${i}`);
      await page.getByRole("button", { name: "Sign in" }).click();
      expect(await page.locator(".notice.bad").innerText()).toContain("That is not the console token.");
    }
    await page.getByLabel("Console token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    const notice = await page.locator(".notice.bad").innerText();
    expect(notice).toMatch(/wait (\d+) seconds \(until \d\d:\d\d:\d\d UTC\) before trying again/);
    const wait = Number(/wait (\d+) seconds/.exec(notice)?.[1]);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
  });
});
