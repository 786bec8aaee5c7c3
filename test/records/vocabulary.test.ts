import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { BATCH_STATES, FILE_FORMATS, KEY_STATUSES, ROW_DECISIONS } from "../../src/ledger/statuses.js";

const MIGRATIONS = new URL("../../src/records/migrations/", import.meta.url);

/** Every `CHECK (<column> IN ('a', 'b', …))` of the migrations, by column: the values it allows. */
async function checkLists(): Promise<Map<string, string[][]>> {
  const lists = new Map<string, string[][]>();
  for (const name of (await readdir(MIGRATIONS)).filter((n) => n.endsWith(".sql")).sort()) {
    const sql = await readFile(new URL(name, MIGRATIONS), "utf8");
    for (const match of sql.matchAll(/CHECK \((\w+) IN \(([^)]*)\)\)/g)) {
      const values = [...(match[2] ?? "").matchAll(/'([^']*)'/g)].map((v) => v[1] ?? "");
      lists.set(match[1] ?? "", [...(lists.get(match[1] ?? "") ?? []), values]);
    }
  }
  return lists;
}

describe("the results of record speak the ledger's vocabulary", () => {
  it("when a migration lists the values a column allows, then they are exactly the ledger's list of them", async () => {
    const lists = await checkLists();
    expect([...lists.keys()].sort()).toEqual(["decision", "format", "state", "status"]);
    expect(lists.get("format")).toEqual([[...FILE_FORMATS]]);
    expect(lists.get("state")).toEqual([[...BATCH_STATES]]);
    expect(lists.get("status")).toEqual([[...KEY_STATUSES]]);
    expect(lists.get("decision")).toEqual([[...ROW_DECISIONS]]);
  });
});
