import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const ROOT = resolve(import.meta.dirname, "../..");

const Manifest = z.object({
  engines: z.object({ node: z.string() }),
  allowScripts: z.record(z.string(), z.boolean()).default({}),
});
const Lock = z.object({
  packages: z.record(
    z.string(),
    z.object({
      version: z.string().optional(),
      // npm accepts both shapes; old packages still publish the array one.
      engines: z.union([z.record(z.string(), z.string()), z.array(z.string())]).optional(),
      hasInstallScript: z.boolean().optional(),
    }),
  ),
});

async function json(file: string): Promise<unknown> {
  return JSON.parse(await readFile(join(ROOT, file), "utf8")) as unknown;
}

/** `node_modules/a/node_modules/@s/b` → `@s/b`: the name npm matches an allowScripts entry against. */
function nameAt(path: string): string {
  const marker = "node_modules/";
  return path.slice(path.lastIndexOf(marker) + marker.length);
}

async function lockedPackages() {
  const lock = Lock.parse(await json("package-lock.json"));
  return Object.entries(lock.packages)
    .filter(([path]) => path !== "")
    .map(([path, entry]) => ({ path, name: nameAt(path), ...entry }));
}

/** The first column of the install-script table in docs/development.md ("Dependencies"). */
async function documentedScripts(): Promise<string[]> {
  const text = await readFile(join(ROOT, "docs/development.md"), "utf8");
  const section = text.split(/^## /m).find((s) => s.startsWith("Dependencies")) ?? "";
  return [...section.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1] ?? "");
}

describe("the installed tree", () => {
  it("when npm installs the lock file on the oldest Node that package.json admits, then no package asks for a newer one", async () => {
    const manifest = Manifest.parse(await json("package.json"));
    const oldest = semver.minVersion(manifest.engines.node)?.version;
    expect(oldest, `engines.node ${manifest.engines.node}`).toBeDefined();
    const refusing = (await lockedPackages())
      .map((p) => ({ ...p, range: Array.isArray(p.engines) ? undefined : p.engines?.["node"] }))
      .filter((p) => p.range !== undefined && !semver.satisfies(oldest ?? "", p.range))
      .map((p) => `${p.path}@${p.version ?? "?"} wants node ${p.range ?? ""}`);
    expect(refusing, "pin or override these (package.json `overrides`) to versions that run there").toEqual(
      [],
    );
  });

  it("when a locked package has an install script, then allowScripts decides it by name, for any version", async () => {
    const { allowScripts } = Manifest.parse(await json("package.json"));
    const withScripts = (await lockedPackages()).filter((p) => p.hasInstallScript === true);
    const undecided = withScripts
      .filter((p) => allowScripts[p.name] === undefined)
      .map((p) => `${p.name}@${p.version ?? "?"}`);
    expect(
      undecided,
      "decide each (npm install-scripts deny NAME, or approve --no-allow-scripts-pin NAME) and say why in docs/development.md",
    ).toEqual([]);
    // A pinned entry (name@version) would turn the next release back into an unreviewed one.
    expect(Object.keys(allowScripts).filter((key) => key.lastIndexOf("@") > 0)).toEqual([]);
  });

  it("when docs/development.md lists the install scripts, then it names exactly the packages allowScripts decides", async () => {
    const { allowScripts } = Manifest.parse(await json("package.json"));
    expect((await documentedScripts()).sort()).toEqual(Object.keys(allowScripts).sort());
  });
});
