import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
const WORKERS = join(ROOT, "workers");

/**
 * The stages of src/ and what each may import (docs/development.md, "Project layout"): imports run one way, from
 * the commands down to the ledger, so no two stages import each other.
 */
const ALLOWED: Record<string, readonly string[]> = {
  errors: [],
  names: [],
  log: ["names"],
  lifecycle: [],
  invoice: [],
  config: ["errors"],
  tracing: ["errors", "log"],
  ledger: ["errors", "names"],
  submit: ["errors", "invoice", "ledger", "tracing"],
  capacity: ["ledger", "submit", "tracing"],
  queue: ["capacity", "config", "errors", "invoice", "ledger", "log", "submit", "tracing"],
  ingest: ["errors", "invoice", "ledger", "lifecycle", "log", "names", "queue", "tracing"],
  results: ["errors", "ingest", "invoice", "ledger", "log", "names"],
  "use-cases": [
    "config",
    "errors",
    "ingest",
    "invoice",
    "ledger",
    "lifecycle",
    "log",
    "names",
    "queue",
    "results",
    "tracing",
  ],
  simulator: ["errors", "invoice", "log"],
  agentnet: ["config", "errors", "log", "submit"],
  dev: ["capacity", "errors", "ledger", "lifecycle", "simulator", "submit"],
  ops: ["config", "errors", "ledger", "log", "names", "queue"],
  records: ["config", "errors", "ledger", "log", "tracing"],
  workers: ["cli"],
  cli: [
    "agentnet",
    "config",
    "errors",
    "ingest",
    "invoice",
    "ledger",
    "lifecycle",
    "log",
    "names",
    "ops",
    "queue",
    "records",
    "results",
    "simulator",
    "tracing",
    "use-cases",
  ],
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => join(e.parentPath, e.name));
}

/** The files of src/ and workers/, each with its stage (`workers` for workers/). */
async function stagedFiles(): Promise<{ file: string; stage: string }[]> {
  return [
    ...(await sourceFiles(SRC)).map((file) => ({ file, stage: stageOf(file) })),
    ...(await sourceFiles(WORKERS)).map((file) => ({ file, stage: "workers" })),
  ];
}

function stageOf(file: string): string {
  return file.startsWith(WORKERS) ? "workers" : (relative(SRC, file).split("/")[0] ?? "");
}

/** What a file imports: relative ones resolved to the .ts file they name, and packages by name. */
async function importsOf(file: string): Promise<{ files: string[]; packages: string[] }> {
  const text = await readFile(file, "utf8");
  const files: string[] = [];
  const packages: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
    const spec = match[1] ?? "";
    if (spec.startsWith(".")) files.push(resolve(dirname(file), spec).replace(/\.js$/, ".ts"));
    else packages.push(spec);
  }
  return { files, packages };
}

/** Every import of one stage's files that reaches into another stage: "from-file -> stage". */
async function crossings(): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const { file, stage } of await stagedFiles()) {
    for (const target of (await importsOf(file)).files.map(stageOf)) {
      if (target === stage) continue;
      found.set(stage, [...(found.get(stage) ?? []), `${relative(ROOT, file)} -> ${target}`]);
    }
  }
  return found;
}

/** The import circles among the files of one stage, each as "a -> b -> a". */
async function circlesWithinStages(): Promise<string[]> {
  const edges = new Map<string, string[]>();
  for (const { file, stage } of await stagedFiles())
    edges.set(
      file,
      (await importsOf(file)).files.filter((f) => stageOf(f) === stage),
    );
  const circles = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const visit = (file: string, path: string[]) => {
    state.set(file, "open");
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === "open") {
        const circle = [...path.slice(path.indexOf(next)), file, next].map((f) => relative(ROOT, f));
        circles.add(circle.join(" -> "));
      } else if (state.get(next) === undefined) visit(next, [...path, file]);
    }
    state.set(file, "done");
  };
  for (const file of edges.keys()) if (state.get(file) === undefined) visit(file, []);
  return [...circles];
}

describe("the stages of src/ and workers/", () => {
  it("when a file imports from another stage, then that stage is one its own may use, so imports never run in a circle", async () => {
    const stages = (await readdir(SRC, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    stages.push("workers");
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

  it("when a file imports another of its own stage, then the imports never lead back to it", async () => {
    expect(await circlesWithinStages()).toEqual([]);
  });

  it("when a file outside src/ledger/ needs the ledger, then it goes through its verbs: the key names and the script runner stay private", async () => {
    const reaching: string[] = [];
    for (const { file, stage } of await stagedFiles()) {
      if (stage === "ledger") continue;
      for (const target of (await importsOf(file)).files)
        if (/\/src\/ledger\/(names|lua-script)\.ts$/.test(target))
          reaching.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
    }
    expect(reaching).toEqual([]);
  });

  it("when a file talks to Redis, then it is in the ledger, the queue or the dev helpers: only they import ioredis", async () => {
    const importing: string[] = [];
    for (const { file, stage } of await stagedFiles())
      if (!["ledger", "queue", "dev"].includes(stage) && (await importsOf(file)).packages.includes("ioredis"))
        importing.push(relative(ROOT, file));
    expect(importing).toEqual([]);
  });

  it("when a command ends, then it ends by itself: no entry point forces the process to exit", async () => {
    const forcing: string[] = [];
    for (const file of await sourceFiles(WORKERS))
      if ((await readFile(file, "utf8")).includes("process.exit(")) forcing.push(relative(ROOT, file));
    expect(forcing).toEqual([]);
  });
});
