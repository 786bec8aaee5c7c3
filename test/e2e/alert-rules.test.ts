import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { z } from "zod";
import { cli, dropCsv, opsSetup } from "../cli/ops-support.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { testInvoices } from "../support/invoices.js";
import { runTool } from "../support/platform-tools.js";
import { servingUrl, spawnNode } from "../support/processes.js";
import { parseMetrics, type MetricFamily } from "../support/prometheus-text.js";

const RULES = resolve(import.meta.dirname, "../../deploy/prometheus/invoice-relay-rules.yml");
const cleanups = cleanupsAfterEach();

/** One scrape's samples of the relay's own gauges and counters, as promtool series names. */
function samples(families: Map<string, MetricFamily>): Map<string, number> {
  const out = new Map<string, number>();
  for (const family of families.values()) {
    if (!family.name.startsWith("invoice_relay_") || !["GAUGE", "COUNTER"].includes(family.type)) continue;
    for (const m of family.metrics) {
      const labels = Object.entries({ ...m.labels, instance: "relay" })
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(",");
      out.set(`${family.name}{${labels}}`, Number(m.value));
    }
  }
  return out;
}

/**
 * A promtool unit test over scrapes held one after another (`minutes` each, one sample a minute; a
 * series a scrape lacks is missing then), expecting `alert` to fire at `at` or not.
 */
function ruleTest(
  scrapes: readonly { readonly values: Map<string, number>; readonly minutes: number }[],
  alert: { readonly name: string; readonly labels: unknown; readonly annotations: unknown },
  at: string,
  fires: boolean,
) {
  const names = new Set(scrapes.flatMap((s) => [...s.values.keys()]));
  const input_series = [...names].map((series) => ({
    series,
    values: scrapes
      .map((s) => {
        const v = s.values.get(series);
        return Array.from({ length: s.minutes }, () => (v === undefined ? "_" : String(v))).join(" ");
      })
      .join(" "),
  }));
  const expected = fires ? [{ exp_labels: alert.labels, exp_annotations: alert.annotations }] : [];
  return {
    interval: "1m",
    input_series,
    alert_rule_test: [{ eval_time: at, alertname: alert.name, exp_alerts: expected }],
  };
}

/** A rule of the shipped file, with the labels and annotations its alert carries. */
async function shippedRule(name: string) {
  const rule = z
    .object({ groups: z.array(z.object({ rules: z.array(z.looseObject({ alert: z.string() })) })) })
    .parse(parse(await readFile(RULES, "utf8")))
    .groups.flatMap((g) => g.rules)
    .find((r) => r.alert === name);
  if (rule === undefined) throw new Error(`${RULES} has no alert ${name}`);
  return { name, labels: rule["labels"], annotations: rule["annotations"] };
}

describe("the alert rules over what a real deployment serves", () => {
  it("when invoices fail one night and are retried and accepted, then the failure ratio fires while they stand failed and not once they succeeded", async () => {
    const setup = await opsSetup({ errorRate: 1 }, { MAX_ATTEMPTS: "1" });
    cleanups.push(() => setup.cleanup());
    const { sim, dir, env } = setup;
    const consoleProc = spawnNode("workers/cli.js", ["console"], { ...env, HTTP_ADDR: "127.0.0.1:0" });
    cleanups.push(async () => {
      consoleProc.child.kill("SIGTERM");
      await consoleProc.exited;
    });
    const url = await servingUrl(consoleProc);
    const scrape = async () => samples(parseMetrics(await (await fetch(`${url}/metrics`)).text()));

    const before = await scrape();
    await dropCsv(dir, "night.csv", testInvoices(20, `ratio-${randomUUID()}`));
    const night = await cli(["run"], env);
    expect(night.code, night.stderr).toBe(2);
    const failedNight = await scrape();
    expect(failedNight.get('invoice_relay_ledger_invoices{status="failed",instance="relay"}')).toBe(20);

    sim.setFaults({ errorRate: 0 });
    expect((await cli(["retry"], env)).code).toBe(0);
    const again = await cli(["run"], env);
    expect(again.code, again.stderr).toBe(0);
    const retried = await scrape();
    expect(retried.get('invoice_relay_ledger_invoices{status="succeeded",instance="relay"}')).toBe(20);

    // Promtool starts its clock at 0: the passes' end times (now) are in its future, so only the
    // failure ratio's own figures decide.
    const alert = await shippedRule("InvoiceRelayFailureRatio");
    const tests = [
      // The failures stand: fires once they have for the rule's half hour.
      ruleTest(
        [
          { values: before, minutes: 10 },
          { values: failedNight, minutes: 100 },
        ],
        alert,
        "50m",
        true,
      ),
      // Retried and accepted 15 minutes after the night: never fires, then or later.
      ruleTest(
        [
          { values: before, minutes: 10 },
          { values: failedNight, minutes: 15 },
          { values: retried, minutes: 100 },
        ],
        alert,
        "50m",
        false,
      ),
      ruleTest(
        [
          { values: before, minutes: 10 },
          { values: failedNight, minutes: 15 },
          { values: retried, minutes: 100 },
        ],
        alert,
        "100m",
        false,
      ),
    ];
    const work = await mkdtemp(join(tmpdir(), "alert-rules-"));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const testFile = join(work, "scrapes.test.yml");
    await writeFile(testFile, stringify({ rule_files: [RULES], evaluation_interval: "1m", tests }));
    const result = await runTool("promtool", ["test", "rules", testFile]);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain("SUCCESS");
  });
});
