import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DOCS = join(ROOT, "docs");

/**
 * The docs are read, not searched: each says what is true now, for a reader new to it. A page a reader finishes
 * in one sitting stays under 30 KB, all of docs/ under 200 KB, and the benchmarks page shows today's
 * figures and how to reproduce them in at most 350 lines (the runs that led there live in git).
 */
const KB = 1000;
const PAGE_LIMIT_BYTES = 30 * KB;
const DOCS_LIMIT_BYTES = 200 * KB;
const BENCHMARKS_LIMIT_LINES = 350;
/** The README is read in one sitting before anything else. */
const README_LIMIT_BYTES = 25 * KB;

async function markdownPages(): Promise<{ name: string; bytes: number }[]> {
  const names = (await readdir(DOCS)).filter((n) => n.endsWith(".md")).sort();
  return Promise.all(names.map(async (name) => ({ name, bytes: (await stat(join(DOCS, name))).size })));
}

describe("the size of README.md and docs/", () => {
  it("when a page of docs/ grows past 30 KB, then it is named", async () => {
    const pages = await markdownPages();
    expect(pages.length).toBeGreaterThan(0);
    const over = pages
      .filter((p) => p.bytes > PAGE_LIMIT_BYTES)
      .map((p) => `docs/${p.name}: ${p.bytes} bytes`);
    expect(over).toEqual([]);
  });

  it("when docs/ holds more than 200 KB of Markdown in all, then the total is given", async () => {
    const total = (await markdownPages()).reduce((sum, p) => sum + p.bytes, 0);
    expect(total, `docs/*.md hold ${total} bytes in all`).toBeLessThanOrEqual(DOCS_LIMIT_BYTES);
  });

  it("when docs/benchmarks.md grows past 350 lines, then its line count is given", async () => {
    const text = await readFile(join(DOCS, "benchmarks.md"), "utf8");
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    expect(lines, "lines of docs/benchmarks.md").toBeLessThanOrEqual(BENCHMARKS_LIMIT_LINES);
  });

  it("when README.md grows past 25 KB, then its size is given", async () => {
    const bytes = (await stat(join(ROOT, "README.md"))).size;
    expect(bytes, "bytes of README.md").toBeLessThanOrEqual(README_LIMIT_BYTES);
  });
});
