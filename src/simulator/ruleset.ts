import type { CanonicalInvoice } from "../invoice/schema.js";

/**
 * The simulator's ruleset outcome. The spec leaves its fields open ("not shown"); this shape is the
 * simulator's design: a decision, the delivery channel and route chosen, and the archive instruction.
 */
export interface RulesetOutcome {
  readonly decision: "route";
  /** `<channel>:<destination_country>`, e.g. `peppol:DE`. */
  readonly route: string;
  readonly channel: Channel;
  readonly destination_country: string;
  readonly archive: { readonly region: string; readonly retention: string };
}

export type Channel = "peppol" | "edi" | "email";

// Countries with a Peppol e-invoicing network (EU/EEA, plus a few outside it that use it).
const PEPPOL = new Set(
  "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IS IT LI LT LU LV MT NL NO PL PT RO SE SI SK AU NZ SG JP GB".split(
    " ",
  ),
);
const EDI = new Set(["US", "CA", "MX"]);

/** Pure: the same invoice always gets the same outcome under one ruleset version. */
export function evaluateRuleset(invoice: CanonicalInvoice): RulesetOutcome {
  const country = invoice.routing.destination_country;
  const channel: Channel = PEPPOL.has(country) ? "peppol" : EDI.has(country) ? "edi" : "email";
  const policy = invoice.routing.archive_policy;
  const dash = policy.lastIndexOf("-");
  return {
    decision: "route",
    route: `${channel}:${country}`,
    channel,
    destination_country: country,
    archive: { region: policy.slice(0, dash), retention: policy.slice(dash + 1) },
  };
}
