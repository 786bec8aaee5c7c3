import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { z } from "zod";

const sampleSchema = z.object({
  value: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  buckets: z.record(z.string(), z.string()).optional(),
  count: z.string().optional(),
  sum: z.string().optional(),
});
const familySchema = z.object({
  name: z.string(),
  type: z.string(),
  help: z.string(),
  metrics: z.array(sampleSchema),
});
export type MetricFamily = z.infer<typeof familySchema>;

/** Prometheus' text format parsed by an independent parser (it throws on a line it cannot read). */
export function parseMetrics(text: string): Map<string, MetricFamily> {
  const families = z.array(familySchema).parse(parsePrometheusTextFormat(text));
  return new Map(families.map((f) => [f.name, f]));
}

/** The value of one sample whose labels include `labels`; undefined when there is no such sample. */
export function sampleValue(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const sample = families
    .get(name)
    ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample?.value === undefined ? undefined : Number(sample.value);
}
