import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");

/**
 * The stages of src/ and what each may import (docs/development.md, "Project layout"): imports run one way, from
 * the commands down to the ledger, so no two stages import each other.
 */
const ALLOWED: Record<string, readonly string[]> = {
  errors: [],
  log: [],
  lifecycle: [],
  invoice: [],
  config: ["errors"],
  ledger: ["errors"],
  submit: ["errors", "invoice", "ledger"],
  queue: ["config", "errors", "invoice", "ledger", "log", "submit"],
  ingest: ["errors", "invoice", "ledger", "log", "queue"],
  results: ["ingest", "invoice", "ledger", "log"],
  "use-cases": ["config", "errors", "ingest", "invoice", "ledger", "log", "queue", "results"],
  simulator: ["errors", "invoice", "log"],
  agentnet: ["config", "errors", "log", "submit"],
  dev: ["errors", "lifecycle", "simulator"],
  ops: ["config", "errors", "ledger", "log", "queue"],
  records: ["config", "errors", "ledger", "log"],
  cli: [
    "agentnet",
    "config",
    "errors",
    "ingest",
    "invoice",
    "ledger",
    "lifecycle",
    "log",
    "ops",
    "queue",
    "records",
    "results",
    "simulator",
    "use-cases",
  ],
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => join(e.parentPath, e.name));
}

/** Every import of one stage's files that reaches into another stage: "from-file -> stage". */
async function crossings(): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const file of await sourceFiles(SRC)) {
    const stage = relative(SRC, file).split("/")[0] ?? "";
    const text = await readFile(file, "utf8");
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = relative(SRC, resolve(dirname(file), match[1] ?? "")).split("/")[0] ?? "";
      if (target === stage) continue;
      found.set(stage, [...(found.get(stage) ?? []), `${relative(SRC, file)} -> ${target}`]);
    }
  }
  return found;
}

describe("the stages of src/", () => {
  it("when a file imports from another stage, then that stage is one its own may use, so imports never run in a circle", async () => {
    const stages = (await readdir(SRC, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(
      stages.filter((s) => !(s in ALLOWED)),
      "stages missing from ALLOWED",
    ).toEqual([]);
    const wrong: string[] = [];
    for (const [stage, imports] of await crossings())
      for (const edge of imports) {
        const target = edge.split(" -> ")[1] ?? "";
        if (!(ALLOWED[stage] ?? []).includes(target)) wrong.push(edge);
      }
    expect(wrong).toEqual([]);
  });

  it("when the allowed imports are followed from any stage, then they never lead back to it", () => {
    const reaches = (from: string, seen = new Set<string>()): Set<string> => {
      for (const next of ALLOWED[from] ?? [])
        if (!seen.has(next)) {
          seen.add(next);
          reaches(next, seen);
        }
      return seen;
    };
    const circular = Object.keys(ALLOWED).filter((stage) => reaches(stage).has(stage));
    expect(circular).toEqual([]);
  });
});
