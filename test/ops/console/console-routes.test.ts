import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleAuth, SESSION_SECONDS, SESSION_COOKIE } from "../../../src/ops/console/auth.js";
import { escapeHtml, html } from "../../../src/ops/console/html.js";
import { consoleApp, reportedBatch, TOKEN, type ConsoleApp } from "./console-app.js";
import { RemoteClaims } from "../../../src/ledger/remote-claims.js";
import { createInvoiceQueue } from "../../../src/queue/invoice-queue.js";
import { Outbox } from "../../../src/ledger/outbox.js";

const apps: ConsoleApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
async function open(
  token: string | undefined,
  ...rest: Parameters<typeof consoleApp> extends [unknown, ...infer R] ? R : never
) {
  const app = await consoleApp(token, ...rest);
  apps.push(app);
  return app;
}

const HOST = "console.test";
const XSS = "<script>alert(1)</script>";
/** Markup a file name can hold (no `/`: a name is one path segment). */
const NAME_XSS = "<img src=x onerror=alert(1)>";

/** Signs in through the form; the session cookie and the CSRF token of its pages. */
async function signIn(c: ConsoleApp, batchId: string): Promise<{ cookie: string; csrf: string }> {
  const login = await c.app.inject({
    method: "POST",
    url: "/login",
    headers: { host: HOST, origin: `http://${HOST}`, "content-type": "application/x-www-form-urlencoded" },
    payload: `token=${TOKEN}`,
  });
  expect(login.statusCode).toBe(303);
  const setCookie = String(login.headers["set-cookie"]);
  const cookie = setCookie.split(";")[0] ?? "";
  const batch = await c.app.inject({ url: `/batches/${batchId}`, headers: { host: HOST, cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(batch.body)?.[1] ?? "";
  return { cookie, csrf };
}

describe("the console's HTML", () => {
  it("when text holds markup, then the html builder escapes it and keeps safe markup as it is", () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&`)).toBe(
      "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;",
    );
    expect(html`<td>${XSS}</td>${html`<b>${"&"}</b>`}`.text).toBe(
      "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><b>&amp;</b>",
    );
  });

  it("when a batch's file name holds a line break or a bidi control, then the pages show it escaped, as the CLI does", async () => {
    const c = await open(undefined, []);
    const id = await reportedBatch(c.batches, "evil\u202Evsc.exe\n.csv", { succeeded: 1 });
    for (const url of ["/", `/batches/${id}`]) {
      const page = await c.app.inject({ url });
      expect(page.body).not.toContain("\u202E");
      expect(page.body).toContain("evil\\u202evsc.exe\\n.csv");
    }
  });

  it("when a batch's file name and a row's external_id hold markup, then the pages show them as text, with the security headers", async () => {
    const c = await open(undefined, [
      {
        line: 2,
        external_id: XSS,
        idempotency_key: "k",
        status: "rejected",
        http_status: "",
        correlation_id: "",
        error: `bad <b>`,
      },
    ]);
    const id = await reportedBatch(c.batches, `${NAME_XSS}.csv`, { succeeded: 2, rejected: 1 });
    const list = await c.app.inject({ url: "/" });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(NAME_XSS);
    expect(list.body).toContain("&lt;img src=x onerror=alert(1)&gt;.csv");
    expect(list.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(list.headers["content-security-policy"]).not.toContain("unsafe-inline");
    expect(list.headers["x-content-type-options"]).toBe("nosniff");
    expect(list.headers["referrer-policy"]).toBe("same-origin");
    const one = await c.app.inject({ url: `/batches/${id}` });
    expect(one.body).not.toContain(XSS);
    expect(one.body).not.toContain(NAME_XSS);
    expect(one.body).toContain("bad &lt;b&gt;");
    expect(one.body).not.toContain("<script");
  });
});

describe("the queue page's SFTP sources", () => {
  it("when SFTP sources have been polled, then /queue shows each with its last poll, files waiting and last error, escaped", async () => {
    const c = await consoleApp(undefined);
    apps.push(c);
    const empty = await c.app.inject({ url: "/queue" });
    expect(empty.body).not.toContain("SFTP sources");
    const acme = new RemoteClaims(c.redis, c.prefix, "acme");
    await acme.setState({ ...(await acme.state()), lastPollAt: Date.now(), waiting: 2, claimed: 5 });
    const beta = new RemoteClaims(c.redis, c.prefix, "beta");
    await beta.setState({ ...(await beta.state()), lastError: `SFTP source beta: ${XSS}`, failures: 1 });
    const page = await c.app.inject({ url: "/queue" });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("SFTP sources");
    expect(page.body).toMatch(/<td>acme<\/td>[\s\S]*?<td class="num">2<\/td>\s*<td class="num">5<\/td>/);
    expect(page.body).toContain(`SFTP source beta: ${escapeHtml(XSS)}`);
    expect(page.body).not.toContain(XSS);
  });
});

describe("the queue page's outage cool-down", () => {
  it("when the queue is held in an outage cool-down, then /queue shows the banner with the seconds left; the workers' own rate limiting alone shows none", async () => {
    const c = await open(undefined);
    const queue = createInvoiceQueue(c.redis, c.prefix, 5);
    try {
      // a worker's limiter counting the jobs of its window (SUBMIT_RATE_PER_SEC): no cool-down
      await c.redis.set(queue.toKey("limiter"), "3", "PX", 60_000);
      const limited = await c.app.inject({ url: "/queue" });
      expect(limited.body).toContain("No outage cool-down in force.");
      expect(limited.body).not.toContain("Outage cool-down:");

      await queue.rateLimit(30_000);
      const held = await c.app.inject({ url: "/queue" });
      const seconds = /Outage cool-down: no new jobs are taken for another (\d+) s/.exec(
        held.body.replace(/\s+/g, " "),
      )?.[1];
      expect(Number(seconds)).toBeGreaterThan(0);
      expect(Number(seconds)).toBeLessThanOrEqual(30);
      expect(held.body).not.toContain("No outage cool-down in force.");
    } finally {
      await queue.close();
    }
  });
});

describe("paging cursors", () => {
  it("when a batch page is asked with a status and an after cursor, then the rows port gets them, and a bad cursor reads as the first page", async () => {
    const c = await open(undefined);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 1 });
    await c.app.inject({ url: `/batches/${id}?status=failed&after=4000` });
    await c.app.inject({ url: `/batches/${id}?status=nonsense&after=-3` });
    expect(c.queries).toEqual([
      { status: "failed", after: 4000, limit: 100 },
      { status: undefined, after: 0, limit: 100 },
    ]);
  });
});

describe("write access", () => {
  it("when CONSOLE_TOKEN is not set, then no retry control is shown and any POST is refused with 403", async () => {
    const c = await open(undefined);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 2 });
    const page = await c.app.inject({ url: `/batches/${id}` });
    expect(page.body).not.toContain("/retry");
    for (const url of [`/batches/${id}/retry`, "/login"]) {
      const post = await c.app.inject({
        method: "POST",
        url,
        headers: { authorization: `Bearer ${TOKEN}`, host: HOST, origin: `http://${HOST}` },
      });
      expect(post.statusCode, url).toBe(403);
    }
    expect(c.retried).toEqual([]);
  });

  it("when CONSOLE_TOKEN is set, then a POST without a token or session is 401, and a wrong bearer token too", async () => {
    const c = await open(TOKEN);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 2 });
    const bare = await c.app.inject({
      method: "POST",
      url: `/batches/${id}/retry`,
      headers: { host: HOST, origin: `http://${HOST}` },
    });
    expect(bare.statusCode).toBe(401);
    const wrong = await c.app.inject({
      method: "POST",
      url: `/batches/${id}/retry`,
      headers: { authorization: `Bearer ${TOKEN}x` },
    });
    expect(wrong.statusCode).toBe(401);
    const forgedCookie = await c.app.inject({
      method: "POST",
      url: `/batches/${id}/retry`,
      headers: { cookie: `${SESSION_COOKIE}=abc.def`, host: HOST, origin: `http://${HOST}` },
    });
    expect(forgedCookie.statusCode).toBe(401);
    expect(c.retried).toEqual([]);
  });

  it("when the right bearer token is sent, then the batch's failed rows are retried", async () => {
    const c = await open(TOKEN);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 2 });
    const post = await c.app.inject({
      method: "POST",
      url: `/batches/${id}/retry`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(post.statusCode).toBe(303);
    expect(post.headers.location).toBe(`/batches/${id}?retried=1`);
    expect(c.retried).toEqual([id]);
  });

  it("when the outbox is on and RESULTS_DATABASE_URL is not set, then every page comes up saying why writing is refused, and retry is refused with that reason, calling no port", async () => {
    const c = await open(TOKEN);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 2 });
    await new Outbox(c.redis, c.prefix).enable();
    for (const url of ["/", `/batches/${id}`, "/queue"]) {
      const page = await c.app.inject({ url, headers: { authorization: `Bearer ${TOKEN}` } });
      expect(page.statusCode, url).toBe(200);
      expect(page.body, url).toContain("RESULTS_DATABASE_URL is not set");
      expect(page.body, url).toContain("invoice-relay db detach");
    }
    const batch = await c.app.inject({
      url: `/batches/${id}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(batch.body).not.toContain('action="/batches/');
    const post = await c.app.inject({
      method: "POST",
      url: `/batches/${id}/retry`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(post.statusCode).toBe(503);
    expect(post.body).toContain("RESULTS_DATABASE_URL is not set");
    expect(c.retried).toEqual([]);

    // Detached (or the database given again): writing works at once, without a restart.
    await c.redis.del(c.batches.names.outboxOn);
    const again = await c.app.inject({
      method: "POST",
      url: `/batches/${id}/retry`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(again.statusCode).toBe(303);
    expect(c.retried).toEqual([id]);
    const page = await c.app.inject({ url: "/", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(page.body).not.toContain("RESULTS_DATABASE_URL is not set");
  });

  it("when signing in, then the cookie is HttpOnly and SameSite=Strict and never carries the token; a wrong token is 401", async () => {
    const c = await open(TOKEN);
    const wrong = await c.app.inject({
      method: "POST",
      url: "/login",
      headers: { host: HOST, origin: `http://${HOST}`, "content-type": "application/x-www-form-urlencoded" },
      payload: "token=not-the-token-at-all",
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    const id = await reportedBatch(c.batches, "a.csv", { failed: 2 });
    const login = await c.app.inject({
      method: "POST",
      url: "/login",
      headers: { host: HOST, origin: `http://${HOST}`, "content-type": "application/x-www-form-urlencoded" },
      payload: `token=${TOKEN}`,
    });
    const setCookie = String(login.headers["set-cookie"]);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toContain(TOKEN);
    const { csrf } = await signIn(c, id);
    expect(csrf).not.toBe("");
    const page = await c.app.inject({
      url: `/batches/${id}`,
      headers: { cookie: setCookie.split(";")[0] ?? "" },
    });
    expect(page.body).not.toContain(TOKEN);
  });

  it("when a session's form post lacks its CSRF token or comes from another origin, then it is refused with 403; with both it retries", async () => {
    const c = await open(TOKEN);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 2 });
    const { cookie, csrf } = await signIn(c, id);
    const post = (headers: Record<string, string>, payload: string) =>
      c.app.inject({
        method: "POST",
        url: `/batches/${id}/retry`,
        headers: { host: HOST, cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
        payload,
      });
    expect((await post({ origin: `http://${HOST}` }, "")).statusCode).toBe(403);
    expect((await post({ origin: `http://${HOST}` }, `csrf=${csrf}x`)).statusCode).toBe(403);
    expect((await post({ origin: "http://evil.test" }, `csrf=${csrf}`)).statusCode).toBe(403);
    expect((await post({}, `csrf=${csrf}`)).statusCode).toBe(403);
    expect(c.retried).toEqual([]);
    expect((await post({ referer: `http://${HOST}/batches/${id}` }, `csrf=${csrf}`)).statusCode).toBe(303);
    expect((await post({ origin: `http://${HOST}` }, `csrf=${csrf}`)).statusCode).toBe(303);
    expect(c.retried).toEqual([id, id]);
  });
});

