// node dist/bench/capacity-fleet.js — bench:capacity's night on the fleet model (src/dev/fleet-model): the
// relay's own pacers for `run` and two workers against the simulator's capacity model, on virtual time,
// many nights in seconds and the same every time. What it leaves out (BullMQ, the event loop, a busy
// machine) is what `npm run bench:capacity` measures; docs/capacity.md shows what each was used for.
// MODEL_SEED (1,2,3), MODEL_PROCESSES (3), MODEL_INVOICES (6000), MODEL_CAPACITY (300), MODEL_PHASE_S (8),
// MODEL_RANDOM_429 (0; the chaos suite's 0.05), MODEL_TRACE=1 prints admitted/refused per second, =2 the
// learned rate's states, =3 admitted/refused per 100 ms.
import { modelNight } from "../src/dev/fleet-model/night.js";
import { nightFigures, type NightFigures } from "./capacity-figures.js";

const PROCESSES = Number(process.env["MODEL_PROCESSES"] ?? 3);
const INVOICES = Number(process.env["MODEL_INVOICES"] ?? 6000);
const CAPACITY = Number(process.env["MODEL_CAPACITY"] ?? 300);
const PHASE_S = Number(process.env["MODEL_PHASE_S"] ?? 8);
const SEEDS = (process.env["MODEL_SEED"] ?? "1,2,3").split(",").map(Number);
const RANDOM_429 = Number(process.env["MODEL_RANDOM_429"] ?? 0);
const TRACE = process.env["MODEL_TRACE"];

const nights: NightFigures[] = [];
for (const seed of SEEDS) {
  const night = await modelNight({
    processes: PROCESSES,
    invoices: INVOICES,
    capacity: CAPACITY,
    random429: RANDOM_429,
    seed,
    changes: [
      {
        atMs: PHASE_S * 1000,
        patch: { ratePerSec: CAPACITY / 3, burst: Math.max(1, Math.round(CAPACITY / 30)) },
      },
      {
        atMs: 2 * PHASE_S * 1000,
        patch: { ratePerSec: CAPACITY, burst: Math.max(1, Math.round(CAPACITY / 10)) },
      },
    ],
  });
  const figures = nightFigures({
    startedAt: night.startedAt,
    endedAt: night.endedAt,
    capacity: CAPACITY,
    phaseMs: PHASE_S * 1000,
    invoices: INVOICES,
    perSecond: night.perSecond,
    refused: night.refused,
    effects: night.routed,
  });
  nights.push(figures);
  if (TRACE === "1") console.log(JSON.stringify(night.perSecond.map((s) => [s.admitted, s.refused])));
  if (TRACE === "2")
    for (const s of night.states) console.log(`${((s.at - night.startedAt) / 1000).toFixed(3)} ${s.state}`);
  if (TRACE === "3")
    night.tenths.forEach((t, i) => {
      console.log(
        `${(i / 10).toFixed(1)} admitted ${t.admitted} refused ${t.refused} rate ${Math.round(t.rate)}`,
      );
    });
  if (process.env["MODEL_QUIET"] === undefined) console.log(`seed ${seed}: ${figures.text}`);
}
const mean = (pick: (f: NightFigures) => number) =>
  Math.round((nights.reduce((sum, f) => sum + pick(f), 0) / nights.length) * 1000) / 1000;
console.log(
  JSON.stringify({
    nights: nights.length,
    capacity_used: mean((f) => f.capacityUsed),
    least_used: Math.min(...nights.map((f) => f.capacityUsed)),
    steady_used: mean((f) => f.steadyCapacityUsed),
    throttled_per_invoice: mean((f) => f.throttledPerInvoice),
    most_throttled: Math.max(...nights.map((f) => f.throttledPerInvoice)),
    settle_s: mean((f) => f.settleS),
    nights_meeting_targets: nights.filter(
      (f) =>
        f.capacityUsed >= 0.8 &&
        f.steadyCapacityUsed >= 0.9 &&
        f.throttledPerInvoice <= 0.05 &&
        f.settleS <= 5,
    ).length,
  }),
);
