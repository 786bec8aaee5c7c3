import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import { createRelayMetrics } from "../../src/ops/metrics/relay-metrics.js";
import { registerRedisGauges } from "../../src/ops/metrics/redis-gauges.js";
import { headingAnchors } from "../support/heading-anchors.js";
import { runTool } from "../support/platform-tools.js";

const ROOT = resolve(import.meta.dirname, "../..");
const RULES = join(ROOT, "deploy/prometheus/invoice-relay-rules.yml");
const RULE_TESTS = join(ROOT, "deploy/prometheus/invoice-relay-rules.test.yml");

const rulesFileSchema = z.object({
  groups: z.array(
    z.object({
      name: z.string(),
      rules: z.array(
        z.object({
          alert: z.string(),
          expr: z.string(),
          for: z.string().optional(),
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z.record(z.string(), z.string()).optional(),
        }),
      ),
    }),
  ),
});

async function alertRules() {
  const file = rulesFileSchema.parse(parse(await readFile(RULES, "utf8")));
  return file.groups.flatMap((g) => g.rules);
}

/** Every metric name the relay's processes serve (BullMQ's apart), from the registries themselves. */
async function servedMetricNames(): Promise<Set<string>> {
  const { registry } = createRelayMetrics();
  registerRedisGauges(registry, () => Promise.resolve(undefined));
  return new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
}

describe("the Prometheus alert rules shipped in deploy/prometheus", () => {
  it("when promtool checks the rules file, then Prometheus loads it as it is", async () => {
    const checked = await runTool("promtool", ["check", "rules", RULES]);
    expect(checked.output).toContain("SUCCESS");
    expect(checked.code, checked.output).toBe(0);
  });

  it("when promtool runs the rules' unit tests, then each alert fires, and only, when they say", async () => {
    const tested = await runTool("promtool", ["test", "rules", RULE_TESTS]);
    expect(tested.output).toContain("SUCCESS");
    expect(tested.code, tested.output).toBe(0);
  });

  it("when a rule is read, then it waits with a `for:`, has a severity and a runbook_url naming a heading of docs/", async () => {
    const rules = await alertRules();
    expect(rules.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const rule of rules) {
      if (rule.for === undefined) problems.push(`${rule.alert}: no for:`);
      if (!["page", "ticket"].includes(rule.labels?.["severity"] ?? ""))
        problems.push(`${rule.alert}: severity`);
      const runbook = rule.annotations?.["runbook_url"] ?? "";
      const [path = "", anchor = ""] = runbook.split("#", 2);
      if (!/^docs\/[a-z-]+\.md$/.test(path) || anchor === "") {
        problems.push(`${rule.alert}: runbook_url ${runbook} is not docs/<page>.md#<heading>`);
        continue;
      }
      const page = await readFile(join(ROOT, path), "utf8").catch(() => "");
      if (!headingAnchors(page).has(anchor)) problems.push(`${rule.alert}: ${runbook} names no heading`);
    }
    expect(problems).toEqual([]);
  });

  it("when a rule reads a metric of the relay, then the relay serves a metric of that name", async () => {
    const served = await servedMetricNames();
    const read = new Set((await alertRules()).flatMap((r) => r.expr.match(/\binvoice_relay_\w+/g) ?? []));
    expect(read.size).toBeGreaterThan(0);
    expect([...read].filter((name) => !served.has(name))).toEqual([]);
  });
});
