import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { cliEnv } from "../support/cli-env.js";
import { runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const ROWS = 600;
const cleanups = cleanupsAfterEach();

describe("run's word on the night's speed", () => {
  it("when the service has no limit but refuses some requests at random, then run gives the speed limit as status words it, claims no service capacity, and counts the refusals the service gave and their share", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 5, throttleRate: 0.05, retryAfterSeconds: 1 });
    cleanups.push(() => sim.close());
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const rows = Array.from({ length: ROWS }, (_, i) => `S-${i},EUR,DE,eu-10y`);
    await writeFile(
      join(drop.dir, "speed.csv"),
      ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
    );
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "speed", dropDir: drop.dir });
    const result = await runCli(["run"], env, 60_000);
    expect(result.code, result.output).toBe(0);

    const said = result.output.split("\n").filter((line) => line.startsWith("invoice-relay run: "));
    expect(
      said.filter((line) => line.startsWith("invoice-relay run: speed limit: ")),
      result.output,
    ).toHaveLength(1);
    expect(result.output).not.toMatch(/met the service's capacity|the service's capacity|took about/);
    const throttled = sim.stats().faults.throttle;
    expect(throttled).toBeGreaterThan(0);
    expect(result.output).toMatch(
      new RegExp(
        `invoice-relay run: ${throttled} request\\(s\\) refused by the service \\(429, or 503 with ` +
          `Retry-After\\), ${Math.round((100 * throttled) / (throttled + ROWS))} % of those it accepted or ` +
          "refused, while this run ran",
      ),
    );
  });
});
