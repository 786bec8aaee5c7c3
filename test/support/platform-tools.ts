import { spawn } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { tmpdir } from "node:os";

/**
 * The operators' own tools the deployment files are tried with, each from a Debian package that
 * `bash .ci/run` installs when it is missing.
 */
export const PLATFORM_TOOLS = {
  promtool: { path: "/usr/bin/promtool", debianPackage: "prometheus" },
  systemdAnalyze: { path: "/usr/bin/systemd-analyze", debianPackage: "systemd" },
  systemdSysusers: { path: "/usr/bin/systemd-sysusers", debianPackage: "systemd" },
  systemdTmpfiles: { path: "/usr/bin/systemd-tmpfiles", debianPackage: "systemd" },
} as const;

export type PlatformTool = keyof typeof PLATFORM_TOOLS;

export interface ToolResult {
  readonly code: number | null;
  readonly output: string;
}

/** Runs one of the tools with `args`; a tool that is not installed fails the test, naming its package. */
export async function runTool(
  tool: PlatformTool,
  args: readonly string[],
  cwd?: string,
): Promise<ToolResult> {
  const { path, debianPackage } = PLATFORM_TOOLS[tool];
  try {
    await access(path, constants.X_OK);
  } catch {
    throw new Error(`${path} is missing: install Debian's ${debianPackage} package (bash .ci/run does)`);
  }
  const child = spawn(path, args, {
    cwd,
    env: { PATH: process.env["PATH"] ?? "", TMPDIR: tmpdir(), LANG: "C.UTF-8" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      resolve({ code, output });
    });
  });
}
