import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { appendFile, cp, mkdtemp, readdir, readFile, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { childEnv } from "../support/processes.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** What `npm run build` reads: the compiled folders and the configuration. */
const BUILD_INPUTS = ["src", "workers", "bench", "package.json", "tsconfig.json", "tsconfig.build.json"];
const run = promisify(execFile);
const cleanups = cleanupsAfterEach();

/**
 * A copy of the project's build inputs and its dist/ (timestamps kept: the copy is as fresh as the
 * project's build) beside its node_modules, to build apart.
 */
async function projectCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "build-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  for (const input of [...BUILD_INPUTS, "dist"])
    if (existsSync(join(ROOT, input)))
      await cp(join(ROOT, input), join(dir, input), { recursive: true, preserveTimestamps: true });
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

async function build(dir: string): Promise<void> {
  await run("npm", ["run", "build"], {
    cwd: dir,
    env: childEnv({ HOME: process.env["HOME"] ?? dir, npm_config_update_notifier: "false" }),
  });
}

/** When each compiled file of dist/ was last written. */
async function compiledFiles(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const names = await readdir(join(dir, "dist"), { recursive: true });
  for (const name of names.filter((n) => n.endsWith(".js")).sort())
    out.set(name, (await stat(join(dir, "dist", name))).mtimeMs);
  return out;
}

describe("npm run build (which npm run demo and npm test run first)", () => {
  it("when the build is fresh, then it compiles nothing again; when a source is newer, then its output is rebuilt", async () => {
    const dir = await projectCopy();
    await build(dir);
    const built = await compiledFiles(dir);
    expect(built.has("workers/cli.js")).toBe(true);

    await build(dir);
    expect(await compiledFiles(dir)).toEqual(built);

    const mark = randomUUID();
    await appendFile(join(dir, "src/cli/exit-codes.ts"), `// ${mark}\n`);
    await build(dir);
    expect(await readFile(join(dir, "dist/src/cli/exit-codes.js"), "utf8")).toContain(mark);
  }, 300_000);
});
