import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { header, submit } from "./support/client.js";
import { simulatorsPerTest } from "./support/simulators.js";

const README = resolve(import.meta.dirname, "../../src/simulator/README.md");
const start = simulatorsPerTest();

/** The cells of the README's row for the injected fault driven by `option` (`| status | when | extra headers |`). */
async function faultRow(option: string): Promise<{ status: number; headers: string }> {
  const row = (await readFile(README, "utf8"))
    .split("\n")
    .find((line) => /^\|\s*\d{3}\s*\|/.test(line) && line.includes(`injected fault (\`${option}\`)`));
  const [, status = "", , headers = ""] = (row ?? "").split("|").map((c) => c.trim());
  expect(row, `src/simulator/README.md has no row for ${option}`).toBeDefined();
  return { status: Number(status), headers };
}

describe("src/simulator/README.md, the injected faults", () => {
  it("when the README says what an injected fault answers, then the simulator answers that status with Retry-After exactly when the row says so", async () => {
    for (const option of ["errorRate", "throttleRate"] as const) {
      const row = await faultRow(option);
      const sim = await start({ [option]: 1, retryAfterSeconds: 3 });
      const answer = await submit(sim);
      expect([option, answer.status]).toEqual([option, row.status]);
      expect([option, header(answer, "retry-after") !== undefined]).toEqual([
        option,
        row.headers.includes("Retry-After"),
      ]);
    }
  });
});
