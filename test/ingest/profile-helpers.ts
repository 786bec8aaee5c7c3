import { readInvoices, type FileFormat, type ReadOptions } from "../../src/ingest/read-invoice-file.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import type { CsvHeaderInfo } from "../../src/ingest/readers/csv.js";
import type { SourceProfile } from "../../src/ingest/profiles/source-profile.js";
import type { FlatField } from "../../src/invoice/normalise.js";
import { bytesOf, chunked, ns } from "./read-helpers.js";

/** A source profile as the loader hands it to the readers, with nothing set but what is given. */
export function profileOf(
  set: Partial<Omit<SourceProfile, "columns" | "values">> & {
    readonly columns?: Readonly<Record<string, FlatField>>;
    readonly values?: Readonly<Partial<Record<FlatField, Readonly<Record<string, string>>>>>;
  } = {},
): SourceProfile {
  const { columns = {}, values = {}, ...rest } = set;
  return {
    name: 'sources.yaml, profile 1 ("vendor-*")',
    match: "vendor-*",
    defaults: {},
    ...rest,
    columns: new Map(Object.entries(columns)),
    values: new Map(
      Object.entries(values).map(([field, words]) => [field as FlatField, new Map(Object.entries(words))]),
    ),
  };
}

/** Every item `readInvoices` yields through the profile (none: as without one), and the CSV header seen. */
export async function readThrough(
  input: string | Uint8Array,
  format: FileFormat,
  profile?: SourceProfile,
  sizes: readonly number[] = [],
): Promise<{ items: ReadItem[]; header: CsvHeaderInfo | undefined }> {
  const items: ReadItem[] = [];
  let header: CsvHeaderInfo | undefined;
  const options: ReadOptions & { format: FileFormat; displayName: string } = {
    namespace: ns,
    format,
    displayName: "vendor.file",
    profile,
    onCsvHeader: (seen) => {
      if (header !== undefined) throw new Error("onCsvHeader called twice");
      header = seen;
    },
  };
  for await (const item of readInvoices(chunked(bytesOf(input), sizes), options)) items.push(item);
  return { items, header };
}
