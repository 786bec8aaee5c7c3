import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { z } from "zod";
import { deriveKey, resolveNamespace } from "../src/invoice/key.js";
import { normaliseRecord } from "../src/invoice/normalise.js";
import type { CanonicalInvoice } from "../src/invoice/schema.js";
import type { SimulatorOptions } from "../src/simulator/index.js";
import { syntheticInvoice } from "./generate.js";

export interface SimProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts bench/sim-process.js, serving as `options` say, and waits for the URL it prints. */
export function startSimProcess(apiKey: string, options: SimulatorOptions = {}): Promise<SimProcess> {
  return startChildServer("./sim-process.js", {
    INVOICE_API_KEY: apiKey,
    SIM_OPTIONS: JSON.stringify(options),
  });
}

/** Starts bench/otlp-sink-process.js, an OTLP/HTTP receiver, and waits for the URL it prints. */
export function startOtlpSinkProcess(): Promise<SimProcess> {
  return startChildServer("./otlp-sink-process.js", {});
}

async function startChildServer(file: string, env: Record<string, string>): Promise<SimProcess> {
  const script = fileURLToPath(new URL(file, import.meta.url));
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(child.stdout ?? child, "data")) as [Buffer];
  const { url } = z.object({ url: z.string() }).parse(JSON.parse(line.toString().trim()));
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export const round = (n: number): number => Math.round(n);

/** CPU seconds used while a contender ran: by this process, the simulator, Redis, and everything else. */
export interface CpuUse {
  readonly bench: number;
  readonly sim: number;
  readonly redis: number;
  /** Other processes of the machine: a benchmark is only as good as the quiet around it. */
  readonly other: number;
}

/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** utime + stime + the same of reaped children (Redis's AOF rewrite is a forked child), in seconds. */
function processCpu(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 of proc(5): utime..cstime are fields 14-17
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    return ticks / TICKS_PER_SECOND;
  } catch {
    return 0; // not Linux, or the process is gone: the figure is left out
  }
}

/** Busy CPU seconds of the whole machine (user, nice, system, irq, softirq, steal). */
function machineCpu(): number {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const t = cpu.trim().split(/\s+/).slice(1).map(Number);
    return [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + (t[i] ?? 0), 0) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Starts a CPU meter; calling the returned function reads what was used since. */
export function cpuMeter(simPid: number | undefined, redisPid: number | undefined): () => CpuUse {
  const read = () => ({
    bench: processCpu(process.pid),
    sim: processCpu(simPid),
    redis: processCpu(redisPid),
    machine: machineCpu(),
  });
  const start = read();
  return () => {
    const end = read();
    const bench = end.bench - start.bench;
    const sim = end.sim - start.sim;
    const redis = end.redis - start.redis;
    const other = Math.max(0, end.machine - start.machine - bench - sim - redis);
    return { bench, sim, redis, other };
  };
}

export function describeCpu(cpu: CpuUse, seconds: number): string {
  const cores = (s: number) => `${s.toFixed(1)} s (${(s / seconds).toFixed(2)} cores)`;
  return `CPU: bench ${cores(cpu.bench)}, simulator ${cores(cpu.sim)}, Redis ${cores(cpu.redis)}, rest of machine ${cores(cpu.other)}`;
}

/**
 * Gives the next contender an empty private Redis with a compacted AOF, so that no contender pays for
 * an AOF rewrite triggered by the data of the one before it. Never used on a REDIS_URL Redis. One
 * server (`Redis`, not `RedisClient`): FLUSHALL and INFO speak for the server they are sent to.
 */
export async function resetPrivateRedis(redis: Redis): Promise<void> {
  await redis.flushall();
  await redis.bgrewriteaof();
  for (let i = 0; i < 600; i++) {
    const info = await redis.info("persistence");
    if (/aof_rewrite_in_progress:0/.test(info) && /aof_rewrite_scheduled:0/.test(info)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("Redis did not finish rewriting its AOF within 30 s");
}

/** One contender's measured pass. */
export interface Run {
  readonly seconds: number;
  readonly cpu: CpuUse;
  /** Enqueue → final, sorted (relay only). */
  readonly latencies: number[];
}

export interface KeyedDoc {
  readonly key: string;
  readonly invoice: CanonicalInvoice;
}

/** `n` valid synthetic invoices keyed under a namespace of their own (fresh keys for the simulator). */
export function keyedInvoices(namespace: string, n: number): KeyedDoc[] {
  const ns = resolveNamespace(namespace);
  return Array.from({ length: n }, (_, i) => {
    const v = syntheticInvoice(i);
    const r = normaliseRecord({
      external_id: v.external_id,
      currency: v.currency,
      destination_country: v.country,
      archive_policy: v.policy,
    });
    if (!r.ok) throw new Error("bad synthetic invoice");
    return { key: deriveKey(r.invoice, ns), invoice: r.invoice };
  });
}

/** Rejects when a contender has not finished in time, so a lost job ends the run instead of hanging it. */
export function within<T>(promise: Promise<T>, what: string, ms = 300_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} did not finish within ${ms / 1000} s`));
    }, ms);
  });
  return Promise.race([promise, late]).finally(() => {
    clearTimeout(timer);
  });
}

/**
 * A fixed single-core JavaScript workload (JSON round trips of an invoice-sized object), in thousands
 * per second: on a shared virtual machine the same code runs at different speeds from hour to hour,
 * and absolute figures mean little without it.
 */
export function hostSpeed(): number {
  const doc = { key: "0".repeat(36), invoice: syntheticInvoice(1), batch: "bench", line: 2 };
  const began = performance.now();
  let size = 0;
  for (let i = 0; i < 200_000; i++) size += JSON.stringify(JSON.parse(JSON.stringify(doc))).length;
  if (size === 0) throw new Error("unreachable");
  return 200 / ((performance.now() - began) / 1000);
}
