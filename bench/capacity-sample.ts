// npm run bench:capacity -- --sample N --seed S — N services drawn from the space of
// bench/service-arbitrary.ts (the one bench:capacity-space runs on the fleet model), each night end to end
// against the simulator serving that spec (src/dev/fleet-model/service-simulator.ts) with real `run` and
// worker processes and a private Redis, judged as the space bench judges (service-space.ts): one row per
// service, then one JSON line each, then how many met every target.
import fc from "fast-check";
import { loadavg } from "node:os";
import { RedisServer } from "../src/dev/redis-server.js";
import {
  allowedAt,
  judge,
  meetsTargets,
  nightOf,
  serviceRow,
  type ServiceSpec,
} from "../src/dev/fleet-model/service-space.js";
import { killAllSpawned } from "./chaos/processes.js";
import { sampleNight } from "./sample-night.js";
import { serviceSpace } from "./service-arbitrary.js";

/**
 * The fastest a drawn service may allow at any time of its night (requests/s): the targets hold at
 * rates up to 300/s on this 2-core machine, where the relay's processes, the simulator and Redis share the
 * cores; past it the machine, not the service, would bound the night. A faster draw (or a rise ×6 past it)
 * is scaled down, its burst and windows with it, so that its shape is kept.
 */
const MOST_PER_SEC = 300;

function withinMachine(spec: ServiceSpec): ServiceSpec {
  const scale = Math.min(1, MOST_PER_SEC / (spec.capacity * (spec.change === "rise" ? 6 : 1)));
  if (scale === 1) return spec;
  const scaled = (n: number) => Math.max(1, Math.round(n * scale));
  return {
    ...spec,
    capacity: scaled(spec.capacity),
    burst: scaled(spec.burst),
    windows: spec.windows.map((w) => ({ ...w, limit: scaled(w.limit) })),
  };
}

/**
 * A night holds at most what the service allows in this long (its changes and windows counted, less what it
 * refuses at random or fails): a drop or a stretch at 0 would otherwise stretch a 20 s night to minutes.
 */
const NIGHT_MOST_S = 40;

function mostInvoices(spec: ServiceSpec): number {
  const kept = (1 - spec.randomRefused) * (1 - spec.outages);
  let work = 0;
  for (let s = 0; s < NIGHT_MOST_S; s++) work += allowedAt(spec, s * 1000) * kept;
  return Math.max(1, Math.round(work));
}

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const [sample, seed] = [arg("--sample", 5), arg("--seed", Date.now() % 1_000_000)];
const log = (line: string) => process.stdout.write(`${line}\n`);

const drawn = fc.sample(serviceSpace, { numRuns: sample, seed });
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
log(`seed ${seed}, ${sample} services, rates scaled to ${MOST_PER_SEC}/s at most; load average ${load()}`);
const redis = await RedisServer.start();
process.on("exit", killAllSpawned);
const lines: string[] = [];
let met = 0;
try {
  for (const [i, original] of drawn.entries()) {
    const spec = withinMachine(original);
    const night = nightOf(spec, i + 1, mostInvoices(spec));
    const measured = await sampleNight(spec, night, redis.url, `s${seed}-${i + 1}`);
    const judged = judge(spec, night, measured.outcome);
    const ok = meetsTargets(spec, judged);
    if (ok) met++;
    log(serviceRow(spec, judged, ok));
    lines.push(
      JSON.stringify({
        spec,
        drawnCapacity: original.capacity,
        invoices: night.invoices,
        ...judged,
        met: ok,
        runs: measured.runs,
      }),
    );
  }
} finally {
  await redis.dispose();
}
for (const line of lines) log(line);
log(`${met} of ${drawn.length} met every target (seed ${seed}); load average ${load()}`);
