import { describe, expect, it } from "vitest";
import type { ResultRecord } from "../../../src/ledger/record.js";
import { searchPage } from "../../../src/ops/console/search-page.js";

const record: ResultRecord = {
  key: "0b9e3a58-3c61-5f0e-8f1e-2d0a5b7c9e14",
  status: "succeeded",
  external_id: "ACME-1",
  batch: "20261120T010000Z-abcdef",
  line: 2,
  batches: ["20261120T010000Z-abcdef"],
  attempts: 1,
  http_status: 201,
  correlation_id: "req-1",
};

describe("the console's invoice page", () => {
  it("when the invoice was traced, then its page shows the trace id to look it up in the tracing backend; untraced, no such line", () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const traced = String(searchPage("ACME-1", [{ ...record, trace_id: traceId }]));
    expect(traced).toMatch(new RegExp(`<dt>Trace id</dt>\\s*<dd class="mono">${traceId}</dd>`));
    expect(String(searchPage("ACME-1", [record]))).not.toContain("Trace id");
  });
});
