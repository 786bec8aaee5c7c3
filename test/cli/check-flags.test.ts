import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { tempDropDir } from "../support/drop.js";
import { runCli } from "../support/cli-run.js";

const SAMPLES = join(import.meta.dirname, "../../samples");
const cleanups = cleanupsAfterEach();

/** `check` as an operator runs it: no Redis, no service, a drop folder of its own. */
async function check(args: readonly string[]) {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  return runCli(["check", ...args], { DROP_DIR: drop.dir, LOG_LEVEL: "warn" });
}

describe("check's --source and --sources, one letter apart", () => {
  it("when the profiles file is given to --source, then the error asks whether --sources was meant", async () => {
    const file = join(SAMPLES, "sources.yaml");
    const { code, output } = await check(["--source", file, join(SAMPLES, "invoices-eu.csv")]);
    expect(code).toBe(1);
    expect(output).toContain(`--source ${file}: no SFTP source of that name`);
    expect(output).toContain(`Did you mean --sources ${file} (the source profiles file)?`);
  });

  it("when an SFTP source's name is given to --sources, then the error names the flag and asks whether --source was meant", async () => {
    const { code, output } = await check(["--sources", "acme"]);
    expect(code).toBe(1);
    expect(output).toContain("--sources acme: does not exist; --sources names the source profiles file");
    expect(output).toContain("Did you mean --source acme (the SFTP source of that name)?");
    expect(output).not.toContain("SOURCES_FILE acme");
  });

  it("when a flag is misspelt, then commander names the flags it may have meant", async () => {
    const { code, output } = await check(["--sourcs", "acme"]);
    expect(code).toBe(1);
    expect(output).toContain("(Did you mean one of --source, --sources?)");
  });
});
