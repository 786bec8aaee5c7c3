import { z } from "zod";
import type { AnswerClass, RetryCause } from "./fleet-counts.js";
import { KEY_STATUSES } from "./statuses.js";

/**
 * One idempotency key's record, as its Redis string holds it: a JSON head on the first line, then the
 * service's answer body as received. The Lua scripts decode and write only the head.
 *
 * Head fields (short names: a ledger keeps one per invoice for the retention):
 * - `status`: see src/ledger/statuses.ts;
 * - `eid`: the external_id; `line`: the row's line in the first batch's file;
 * - `batches`: every batch that has the key, the first one first; `waiting`: those still waiting for
 *   it (absent once the key is final);
 * - `attempts`, `first`, `last`: attempts made, the first and last attempt's time (ms since the epoch);
 * - `http`, `cid`, `ruleset`: the last answer's HTTP status, correlation id and ruleset version;
 * - `error`: why the last attempt did not succeed;
 * - `by`: the newer key of the same external_id that made this one `superseded`;
 * - `document`: the canonical JSON sent, kept while the key is failed (what `retry` sends again once
 *   the job is gone; keys in flight have it in their job);
 * - `an`: while the outbox is on, the number of the key's last exported attempt when it is above
 *   `attempts` (attempts that changed nothing in the record: a refused API key, an answer after a final one);
 * - `tr`: the id of the invoice's trace, written with an answer while tracing is on and the trace
 *   sampled (docs/operations.md, "Traces"); absent otherwise, so it costs nothing then.
 */
const headSchema = z.object({
  status: z.enum(KEY_STATUSES),
  eid: z.string(),
  batches: z.array(z.string()).min(1),
  waiting: z.array(z.string()).optional(),
  line: z.number().int(),
  attempts: z.number().int().default(0),
  first: z.number().int().optional(),
  last: z.number().int().optional(),
  http: z.number().int().optional(),
  cid: z.string().optional(),
  ruleset: z.string().optional(),
  error: z.string().optional(),
  by: z.string().optional(),
  document: z.string().optional(),
  an: z.number().int().optional(),
  tr: z.string().optional(),
});

/** A key's record as the rest of the product reads it. */
export interface ResultRecord {
  readonly key: string;
  readonly status: z.infer<typeof headSchema>["status"];
  readonly external_id: string;
  /** The first batch that had the key, and the row's line in its file. */
  readonly batch: string;
  readonly line: number;
  /** Every batch that has the key. */
  readonly batches: readonly string[];
  readonly attempts: number;
  readonly http_status?: number;
  readonly correlation_id?: string;
  readonly ruleset_version?: string;
  readonly error?: string;
  readonly superseded_by?: string;
  readonly response_body?: string;
  readonly document?: string;
  readonly first_attempt_at?: number;
  readonly last_attempt_at?: number;
  /** The id of the invoice's trace (tracing on, the trace sampled). */
  readonly trace_id?: string;
}

/** Reads a record's stored string; throws (zod) when it is not one. */
export function decodeRecord(key: string, stored: string): ResultRecord {
  const nl = stored.indexOf("\n");
  const head = headSchema.parse(JSON.parse(nl === -1 ? stored : stored.slice(0, nl)));
  const body = nl === -1 ? undefined : stored.slice(nl + 1);
  const optional = <T>(name: string, value: T | undefined) => (value === undefined ? {} : { [name]: value });
  return {
    key,
    status: head.status,
    external_id: head.eid,
    batch: head.batches[0] ?? "",
    line: head.line,
    batches: head.batches,
    attempts: head.attempts,
    ...optional("http_status", head.http),
    ...optional("correlation_id", head.cid),
    ...optional("ruleset_version", head.ruleset),
    ...optional("error", head.error),
    ...optional("superseded_by", head.by),
    ...optional("response_body", body),
    ...optional("document", head.document),
    ...optional("first_attempt_at", head.first),
    ...optional("last_attempt_at", head.last),
    ...optional("trace_id", head.tr),
  };
}

/**
 * One HTTP attempt as the outbox exports it (`attempt` events, docs/ledger.md "Outbox"): never stored
 * in the record. `number` is the worker's attempt number; the ledger numbers a key's attempts itself
 * when the key has a record, so attempts the worker does not count (a refused API key, a stalled job
 * sent again) get numbers of their own.
 */
export interface AttemptFacts {
  readonly number: number;
  /** When the request was sent (ms since the epoch) and how long it took until its answer or failure. */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly httpStatus?: number | undefined;
  /** Why no HTTP answer came back (timeout, connection…); absent when one did. */
  readonly networkError?: string | undefined;
  readonly correlationId?: string | undefined;
  readonly retryAfterMs?: number | undefined;
  /** How the fleet's totals count the request (src/ledger/fleet-counts.ts); absent: it is not counted. */
  readonly counted?: AttemptCounted | undefined;
}

/** The request's labels in the fleet's totals. */
export interface AttemptCounted {
  readonly answerClass: AnswerClass;
  readonly retry: RetryCause | undefined;
  /** Answers before this one that refused the key (4xx), the request sent once more with another key. */
  readonly keyRefusedBefore?: number | undefined;
}

/** What an attempt's outcome writes into the record. */
export interface AttemptFields {
  /** The attempt itself, for the outbox (not part of the record). */
  readonly attempt?: AttemptFacts | undefined;
  readonly httpStatus?: number | undefined;
  readonly correlationId?: string | undefined;
  readonly rulesetVersion?: string | undefined;
  readonly error?: string | undefined;
  readonly responseBody?: string | undefined;
  /** The canonical JSON sent; written with a failure only (see `document` above). */
  readonly document?: string | undefined;
  /** The id of the invoice's trace when it is sampled (`tr` above). */
  readonly traceId?: string | undefined;
}

/** Attempt fields as the ANSWERS script takes them (head names, or `body`), skipping what is absent. */
export function attemptPairs(fields: AttemptFields): string[] {
  const pairs: string[] = [];
  const put = (name: string, value: string | number | undefined) => {
    if (value !== undefined) pairs.push(name, String(value));
  };
  put("http", fields.httpStatus);
  put("cid", fields.correlationId);
  put("ruleset", fields.rulesetVersion);
  put("error", fields.error);
  // A line break would end the head; the body is stored after it as received.
  put("body", fields.responseBody);
  put("document", fields.document);
  put("tr", fields.traceId);
  if (fields.attempt !== undefined) pairs.push("attempt", attemptJson(fields.attempt));
  return pairs;
}

/**
 * The attempt as the scripts take it: the `attempt` event's fields after `t` and `key`, `n` first (the
 * scripts put the ledger's own number in its place).
 */
export function attemptJson(facts: AttemptFacts): string {
  return JSON.stringify({
    n: Math.max(1, Math.trunc(facts.number)),
    at: Math.trunc(facts.startedAt),
    ms: Math.max(0, Math.round(facts.durationMs)),
    http: facts.httpStatus ?? null,
    net: facts.networkError ?? null,
    cid: facts.correlationId ?? null,
    ra: facts.retryAfterMs === undefined ? null : Math.max(0, Math.round(facts.retryAfterMs)),
  });
}
