import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CLOSING_BOUND_MS } from "../../src/cli/hard-stop.js";
import { parseDuration } from "../../src/config/duration.js";
import { SETTINGS } from "../../src/config/settings.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { runTool } from "../support/platform-tools.js";

const SYSTEMD = resolve(import.meta.dirname, "../../deploy/systemd");
/** The interpreter the units name: Debian's (and NodeSource's) nodejs package installs it there. */
const UNIT_NODE = "/usr/bin/node";
const cleanups = cleanupsAfterEach();

/** A unit file's settings, `Section.Key` → values in order (systemd-analyze has checked the syntax). */
async function unitSettings(name: string): Promise<Map<string, string[]>> {
  const settings = new Map<string, string[]>();
  let section = "";
  for (const line of (await readFile(join(SYSTEMD, name), "utf8")).split("\n")) {
    const header = /^\[(\w+)\]$/.exec(line);
    if (header !== null) section = header[1] ?? "";
    const setting = /^(\w+)=(.*)$/.exec(line);
    if (setting === null) continue;
    const key = `${section}.${setting[1] ?? ""}`;
    settings.set(key, [...(settings.get(key) ?? []), setting[2] ?? ""]);
  }
  return settings;
}

function one(settings: Map<string, string[]>, key: string): string {
  const values = settings.get(key) ?? [];
  expect(values, key).toHaveLength(1);
  return values[0] ?? "";
}

/** A systemd time span in ms, as systemd itself reads it. */
async function timespanMs(span: string): Promise<number> {
  const parsed = await runTool("systemdAnalyze", ["timespan", span]);
  const micros = /μs: (\d+)/.exec(parsed.output)?.[1];
  expect(micros, parsed.output).toBeDefined();
  return Number(micros) / 1000;
}

/** The units in a scratch folder, their interpreter the node running this test (where UNIT_NODE may not be). */
async function scratchUnits(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "units-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  for (const name of await readdir(SYSTEMD))
    if (/\.(service|timer)$/.test(name)) {
      const text = await readFile(join(SYSTEMD, name), "utf8");
      await writeFile(
        join(dir, name),
        text.replaceAll(`ExecStart=${UNIT_NODE} `, `ExecStart=${process.execPath} `),
      );
    }
  return dir;
}

describe("the systemd units shipped in deploy/systemd", () => {
  it("when systemd-analyze verifies each unit, then it loads without an error or a warning", async () => {
    const dir = await scratchUnits();
    const units = [
      ["invoice-relay-run.service", "invoice-relay-run.timer"],
      ["invoice-relay.service"],
      ["invoice-relay-worker@1.service"],
    ];
    for (const names of units) {
      const verified = await runTool("systemdAnalyze", [
        "verify",
        "--man=no",
        ...names.map((n) => join(dir, n)),
      ]);
      expect([names, verified.output.trim()]).toEqual([names, ""]);
      expect(verified.code).toBe(0);
    }
    const runUnit = await unitSettings("invoice-relay-run.service");
    expect(one(runUnit, "Service.ExecStart").startsWith(`${UNIT_NODE} `)).toBe(true);
  });

  it("when the sysusers and tmpfiles entries are applied to an empty root, then the user and its folders are made as the units need them", async () => {
    const root = await mkdtemp(join(tmpdir(), "root-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, "etc"));
    const users = await runTool("systemdSysusers", ["--root", root, join(SYSTEMD, "invoice-relay.sysusers")]);
    expect(users.code, users.output).toBe(0);
    const passwd = await readFile(join(root, "etc/passwd"), "utf8");
    const entry = passwd.split("\n").find((l) => l.startsWith("invoice-relay:"));
    expect(entry).toMatch(/^invoice-relay:x:\d+:\d+:[^:]*:\/srv\/invoice-relay:\/usr\/sbin\/nologin$/);
    const uid = Number(entry?.split(":")[2]);

    const folders = await runTool("systemdTmpfiles", [
      "--root",
      root,
      "--create",
      join(SYSTEMD, "invoice-relay.tmpfiles"),
    ]);
    expect(folders.code, folders.output).toBe(0);
    const drop = await stat(join(root, "srv/invoice-relay/drop"));
    expect([drop.isDirectory(), drop.uid, (drop.mode & 0o7777).toString(8)]).toEqual([true, uid, "2770"]);
    expect((await stat(join(root, "etc/invoice-relay"))).isDirectory()).toBe(true);

    // Every unit runs as that user; those that write reports may write the drop folder, the worker nothing.
    for (const name of [
      "invoice-relay-run.service",
      "invoice-relay.service",
      "invoice-relay-worker@.service",
    ]) {
      const unit = await unitSettings(name);
      expect([name, one(unit, "Service.User"), one(unit, "Service.ProtectSystem")]).toEqual([
        name,
        "invoice-relay",
        "strict",
      ]);
      expect([name, unit.get("Service.ReadWritePaths")]).toEqual([
        name,
        name.includes("worker") ? undefined : ["/srv/invoice-relay/drop"],
      ]);
    }
  });

  it("when the units' timeouts are read as systemd reads them, then a pass's deadline and the shutdown grace end first", async () => {
    const graceMs = Number(SETTINGS.shutdownGraceMs.default);
    const runUnit = await unitSettings("invoice-relay-run.service");
    const deadline = /--deadline (\S+)/.exec(one(runUnit, "Service.ExecStart"))?.[1] ?? "";
    const deadlineMs = parseDuration(deadline);
    expect(deadlineMs).toBeGreaterThan(0);
    // A pass that cannot end by its deadline exits by itself within the grace and the closing bound.
    expect(await timespanMs(one(runUnit, "Service.TimeoutStartSec"))).toBeGreaterThan(
      (deadlineMs ?? 0) + graceMs + CLOSING_BOUND_MS,
    );
    // A stop lets requests in flight finish within SHUTDOWN_GRACE_MS before systemd kills.
    for (const name of [
      "invoice-relay-run.service",
      "invoice-relay.service",
      "invoice-relay-worker@.service",
    ]) {
      const stopMs = await timespanMs(one(await unitSettings(name), "Service.TimeoutStopSec"));
      expect([name, stopMs > graceMs]).toEqual([name, true]);
    }
  });
});
