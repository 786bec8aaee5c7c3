import { z } from "zod";
import { parseDuration } from "../config/duration.js";
import { BATCH_ID_SHAPE, isBatchId } from "../ledger/batch-id.js";
import { KEY_STATUSES } from "../ledger/statuses.js";
import { ResultsFilterError } from "./errors/results-filter-error.js";

/**
 * What `results` asks of the results of record, validated. Without `batch`: one row per idempotency key,
 * `statuses` are KeyStatuses and the times bound its last attempt. With `batch`: that batch's rows in line
 * order, `statuses` are the report's row statuses and the times bound the last attempt of each row's key.
 */
export interface ResultsFilter {
  readonly batch?: string;
  /** Empty: every status. */
  readonly statuses: readonly string[];
  readonly externalId?: string;
  /** Inclusive lower bound on last_attempt_at. */
  readonly since?: Date;
  /** Exclusive upper bound on last_attempt_at. */
  readonly until?: Date;
  /** The service's stored answer as a last column (all records only). */
  readonly withBody: boolean;
}

/** The flags as commander hands them over: a repeated flag is an array, a single one a string. */
const rawOptions = z.object({
  batch: z.string().optional(),
  status: z.union([z.string(), z.array(z.string())]).optional(),
  externalId: z.string().optional(),
  since: z.string().optional(),
  until: z.string().optional(),
  withBody: z.boolean().optional(),
});

/** The filter flags of `results`; each one a database-only flag when RESULTS_DATABASE_URL is unset. */
export const FILTER_FLAGS = ["--status", "--external-id", "--since", "--until"] as const;

export interface FilterContext {
  /** What "24h" counts back from. */
  readonly now: Date;
  /** The statuses a batch's report rows take (src/results/report-row.ts), for `--status` with `--batch`. */
  readonly rowStatuses: readonly string[];
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Reads the flags into a filter, or throws ResultsFilterError naming the flag and what it takes. */
export function parseResultsFilter(options: Record<string, unknown>, context: FilterContext): ResultsFilter {
  const parsed = rawOptions.safeParse(options);
  if (!parsed.success) {
    const path = String(parsed.error.issues[0]?.path[0] ?? "options");
    throw new ResultsFilterError(`--${kebab(path)}`, "takes one text value");
  }
  const raw = parsed.data;
  const batch = raw.batch?.trim();
  if (batch === "")
    throw new ResultsFilterError("--batch", "needs a batch id; `invoice-relay status` lists them");
  if (batch !== undefined && !isBatchId(batch))
    throw new ResultsFilterError(
      "--batch",
      `${JSON.stringify(batch)} is not a batch id: one looks like ${BATCH_ID_SHAPE}`,
    );
  const allowed = batch === undefined ? KEY_STATUSES : context.rowStatuses;
  const statuses = [raw.status ?? []]
    .flat()
    .flatMap((s) => s.split(","))
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
  const unknown = statuses.filter((s) => !allowed.includes(s));
  if (unknown.length > 0)
    throw new ResultsFilterError(
      "--status",
      `unknown status ${unknown.map((s) => `"${s}"`).join(", ")}; ${batch === undefined ? "a record's" : "a batch row's"} ` +
        `status is one of ${allowed.join(", ")} (repeat the flag or separate with commas)`,
    );
  const externalId = raw.externalId?.trim();
  if (externalId === "") throw new ResultsFilterError("--external-id", "needs an external_id");
  const since = raw.since === undefined ? undefined : instant("--since", raw.since, context.now);
  const until = raw.until === undefined ? undefined : instant("--until", raw.until, context.now);
  if (since !== undefined && until !== undefined && since >= until)
    throw new ResultsFilterError("--until", "must be later than --since");
  const withBody = raw.withBody === true;
  if (withBody && batch !== undefined)
    throw new ResultsFilterError(
      "--with-body",
      "applies to the export of all records; report rows carry no body",
    );
  return {
    ...(batch === undefined ? {} : { batch }),
    statuses: [...new Set(statuses)],
    ...(externalId === undefined ? {} : { externalId }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
    withBody,
  };
}

/** An ISO 8601 date or timestamp (a time without a zone is UTC), or a duration back from now (`24h`, `7d`). */
function instant(flag: string, text: string, now: Date): Date {
  const value = text.trim();
  const ms = parseDuration(value);
  if (ms !== undefined && !/^\d+$/.test(value)) return new Date(now.getTime() - ms);
  if (ISO_DATE.test(value)) {
    const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/.test(value) || !value.includes(":") ? value : `${value}Z`;
    const at = new Date(zoned.replace(" ", "T"));
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw new ResultsFilterError(
    flag,
    `"${text}" is neither an ISO 8601 time (2026-10-01, 2026-10-01T00:00:00Z) nor a duration back from now (24h, 7d, 1h30m)`,
  );
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
