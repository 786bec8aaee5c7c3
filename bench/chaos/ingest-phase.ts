import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { RedisClient } from "../../src/ledger/redis-client.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { describeExit, spawnEntry } from "./processes.js";

export interface IngestFigures {
  readonly killedFile: string;
  readonly killedBatch: string;
  /** Rows of the killed file registered (and being enqueued) when the kill landed. */
  readonly registeredAtKill: number;
  readonly resumedSameBatch: boolean;
  readonly secondOutput: string;
}

/**
 * `invoice-relay ingest` killed with SIGKILL in the middle of `target`: after its first rows are
 * registered, before the file is done. The re-run must find the file in processing/, resume it under
 * the same batch id, claim the other files and exit 0.
 */
export async function ingestKilledMidFile(
  env: Readonly<Record<string, string>>,
  monitor: RedisClient,
  prefix: string,
  dropDir: string,
  target: string,
): Promise<IngestFigures> {
  const batches = new BatchStore(monitor, prefix);
  const first = spawnEntry("ingest (first)", "workers/cli.js", ["ingest"], env);
  let kill: { batch: string; pending: number } | undefined;
  // A tight loop of Redis reads, no sleep: the window between the first chunk and the end of a file is
  // a few tens of milliseconds.
  while (kill === undefined && first.running()) {
    for (const id of await batches.list()) {
      const meta = await batches.get(id);
      if (meta?.file === target && meta.state === "ingesting" && (meta.pending ?? 0) > 0) {
        first.child.kill("SIGKILL");
        kill = { batch: id, pending: meta.pending ?? 0 };
        break;
      }
    }
  }
  const exit = await first.exited;
  if (kill === undefined || exit.signal !== "SIGKILL") {
    throw new Error(
      `ingest ended (${describeExit(exit)}) before it could be killed inside ${target}:\n${first.tail()}`,
    );
  }
  const after = await batches.require(kill.batch);
  if (after.state !== "ingesting") {
    throw new Error(`the kill landed after ${target} was ingested (state ${after.state}); not mid-file`);
  }
  const left = await readdir(join(dropDir, "processing"));
  if (!left.some((n) => n.startsWith(`${kill.batch}--`))) {
    throw new Error(`after the kill, processing/ does not hold batch ${kill.batch}: ${left.join(", ")}`);
  }

  const second = spawnEntry("ingest (again)", "workers/cli.js", ["ingest"], env);
  const again = await second.exited;
  if (again.code !== 0) throw new Error(`ingest run again: ${describeExit(again)}:\n${second.tail()}`);
  const printed = second.stdout();
  return {
    killedFile: target,
    killedBatch: kill.batch,
    registeredAtKill: kill.pending,
    resumedSameBatch: printed.includes(`${kill.batch}\t${target}\t`),
    secondOutput: printed.trimEnd(),
  };
}
