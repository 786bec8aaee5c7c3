import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/commands/check.js";
import { runCommand } from "../../src/cli/commands/run.js";
import { FlagError } from "../../src/cli/errors/flag-error.js";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { buildProgram, runProgram } from "../../src/cli/program.js";

async function cli(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  const stderr = new PassThrough();
  let text = "";
  stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const code = await runProgram(
    buildProgram([runCommand, checkCommand]),
    ["node", "invoice-relay", ...args],
    {
      stdout: new PassThrough(),
      stderr,
    },
  );
  return { code, stderr: text };
}

describe("flags a command cannot use", () => {
  it("when a flag's value is unusable, then the error is a FlagError with a stable code", () => {
    expect(new FlagError("--x is wrong").code).toBe("CLI_FLAG_INVALID");
  });

  it.each([
    [["run", "--deadline", "soon"], '--deadline "soon" is not a duration'],
    [["check", "--show", "-1", "a.csv"], "--show must be a whole number, 0 or more"],
  ])("when %j is run, then it exits 1 (bad configuration) naming the flag", async (args, message) => {
    const result = await cli(args);
    expect(result.code).toBe(ExitCode.CouldNotFinish);
    expect(result.stderr).toContain(message);
  });
});
