import { describe, expect, it } from "vitest";
import { parseHttpAddr, resolveHttpAddr, START_HTTP_ADDR } from "../../src/config/http-addr.js";
import { loadConfig } from "../../src/config/load.js";

describe("HTTP_ADDR", () => {
  it.each([
    ["127.0.0.1:9464", { host: "127.0.0.1", port: 9464 }],
    ["0.0.0.0:0", { host: "0.0.0.0", port: 0 }],
    ["relay.internal:8080", { host: "relay.internal", port: 8080 }],
    ["[::1]:9464", { host: "::1", port: 9464 }],
    [" off ", "off"],
    ["OFF", "off"],
  ])("when it is %j, then it reads as %j", (text, expected) => {
    expect(parseHttpAddr(text)).toEqual(expected);
  });

  it.each(["9464", "127.0.0.1", ":9464", "127.0.0.1:65536", "::1:9464", "http://127.0.0.1:9464", "on"])(
    "when it is %j, then the configuration is refused naming HTTP_ADDR and the form to write",
    (text) => {
      expect(parseHttpAddr(text)).toBeUndefined();
      expect(() => loadConfig({ HTTP_ADDR: text })).toThrow(/HTTP_ADDR must be host:port .* or off/);
    },
  );

  it("when it is not set, then start listens on 127.0.0.1:9464 and worker and run not at all", () => {
    const unset = loadConfig({}).httpAddr;
    expect(resolveHttpAddr(unset, START_HTTP_ADDR)).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(resolveHttpAddr(unset, "off")).toBeUndefined();
  });

  it("when it is set, then it wins over a command's default, off included", () => {
    const set = loadConfig({ HTTP_ADDR: "0.0.0.0:9100" }).httpAddr;
    expect(resolveHttpAddr(set, "off")).toEqual({ host: "0.0.0.0", port: 9100 });
    expect(resolveHttpAddr(loadConfig({ HTTP_ADDR: "off" }).httpAddr, START_HTTP_ADDR)).toBeUndefined();
  });
});
