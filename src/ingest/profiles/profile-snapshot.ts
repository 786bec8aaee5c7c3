import { z } from "zod";
import type { FlatField } from "../../invoice/normalise.js";
import { CANONICAL_FIELDS } from "./canonical-field.js";
import { ENCODINGS, REPORT_ENCODINGS, readingOptions, type SourceProfile } from "./source-profile.js";
import { FILE_FORMATS } from "../../ledger/statuses.js";

const isField = (value: unknown): value is FlatField =>
  typeof value === "string" && CANONICAL_FIELDS.some((f) => f === value);
const field = z.custom<FlatField>(isField, "not a canonical field");

const snapshotSchema = z.strictObject({
  name: z.string(),
  match: z.string(),
  format: z.enum(FILE_FORMATS).optional(),
  delimiter: z.string().optional(),
  quote: z.string().optional(),
  encoding: z.enum(ENCODINGS).optional(),
  headerRow: z.number().int().positive().optional(),
  reportEncoding: z.enum(REPORT_ENCODINGS).optional(),
  columns: z.array(z.tuple([z.string(), field])),
  defaults: z.partialRecord(field, z.string()),
  values: z.array(z.tuple([field, z.array(z.tuple([z.string(), z.string()]))])),
});

/**
 * The profile a batch was read with, as its batch record keeps it: a report, a resumed ingest or a
 * repair reads the file again with exactly this profile, even if SOURCES_FILE was edited since (another
 * profile would give other keys).
 */
export function profileSnapshot(profile: SourceProfile): string {
  return JSON.stringify({
    name: profile.name,
    match: profile.match,
    ...readingOptions(profile),
    columns: [...profile.columns],
    defaults: profile.defaults,
    values: [...profile.values].map(([f, words]) => [f, [...words]]),
  });
}

/** The profile a batch record keeps (undefined: read without one). Throws when the snapshot is damaged. */
export function profileFromSnapshot(snapshot: string | undefined): SourceProfile | undefined {
  if (snapshot === undefined) return undefined;
  const s = snapshotSchema.parse(JSON.parse(snapshot));
  return {
    name: s.name,
    match: s.match,
    ...readingOptions(s),
    columns: new Map(s.columns),
    defaults: s.defaults,
    values: new Map(s.values.map(([f, words]) => [f, new Map(words)])),
  };
}

/** The profile a batch was ingested with, from its record. */
export function profileOfBatch(batch: {
  readonly profile_json?: string | undefined;
}): SourceProfile | undefined {
  return profileFromSnapshot(batch.profile_json);
}
