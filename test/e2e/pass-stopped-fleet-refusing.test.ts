import { randomUUID } from "node:crypto";
import { utimes, writeFile } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startState } from "../../src/capacity/index.js";
import { openContext } from "../../src/cli/context.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { SendBudget } from "../../src/ledger/send-budget.js";
import { silentLogger } from "../../src/log/logger.js";
import { rateSettingsOf, REFUSED_LATELY_MS } from "../../src/queue/send-rate-view.js";
import { nightlyPass } from "../../src/use-cases/nightly-pass.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { tempDropDir } from "../support/drop.js";
import { testConfig } from "../support/engine.js";

// A pass stopped at its deadline says the service refuses for capacity by the fleet's word, as `status`
// does (refused for a minute, and still lately): another process hears the refusals, this one's requests hang.

const API_KEY = "irs_live_e2e_key_0123456789";
const DEADLINE_MS = 1_500;
/** How long the fleet's stored state says the service has refused everything: past the minute it takes. */
const REFUSING_FOR_MS = 70_000;

const cleanups = cleanupsAfterEach();

/** A service that takes every connection and never answers: this process hears nothing from it. */
async function silentService(): Promise<string> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}

/**
 * A pass over a two-invoice file that stops at its deadline, while the fleet's stored rate says the
 * service has refused everything for 70 s and its last refusal was heard `lastRefusalAgoMs` ago (kept so
 * while the pass waits, as another process still sending would).
 */
async function stoppedWhileFleetRefused(lastRefusalAgoMs: number) {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const file = join(drop.dir, "invoices.csv");
  await writeFile(file, [CSV_HEADER, csvRow("FR-1"), csvRow("FR-2"), ""].join("\n"));
  // written a minute ago: settled
  const written = new Date(Date.now() - 60_000);
  await utimes(file, written, written);
  const logger = silentLogger();
  const config = testConfig({
    apiUrl: await silentService(),
    apiKey: API_KEY,
    prefix: `pass-refusing-${randomUUID()}`,
    // the requests that hang are given up a second after the pass ends
    env: { DROP_DIR: drop.dir, SHUTDOWN_GRACE_MS: "1000" },
  });
  const ctx = await openContext(config, { dropFolder: true, logger });
  cleanups.push(() => ctx.close());
  const budget = new SendBudget(ctx.redis, config.queuePrefix);
  const names = new LedgerNames(config.queuePrefix);
  // The other process's word, stored as its pacer stores it.
  const otherProcessHeard = async () => {
    const { now } = await budget.read();
    await ctx.redis.hset(names.sendBudget, "refusedAt", now - lastRefusalAgoMs);
    return now;
  };
  await budget.call({ owed: 1, refused: 1 });
  const now = await otherProcessHeard();
  const state = startState(rateSettingsOf(config), now, { accepted: 0, refused: 1 }, 1);
  await budget.call({
    write: {
      from: "0",
      state: JSON.stringify({ ...state, refusingSince: now - REFUSING_FOR_MS }),
      version: "1",
    },
  });
  return nightlyPass(
    { ...ctx, config, logger },
    {
      signal: new AbortController().signal,
      deadline: Date.now() + DEADLINE_MS,
      pollMs: 50,
      onProgress: () => void otherProcessHeard(),
    },
  );
}

describe("a pass stopped at its deadline while the fleet's stored rate says the service refuses everything", () => {
  it("when another process still hears every request refused, after a minute of it, then the stopped pass says the service refuses for capacity", async () => {
    const outcome = await stoppedWhileFleetRefused(0);
    expect(outcome).toMatchObject({
      kind: "stopped",
      why: "deadline",
      pending: 2,
      refusingForCapacity: true,
    });
  });

  it("when the fleet heard its last refusal 40 s ago, then the stopped pass does not say the service refuses now", async () => {
    expect(40_000).toBeGreaterThan(REFUSED_LATELY_MS);
    const outcome = await stoppedWhileFleetRefused(40_000);
    expect(outcome).toMatchObject({
      kind: "stopped",
      why: "deadline",
      pending: 2,
      refusingForCapacity: false,
    });
  });
});