describe("a console token given as a file (CONSOLE_TOKEN_FILE)", () => {
  it("when the file is rotated in place, then the new token is taken at once without a restart, and the old token and its sessions no longer are", async () => {
    const dir = await mkdtemp(join(tmpdir(), "console-token-"));
    try {
      const file = join(dir, "token");
      await writeFile(file, `${TOKEN}\n`);
      const c = await open(undefined, [], {
        env: { CONSOLE_TOKEN_FILE: file, CONSOLE_ALLOWED_HOSTS: "localhost:80,console.test" },
      });
      const id = await reportedBatch(c.batches, "a.csv", { failed: 2 });
      const { cookie } = await signIn(c, id);
      const retry = (headers: Record<string, string>) =>
        c.app.inject({ method: "POST", url: `/batches/${id}/retry`, headers });
      expect((await retry({ authorization: `Bearer ${TOKEN}` })).statusCode).toBe(303);
      const page = () => c.app.inject({ url: `/batches/${id}`, headers: { host: HOST, cookie } });
      expect((await page()).body).toMatch(/Sign out/);

      const rotated = "console-token-rotated-fedcba9876";
      await writeFile(`${file}.tmp`, rotated);
      await rename(`${file}.tmp`, file);
      expect((await retry({ authorization: `Bearer ${rotated}` })).statusCode).toBe(303);
      expect((await retry({ authorization: `Bearer ${TOKEN}` })).statusCode).toBe(401);
      expect((await page()).body).not.toMatch(/Sign out/);
      expect(c.retried).toEqual([id, id]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("ConsoleAuth", () => {
  it("when tokens of other lengths or a tampered session are given, then they do not match", () => {
    const auth = new ConsoleAuth(TOKEN);
    expect(auth.tokenMatches(TOKEN)).toBe(true);
    expect(auth.tokenMatches(TOKEN.slice(0, -1))).toBe(false);
    expect(auth.tokenMatches(`${TOKEN}0`)).toBe(false);
    expect(auth.tokenMatches("")).toBe(false);
    const session = auth.newSession();
    expect(auth.sessionOf(session)).toBeDefined();
    expect(auth.sessionOf(`x${session}`)).toBeUndefined();
    expect(new ConsoleAuth(`${TOKEN}-other`).sessionOf(session)).toBeUndefined();
    expect(new ConsoleAuth(undefined).tokenMatches("")).toBe(false);
  });

  it("when a session is older than SESSION_SECONDS, then it no longer proves anything", () => {
    let now = Date.UTC(2026, 10, 24, 2, 0, 0);
    const auth = new ConsoleAuth(TOKEN, () => now);
    const session = auth.newSession();
    now += (SESSION_SECONDS - 1) * 1000;
    expect(auth.sessionOf(session)).toBeDefined();
    now += 2000;
    expect(auth.sessionOf(session)).toBeUndefined();
  });
});
