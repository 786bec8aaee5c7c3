declare module "parse-prometheus-text-format" {
  /** Families of the text format; each sample a string value, or a histogram's buckets, count and sum. */
  export default function parsePrometheusTextFormat(text: string): unknown;
}
