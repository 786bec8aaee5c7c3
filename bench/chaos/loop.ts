import type { RedisServer } from "../../src/dev/redis-server.js";
import type { AofTail } from "./aof-tail.js";
import type { WorkerSlot } from "./fleet.js";
import type { ChaosPlan, WorkerKill } from "./plan.js";

export interface LoopInput {
  readonly plan: ChaosPlan;
  readonly workers: readonly WorkerSlot[];
  readonly redis: RedisServer;
  readonly redisRestart: "term" | "kill" | "power";
  /** Tracks the AOF so that a `power` restart can take its last second away. */
  readonly aof: AofTail;
  /** Invoices the results store holds as succeeded: read around the restart to see what it lost. */
  readonly succeeded: () => Promise<number>;
  /** Invoices committed at the simulator so far. */
  readonly effects: () => number;
  /** The Redis restart waits for ingest to be over: see docs/reliability.md on why. */
  readonly ingestDone: () => boolean;
  /** Settles when the final `run` has exited. */
  readonly finished: Promise<unknown>;
  readonly deadline: number;
  readonly log: (line: string) => void;
}

export interface LoopFigures {
  readonly workerKills: number;
  readonly redisRestarts: number;
  readonly redisRestartMs: number | undefined;
  /** Bytes of acknowledged writes taken from the AOF by a `power` restart. */
  readonly aofBytesLost: number;
  /** Planned faults that never struck because the work was done first. */
  readonly missed: readonly string[];
}

/** A worker must have been up this long before it is killed, so that the kill hits jobs in flight. */
const MIN_UP_MS = 500;
const TICK_MS = 20;
/** What appendfsync everysec may leave unwritten on a host crash: about the last second. */
const AOF_LOSS_MS = 1000;

/** Fires the planned kills and the Redis restart as the work passes their points, until `run` exits. */
export async function chaosLoop(input: LoopInput): Promise<LoopFigures> {
  let finished = false;
  void input.finished.then(() => (finished = true));
  const pending: WorkerKill[] = [...input.plan.workerKills];
  const busy = new Set<number>();
  const killing: Promise<void>[] = [];
  let workerKills = 0;
  let redisRestartMs: number | undefined;
  let aofBytesLost = 0;

  while (!finished && Date.now() < input.deadline) {
    const done = input.effects();
    for (const kill of [...pending]) {
      const slot = input.workers[kill.worker];
      if (slot === undefined || done < kill.atEffects || busy.has(kill.worker)) continue;
      if ((slot.upFor() ?? 0) < MIN_UP_MS) continue;
      pending.splice(pending.indexOf(kill), 1);
      busy.add(kill.worker);
      input.log(
        `kill: worker ${kill.worker + 1} (pid ${slot.pid()}) with SIGKILL at ${done} effects (planned ${kill.atEffects}); restarted after ${kill.downMs} ms`,
      );
      workerKills++;
      killing.push(
        slot.killAndRestart(kill.downMs).finally(() => {
          busy.delete(kill.worker);
        }),
      );
    }
    if (redisRestartMs === undefined && input.ingestDone() && done >= input.plan.redisRestartAtEffects) {
      const started = Date.now();
      const { redisDownMs } = input.plan;
      const mode = input.redisRestart;
      const succeededBefore = await input.succeeded();
      await input.redis.restart({
        hard: mode !== "term",
        downMs: redisDownMs,
        whileDown: async () => {
          if (mode === "power") aofBytesLost = await input.aof.cutBack(AOF_LOSS_MS);
        },
      });
      redisRestartMs = Date.now() - started;
      const succeededAfter = await input.succeeded();
      const how = {
        term: "SIGTERM",
        kill: "SIGKILL",
        power: `SIGKILL, AOF cut back ${AOF_LOSS_MS} ms (${aofBytesLost} bytes)`,
      }[mode];
      input.log(
        `redis: stopped (${how}) at ${done} effects, started again after ${redisDownMs} ms; answering after ${redisRestartMs} ms; ` +
          `succeeded records ${succeededBefore} before, ${succeededAfter} after`,
      );
    } else if (redisRestartMs === undefined && input.redisRestart === "power") {
      await input.aof.sample();
    }
    await Promise.race([new Promise((r) => setTimeout(r, TICK_MS)), input.finished]);
  }
  await Promise.all(killing);
  const missed = pending.map((k) => `worker ${k.worker + 1} kill planned at ${k.atEffects} effects`);
  if (redisRestartMs === undefined)
    missed.push(`Redis restart planned at ${input.plan.redisRestartAtEffects} effects`);
  return {
    workerKills,
    redisRestarts: redisRestartMs === undefined ? 0 : 1,
    redisRestartMs,
    aofBytesLost,
    missed,
  };
}
