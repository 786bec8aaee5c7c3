import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

const ledgerDir = new URL("../../src/ledger/", import.meta.url);

/**
 * The names in the first column of the docs/ledger.md table whose header's first cell is `header`
 * (`file`, `script`, `include`), sorted: each row's name in backticks.
 */
async function namesInTable(header: string): Promise<string[]> {
  const page = await readFile(new URL("../../docs/ledger.md", import.meta.url), "utf8");
  const lines = page.split("\n");
  const start = lines.findIndex((l) => new RegExp(String.raw`^\| ${header} +\|`).test(l));
  expect(start, `docs/ledger.md has a table headed "${header}"`).toBeGreaterThanOrEqual(0);
  const rows = lines.slice(start + 2);
  const end = rows.findIndex((l) => !l.startsWith("|"));
  return rows
    .slice(0, end === -1 ? rows.length : end)
    .map((l) => /^\| `([^`]+)`/.exec(l)?.[1] ?? l)
    .sort();
}

async function filesIn(folder: string, ext: string): Promise<string[]> {
  const entries = await readdir(new URL(folder, ledgerDir), { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(`.${ext}`))
    .map((e) => e.name)
    .sort();
}

describe("docs/ledger.md's file and script tables", () => {
  it("when a .ts file is added to or removed from src/ledger/, then the file table names exactly those there", async () => {
    const named = (await namesInTable("file")).filter((n) => n.endsWith(".ts"));
    expect(named).toEqual(await filesIn("./", "ts"));
  });

  it("when a script is added to or removed from src/ledger/lua/, then the script table names exactly those there", async () => {
    expect(await namesInTable("script")).toEqual(await filesIn("lua/", "lua"));
  });

  it("when an include is added to or removed from src/ledger/lua/includes/, then the include table names exactly those", async () => {
    expect(await namesInTable("include")).toEqual(await filesIn("lua/includes/", "lua"));
  });
});
