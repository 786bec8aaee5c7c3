import type { KeyNamespace } from "../invoice/key.js";
import { formatFieldErrors } from "../invoice/field-error.js";
import type { ReadItem } from "../ingest/read-item.js";
import { readInvoiceFileBatches } from "../ingest/read-invoice-file.js";
import { profileOfBatch } from "../ingest/profiles/profile-snapshot.js";
import type { SourceProfile } from "../ingest/profiles/source-profile.js";
import type { BatchMeta, BatchStore } from "../ledger/batch-store.js";
import type { ResultRecord } from "../ledger/record.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ReportRow, RowStatus } from "./report-row.js";

export interface BatchRowsDeps {
  readonly ledger: Ledger;
  readonly batches: BatchStore;
  readonly namespace: KeyNamespace;
  /** The source profiles: the file is read again with the profile its dropped name matches, as at ingest. */
  readonly profiles?: readonly SourceProfile[] | undefined;
}

type RowItem = Exclude<ReadItem, { kind: "unknown-fields" } | { kind: "file-error" }>;
const CHUNK = 500;

/**
 * The report rows of a batch, in file order: the file is read again (same lines, same keys) and each
 * row is joined with the decision taken at ingest and its key's record in the ledger.
 */
export async function* batchRows(
  deps: BatchRowsDeps,
  batch: BatchMeta,
  /** The claimed bytes, when the caller read and checked them (checkClaimedBytes): not read again. */
  bytes?: Uint8Array,
): AsyncGenerator<ReportRow> {
  let chunk: RowItem[] = [];
  for await (const items of readInvoiceFileBatches(batch.path, {
    namespace: deps.namespace,
    displayName: batch.file,
    format: batch.format,
    length: batch.size, // the bytes ingested, not what a writer appended since
    bytes,
    profile: profileOfBatch(batch),
  }))
    for (const item of items) {
      if (item.kind === "unknown-fields" || item.kind === "file-error") continue;
      chunk.push(item);
      if (chunk.length >= CHUNK) {
        yield* await resolveChunk(deps, batch.id, chunk);
        chunk = [];
      }
    }
  yield* await resolveChunk(deps, batch.id, chunk);
}

async function resolveChunk(
  deps: BatchRowsDeps,
  batchId: string,
  items: readonly RowItem[],
): Promise<ReportRow[]> {
  const keyed = items.filter((i): i is Exclude<RowItem, { kind: "rejected" }> => i.kind !== "rejected");
  const decisions = await deps.batches.decisions(
    batchId,
    keyed.map((i) => i.line),
  );
  const records = await deps.ledger.getMany(keyed.map((i) => i.key));
  const byLine = new Map(
    keyed.map((item, i) => [item.line, { decision: decisions[i] ?? null, record: records[i] }]),
  );
  // An in-file duplicate has its first occurrence's key, so its record; that line's ingest decision is
  // read too when it lies in an earlier chunk.
  const firsts = keyed.flatMap((item, i) =>
    item.kind === "duplicate" && !byLine.has(item.firstLine)
      ? [{ line: item.firstLine, record: records[i] }]
      : [],
  );
  const firstDecisions = await deps.batches.decisions(
    batchId,
    firsts.map((f) => f.line),
  );
  for (const [i, f] of firsts.entries())
    byLine.set(f.line, { decision: firstDecisions[i] ?? null, record: f.record });
  const resolve = (item: RowItem): ReportRow => {
    if (item.kind === "rejected") {
      const rejected = row(
        item.line,
        item.externalId ?? "",
        "",
        "rejected",
        undefined,
        formatFieldErrors(item.errors),
      );
      return item.lines === undefined ? rejected : { ...rejected, lines: item.lines };
    }
    const { decision, record } = byLine.get(item.line) ?? { decision: null, record: undefined };
    const id = item.invoice.external_id;
    if (item.kind === "duplicate") {
      const first = resolve({ kind: "valid", line: item.firstLine, invoice: item.invoice, key: item.key });
      return mirrorFirst(first, item.line, item.firstLine);
    }
    if (item.kind === "conflict") {
      const why = `external_id already at line ${item.firstLine} with other content (key ${item.earlierKey}); not sent`;
      return { ...row(item.line, id, item.key, "conflict", undefined, why), conflict_with: item.earlierKey };
    }
    if (decision === "duplicate")
      return row(item.line, id, item.key, "duplicate", record, "already succeeded earlier; not sent again");
    if (decision?.startsWith("conflict:") === true) {
      const earlier = decision.slice("conflict:".length);
      const why = `external_id already sent or in flight with other content under key ${earlier}; not sent`;
      return { ...row(item.line, id, item.key, "conflict", undefined, why), conflict_with: earlier };
    }
    if (record?.status === "superseded") {
      const why = `failed, then a newer version of this invoice was sent under key ${record.superseded_by ?? "?"}; not sent again`;
      return row(item.line, id, item.key, "superseded", record, why);
    }
    const status: RowStatus =
      record?.status === "succeeded" ? "succeeded" : record?.status === "failed" ? "failed" : "pending";
    return row(
      item.line,
      id,
      item.key,
      status,
      record,
      record?.status === "succeeded" ? "" : (record?.error ?? ""),
    );
  };
  return items.map(resolve);
}

/**
 * An in-file duplicate was never sent on its own: it ends as its first occurrence did (docs/submission.md,
 * "Idempotency keys"), `duplicate` after a success, else that line's status and error.
 */
function mirrorFirst(first: ReportRow, line: number, firstLine: number): ReportRow {
  const same = `same invoice as line ${firstLine}`;
  if (first.status === "succeeded" || first.status === "duplicate")
    return { ...first, line, status: "duplicate", error: same };
  return { ...first, line, error: first.error === "" ? same : `${same}: ${first.error}` };
}

/** A report row from its parts: the key's record (absent while none is kept) gives the answer's columns. */
export function row(
  line: number,
  externalId: string,
  key: string,
  status: RowStatus,
  record: ResultRecord | undefined,
  error: string,
): ReportRow {
  return {
    line,
    external_id: externalId,
    idempotency_key: key,
    status,
    http_status: record?.http_status === undefined ? "" : String(record.http_status),
    correlation_id: record?.correlation_id ?? "",
    ruleset_version: record?.ruleset_version ?? "",
    attempts: record === undefined ? "" : String(record.attempts),
    error,
  };
}
