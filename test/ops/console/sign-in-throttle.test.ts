import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log/logger.js";
import { SIGN_IN_LIMITS, SignInThrottle } from "../../../src/ops/console/sign-in-throttle.js";
import { consoleApp, reportedBatch, TOKEN, type ConsoleApp } from "./console-app.js";

const START = Date.UTC(2026, 10, 25, 1, 2, 3);
const { perClient, global, windowMs } = SIGN_IN_LIMITS;

describe("the sign-in throttle's arithmetic", () => {
  it("when an address has sent a few wrong tokens at once, then it waits one window from the first, and may try again when that has passed", () => {
    let now = START;
    const throttle = new SignInThrottle(SIGN_IN_LIMITS, () => now);
    for (let i = 1; i < perClient; i++) {
      expect(throttle.waitMs("a")).toBe(0);
      expect(throttle.failed("a")).toEqual({ client: i, all: i });
    }
    expect(throttle.waitMs("a")).toBe(0);
    expect(throttle.failed("a")).toEqual({ client: perClient, all: perClient });
    expect(throttle.waitMs("a")).toBe(windowMs);
    expect(throttle.waitMs("b")).toBe(0);
    now += windowMs - 1;
    expect(throttle.waitMs("a")).toBe(1);
    now += 1;
    expect(throttle.waitMs("a")).toBe(0);
  });

  it("when the wrong tokens are spread out, then each wait ends as the oldest failure leaves the window", () => {
    let now = START;
    const throttle = new SignInThrottle(SIGN_IN_LIMITS, () => now);
    const step = 10_000;
    for (let i = 0; i < perClient; i++) {
      expect(throttle.waitMs("a")).toBe(0);
      throttle.failed("a");
      now += step;
    }
    now -= step;
    expect(throttle.waitMs("a")).toBe(windowMs - (perClient - 1) * step);
    now = START + windowMs;
    expect(throttle.waitMs("a")).toBe(0);
    throttle.failed("a");
    expect(throttle.waitMs("a")).toBe(step);
  });

  it("when many addresses each send one wrong token, then the ceiling across all of them holds back every address, a new one too", () => {
    let now = START;
    const throttle = new SignInThrottle(SIGN_IN_LIMITS, () => now);
    for (let i = 0; i < global; i++) {
      expect(throttle.waitMs(`10.0.0.${i}`)).toBe(0);
      throttle.failed(`10.0.0.${i}`);
      now += 100;
    }
    expect(now).toBe(START + global * 100);
    expect(throttle.waitMs("192.0.2.1")).toBe(windowMs - global * 100);
    now = START + windowMs - 1;
    expect(throttle.waitMs("192.0.2.1")).toBe(1);
    now += 1;
    expect(throttle.waitMs("192.0.2.1")).toBe(0);
  });

  it("when a right token follows wrong ones, then the address's failures are forgotten but not the ceiling's", () => {
    const throttle = new SignInThrottle(SIGN_IN_LIMITS, () => START);
    for (let i = 1; i < perClient; i++) throttle.failed("a");
    throttle.succeeded("a");
    expect(throttle.failed("a")).toEqual({ client: 1, all: perClient });
  });

  it("when addresses come and go for hours, then it keeps at most the ceiling's worth of them", () => {
    let now = START;
    const throttle = new SignInThrottle(SIGN_IN_LIMITS, () => now);
    for (let i = 0; i < 10_000; i++) {
      if (throttle.waitMs(`addr-${i}`) === 0) throttle.failed(`addr-${i}`);
      now += 1000;
    }
    expect(throttle.clients).toBeLessThanOrEqual(global);
  });
});

const apps: ConsoleApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

interface Clocked {
  readonly c: ConsoleApp;
  readonly lines: string[];
  readonly advance: (ms: number) => void;
}
async function clocked(): Promise<Clocked> {
  let now = START;
  const lines: string[] = [];
  const logger = createLogger({ format: "json", destination: { write: (line: string) => lines.push(line) } });
  const c = await consoleApp(TOKEN, [], { now: () => now, logger });
  apps.push(c);
  return { c, lines, advance: (ms) => (now += ms) };
}

const signIn = (c: ConsoleApp, token: string, from = "192.0.2.10") =>
  c.app.inject({
    method: "POST",
    url: "/login",
    remoteAddress: from,
    headers: {
      host: "console.test",
      origin: "http://console.test",
      "content-type": "application/x-www-form-urlencoded",
    },
    payload: `token=${token}`,
  });

describe("wrong tokens at the console", () => {
  it("when an address signs in with a few wrong tokens, then the next sign-in, even with the right token, is 429 with Retry-After and a page saying how long to wait; once that has passed the right token works", async () => {
    const { c, lines, advance } = await clocked();
    for (let i = 0; i < perClient; i++) expect((await signIn(c, `wrong-guess-${i}`)).statusCode).toBe(401);
    const held = await signIn(c, TOKEN);
    expect(held.statusCode).toBe(429);
    expect(held.headers["retry-after"]).toBe(String(windowMs / 1000));
    expect(held.headers["set-cookie"]).toBeUndefined();
    expect(held.body).toContain(`wait ${windowMs / 1000} seconds`);
    expect(held.body).toContain("01:03:03 UTC");
    expect((await signIn(c, TOKEN, "192.0.2.99")).statusCode).toBe(303);
    advance(windowMs - 1000);
    const later = await signIn(c, TOKEN);
    expect(later.statusCode).toBe(429);
    expect(later.headers["retry-after"]).toBe("1");
    advance(1000);
    expect((await signIn(c, TOKEN)).statusCode).toBe(303);
    const log = lines.join("");
    expect(log).not.toContain("wrong-guess");
    expect(log).not.toContain(TOKEN);
    const refused = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l["failures"] !== undefined);
    expect(refused.map((l) => [l["ip"], l["failures"]])).toEqual(
      Array.from({ length: perClient }, (_, i) => ["192.0.2.10", i + 1]),
    );
  });

  it("when wrong bearer tokens come from an address, on a page or a retry, then they count too and the right bearer token is held back with 429", async () => {
    const { c, advance } = await clocked();
    const id = await reportedBatch(c.batches, "a.csv", { failed: 1 });
    const bearer = (token: string, method: "GET" | "POST") =>
      c.app.inject({
        method,
        url: method === "GET" ? `/batches/${id}` : `/batches/${id}/retry`,
        remoteAddress: "192.0.2.20",
        headers: { authorization: `Bearer ${token}` },
      });
    for (let i = 0; i < perClient; i++) await bearer(`wrong-${i}`, i % 2 === 0 ? "GET" : "POST");
    const held = await bearer(TOKEN, "POST");
    expect(held.statusCode).toBe(429);
    expect(held.headers["retry-after"]).toBe(String(windowMs / 1000));
    expect((await bearer(TOKEN, "GET")).statusCode).toBe(429);
    expect(c.retried).toEqual([]);
    advance(windowMs);
    expect((await bearer(TOKEN, "POST")).statusCode).toBe(303);
    expect(c.retried).toEqual([id]);
  });

  it("when wrong tokens come from many addresses, then a sign-in from any address is held back once the ceiling is reached", async () => {
    const { c } = await clocked();
    for (let i = 0; i < global; i++) await signIn(c, "wrong", `198.51.100.${i}`);
    const held = await signIn(c, TOKEN, "203.0.113.1");
    expect(held.statusCode).toBe(429);
    expect(Number(held.headers["retry-after"])).toBeGreaterThan(0);
  });
});
