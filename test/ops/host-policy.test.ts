import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { describeHosts, hostAllowed, originAllowed, servedHosts } from "../../src/ops/host-policy.js";

const PORT = 9464;
const loopback = servedHosts({ addr: { host: "127.0.0.1", port: PORT }, consoleUrl: undefined, allowed: [] });
const host = (value: string | undefined, url = "/") => hostAllowed(loopback, { url, host: value }, PORT);

describe("which Host a loopback console answers to", () => {
  it.each(["127.0.0.1:9464", "localhost:9464", "LOCALHOST:9464", "[::1]:9464", "localhost.:9464"])(
    "when the Host is %j (a loopback name on the port served), then it is answered",
    (value) => {
      expect(host(value)).toBe(true);
    },
  );

  it.each([
    ["another name, as a DNS rebinding page sends it", "attacker.example:9464"],
    ["another name without a port", "attacker.example"],
    ["the right name on a wrong port", "127.0.0.1:8080"],
    ["the right name without the port (port 80)", "localhost"],
    ["an IP literal of another host", "10.0.0.7:9464"],
    ["an IPv6 literal of another host", "[fe80::1]:9464"],
    ["a name that only begins like a loopback one", "localhost.attacker.example:9464"],
    ["a name with user info", "user@127.0.0.1:9464"],
    ["an empty Host", ""],
  ])("when the Host is %s (%j), then it is refused", (_what, value) => {
    expect(host(value)).toBe(false);
  });

  it("when the Host is missing, then it is refused", () => {
    expect(host(undefined)).toBe(false);
  });

  it("when the request is in absolute form, then the name in its target must be served too, whatever its Host says", () => {
    expect(host("127.0.0.1:9464", "http://attacker.example:9464/batches/x/report.csv")).toBe(false);
    expect(host("127.0.0.1:9464", "http://127.0.0.1:9464/batches/x/report.csv")).toBe(true);
    expect(host("attacker.example:9464", "http://127.0.0.1:9464/")).toBe(false);
  });

  it("when the port is asked of the socket, then the port the request came in on is the one served (HTTP_ADDR port 0)", () => {
    const anyPort = servedHosts({ addr: { host: "127.0.0.1", port: 0 }, consoleUrl: undefined, allowed: [] });
    expect(hostAllowed(anyPort, { url: "/", host: "127.0.0.1:41234" }, 41234)).toBe(true);
    expect(hostAllowed(anyPort, { url: "/", host: "127.0.0.1:41235" }, 41234)).toBe(false);
  });
});

describe("names beyond loopback", () => {
  it("when CONSOLE_URL and CONSOLE_ALLOWED_HOSTS name hosts, then those are answered (a port only where one is written), and nothing else", () => {
    const config = loadConfig({
      HTTP_ADDR: "127.0.0.1:9464",
      CONSOLE_URL: "https://relay.example.com/console/",
      CONSOLE_ALLOWED_HOSTS: "relay-internal.example, proxy.example:8443",
    });
    const policy = servedHosts({
      addr: { host: "127.0.0.1", port: PORT },
      consoleUrl: config.consoleUrl,
      allowed: config.consoleAllowedHosts,
    });
    const at = (value: string) => hostAllowed(policy, { url: "/", host: value }, PORT);
    expect(at("relay.example.com")).toBe(true);
    expect(at("Relay.Example.com:443")).toBe(true);
    expect(at("relay-internal.example")).toBe(true);
    expect(at("relay-internal.example:8080")).toBe(true);
    expect(at("proxy.example:8443")).toBe(true);
    expect(at("proxy.example:9000")).toBe(false);
    expect(at("proxy.example")).toBe(false);
    expect(at("example.com")).toBe(false);
    expect(at("relay.example.com.attacker.example")).toBe(false);
  });

  it("when the served names are logged, then each is written as a person would type it, with the port served", () => {
    const policy = servedHosts({
      addr: { host: "127.0.0.1", port: 0 },
      consoleUrl: "https://relay.example.com/",
      allowed: [{ name: "relay.lan", port: 8443 }],
    });
    expect(describeHosts(policy, 41234)).toEqual([
      "127.0.0.1:41234",
      "localhost:41234",
      "[::1]:41234",
      "relay.example.com",
      "relay.lan:8443",
    ]);
  });

  it("when HTTP_ADDR is a name or an address of the host, then that name is answered on the port served, and loopback names only if it is loopback or every address", () => {
    const named = servedHosts({ addr: { host: "relay-1", port: PORT }, consoleUrl: undefined, allowed: [] });
    expect(hostAllowed(named, { url: "/", host: "relay-1:9464" }, PORT)).toBe(true);
    expect(hostAllowed(named, { url: "/", host: "relay-1:9465" }, PORT)).toBe(false);
    expect(hostAllowed(named, { url: "/", host: "localhost:9464" }, PORT)).toBe(false);
    expect(named.beyondLoopback).toBe(true);
    const every = servedHosts({ addr: { host: "0.0.0.0", port: PORT }, consoleUrl: undefined, allowed: [] });
    expect(hostAllowed(every, { url: "/", host: "localhost:9464" }, PORT)).toBe(true);
    expect(hostAllowed(every, { url: "/", host: "0.0.0.0:9464" }, PORT)).toBe(false);
    expect(hostAllowed(every, { url: "/", host: "10.0.0.7:9464" }, PORT)).toBe(false);
    expect(every.beyondLoopback).toBe(true);
    expect(loopback.beyondLoopback).toBe(false);
  });
});

describe("the Origin of a form post", () => {
  it("when the Origin names a served host, then it is accepted, whichever served name the request itself used", () => {
    expect(originAllowed(loopback, "http://127.0.0.1:9464", PORT)).toBe(true);
    expect(originAllowed(loopback, "http://localhost:9464/batches/x", PORT)).toBe(true);
  });

  it("when the Origin is forged to match a forged Host, then it is refused: it is compared with the served hosts, not with the request's Host", () => {
    expect(originAllowed(loopback, "http://attacker.example:9464", PORT)).toBe(false);
    expect(originAllowed(loopback, "http://127.0.0.1:8080", PORT)).toBe(false);
    expect(originAllowed(loopback, "null", PORT)).toBe(false);
    expect(originAllowed(loopback, "not a url", PORT)).toBe(false);
  });

  it("when the console is served as https://… behind a proxy, then its Origin without a port is accepted", () => {
    const proxied = servedHosts({
      addr: { host: "127.0.0.1", port: PORT },
      consoleUrl: "https://relay.example.com/",
      allowed: [],
    });
    expect(originAllowed(proxied, "https://relay.example.com", PORT)).toBe(true);
    expect(originAllowed(proxied, "https://relay.example.com.attacker.example", PORT)).toBe(false);
  });
});
