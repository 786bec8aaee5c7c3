import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";

describe("CONSOLE_ALLOWED_HOSTS", () => {
  it("when it lists names, addresses and ports, then each is read as a name and an optional port", () => {
    expect(
      loadConfig({
        CONSOLE_ALLOWED_HOSTS: " relay.example.com , Proxy.Example:8443,10.0.0.5:9464,[::1]:9464",
      }).consoleAllowedHosts,
    ).toEqual([
      { name: "relay.example.com", port: undefined },
      { name: "proxy.example", port: 8443 },
      { name: "10.0.0.5", port: 9464 },
      { name: "::1", port: 9464 },
    ]);
  });

  it("when it is not set, then no host beyond HTTP_ADDR, loopback and CONSOLE_URL is allowed", () => {
    expect(loadConfig({}).consoleAllowedHosts).toBeUndefined();
  });

  it.each([
    "https://relay.example.com",
    "relay.example.com/console",
    "*.example.com",
    "relay.example.com:99999",
    "relay.example.com:",
    "user@relay.example.com",
    ",",
  ])(
    "when it holds %j, then the configuration is refused naming the variable and the form to write",
    (text) => {
      expect(() => loadConfig({ CONSOLE_ALLOWED_HOSTS: text })).toThrow(
        /CONSOLE_ALLOWED_HOSTS must be a comma-separated list of host or host:port/,
      );
    },
  );
});
