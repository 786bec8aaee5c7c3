// npm run bench:capacity-space [-- --sample N --seed S] — the learned rate over services drawn from the
// space of bench/service-arbitrary.ts (src/dev/fleet-model/service-space.ts: bucket, burst,
// refusal status, Retry-After policy, quota windows, answer times, refusals at random, outages, changes,
// processes, deployments), each night on the fleet model's virtual time: one row per service against the
// targets of docs/capacity.md, then one JSON line each. BENCH_AXES=random,windows,change,jump keeps those
// axes (all by default); any other list leaves the unnamed ones at their plain value.
import fc from "fast-check";
import { modelNight } from "../src/dev/fleet-model/night.js";
import { judge, meetsTargets, nightOf, serviceRow } from "../src/dev/fleet-model/service-space.js";
import { serviceSpace } from "./service-arbitrary.js";

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const [sample, seed] = [arg("--sample", 30), arg("--seed", Date.now() % 1_000_000)];
const axes = (process.env["BENCH_AXES"] ?? "random,windows,change,jump").split(",");
const kept = (name: string) => axes.includes(name);
const log = (line: string) => process.stdout.write(`${line}\n`);

const specs = fc.sample(serviceSpace, { numRuns: sample, seed }).map((s) => ({
  ...s,
  ...(!kept("random") && { randomRefused: 0, outages: 0 }),
  ...(!kept("windows") && { windows: [] }),
  ...(!kept("change") && { change: "none" as const }),
  ...(!kept("jump") && { latencyJump: false }),
}));
log(`seed ${seed}, ${sample} services, axes ${axes.join(",")}`);
const rows = [];
for (const [i, spec] of specs.entries()) {
  const night = nightOf(spec, i + 1);
  const judged = judge(spec, night, await modelNight(night));
  const met = meetsTargets(spec, judged);
  log(serviceRow(spec, judged, met));
  rows.push({ spec, ...judged, met });
}
for (const row of rows) log(JSON.stringify(row));
log(`${rows.filter((r) => r.met).length} of ${rows.length} services met every target (seed ${seed})`);
