import { afterEach, describe, expect, it } from "vitest";
import { consoleApp, reportedBatch, TOKEN, type ConsoleApp, type ConsoleAppOptions } from "./console-app.js";

const apps: ConsoleApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
async function open(options: ConsoleAppOptions): Promise<ConsoleApp> {
  const app = await consoleApp(TOKEN, [], options);
  apps.push(app);
  return app;
}

const FORM = "application/x-www-form-urlencoded";

describe("the Host the console answers to", () => {
  it("when only HTTP_ADDR and loopback names are served, then every other Host form is 421 before any route runs, the 404 page included", async () => {
    const c = await open({ env: {} });
    const id = await reportedBatch(c.batches, "night.csv", { succeeded: 3 });
    for (const host of ["attacker.example:9464", "127.0.0.1:8080", "10.0.0.7:9464", "[fe80::1]:9464", ""])
      for (const url of ["/", `/batches/${id}`, `/batches/${id}/report.csv`, "/queue", "/no-such-page"]) {
        const answer = await c.app.inject({ url, headers: { host } });
        expect(answer.statusCode, `${host} ${url}`).toBe(421);
        expect(answer.body, `${host} ${url}`).not.toContain("night.csv");
        expect(answer.headers["cache-control"]).toBe("no-store");
      }
    for (const host of ["127.0.0.1:9464", "localhost:9464", "[::1]:9464"])
      expect((await c.app.inject({ url: `/batches/${id}`, headers: { host } })).body, host).toContain(
        "night.csv",
      );
  });

  it("when CONSOLE_URL and CONSOLE_ALLOWED_HOSTS name the proxy's hosts, then those are answered and their neighbours are not", async () => {
    const c = await open({
      env: { CONSOLE_URL: "https://relay.example.com/", CONSOLE_ALLOWED_HOSTS: "relay.lan:8443" },
    });
    const status = async (host: string) => (await c.app.inject({ url: "/", headers: { host } })).statusCode;
    expect(await status("relay.example.com")).toBe(200);
    expect(await status("relay.lan:8443")).toBe(200);
    expect(await status("relay.lan:8444")).toBe(421);
    expect(await status("relay.lan")).toBe(421);
    expect(await status("example.com")).toBe(421);
  });
});

describe("the Origin of a sign-in", () => {
  const login = (c: ConsoleApp, host: string, origin: string | undefined) =>
    c.app.inject({
      method: "POST",
      url: "/login",
      headers: { host, "content-type": FORM, ...(origin === undefined ? {} : { origin }) },
      payload: `token=${TOKEN}`,
    });

  it("when the request's Host is served but its Origin is another host's, then it is refused with 403 though the token is right", async () => {
    const c = await open({ env: {} });
    const forged = await login(c, "127.0.0.1:9464", "http://attacker.example:9464");
    expect(forged.statusCode).toBe(403);
    expect(forged.headers["set-cookie"]).toBeUndefined();
    expect((await login(c, "127.0.0.1:9464", "http://127.0.0.1:8080")).statusCode).toBe(403);
    expect((await login(c, "127.0.0.1:9464", undefined)).statusCode).toBe(403);
  });

  it("when a forged Host and a matching forged Origin are sent, then it is refused: the Origin is compared with the served hosts", async () => {
    const c = await open({ env: { CONSOLE_ALLOWED_HOSTS: "relay.lan" } });
    expect((await login(c, "attacker.example:9464", "http://attacker.example:9464")).statusCode).toBe(421);
    const sideways = await c.app.inject({
      method: "POST",
      url: "/login",
      headers: { host: "relay.lan", origin: "http://attacker.example:9464", "content-type": FORM },
      payload: `token=${TOKEN}`,
    });
    expect(sideways.statusCode).toBe(403);
  });

  it("when the Origin is any served name, then the sign-in succeeds, whichever served name the Host used", async () => {
    const c = await open({ env: { CONSOLE_URL: "https://relay.example.com/" } });
    expect((await login(c, "127.0.0.1:9464", "http://localhost:9464")).statusCode).toBe(303);
    expect((await login(c, "relay.example.com", "https://relay.example.com")).statusCode).toBe(303);
  });
});
