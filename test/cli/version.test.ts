import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { packageVersion } from "../../src/cli/package-version.js";
import { childEnv, distPath } from "../support/processes.js";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

async function declaredVersion(): Promise<string> {
  return z
    .object({ version: z.string() })
    .parse(JSON.parse(await readFile(resolve(ROOT, "package.json"), "utf8"))).version;
}

describe("invoice-relay --version", () => {
  it("when the built binary is asked for its version (--version or -V), then it prints package.json's and exits 0", async () => {
    const version = await declaredVersion();
    for (const flag of ["--version", "-V"]) {
      const { stdout, stderr } = await run(process.execPath, [distPath("workers/cli.js"), flag], {
        env: childEnv({}),
      });
      expect([flag, stdout, stderr]).toEqual([flag, `${version}\n`, ""]);
    }
  });

  it("when it is run as `npx invoice-relay --version` in the project, then it prints the same", async () => {
    const { stdout } = await run("npx", ["--no-install", "invoice-relay", "--version"], {
      cwd: ROOT,
      env: childEnv({ HOME: process.env["HOME"] ?? ROOT, npm_config_update_notifier: "false" }),
    });
    expect(stdout).toBe(`${await declaredVersion()}\n`);
  });

  it("when the version is read from the sources or the build, then both find the project's package.json", async () => {
    const version = await declaredVersion();
    expect(packageVersion(resolve(ROOT, "src/cli"))).toBe(version);
    expect(packageVersion(resolve(ROOT, "dist/src/cli"))).toBe(version);
  });
});
