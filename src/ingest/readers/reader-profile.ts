import { compileFieldPaths, pickFieldsByPaths } from "../../invoice/field-paths.js";
import { applyFieldRules, compileFieldRules } from "../../invoice/field-rules.js";
import { normaliseFieldName, pickFields, type PickedFields } from "../../invoice/normalise.js";
import type { SourceProfile } from "../profiles/source-profile.js";
import type { HeaderMapping } from "./csv-header.js";

/** A source profile as one file's reader uses it, prepared once per file. */
export interface ReaderProfile {
  /** The profile's name for messages about what it sets, or "the source profile" without one. */
  readonly name: string;
  /** CSV header names (trimmed, lower-cased) → field, and the fields defaults fill. */
  readonly mapping: HeaderMapping;
  readonly delimiter: string | undefined;
  readonly quote: string | undefined;
  /** Lines above the header to skip (header_row - 1). */
  readonly preambleLines: number;
  /** A JSON object's invoice fields, through the profile's dotted paths if it has any. */
  readonly pick: (record: Readonly<Record<string, unknown>>) => PickedFields;
  /** The profile's `defaults` and `values` applied to picked fields (the fields as they are without). */
  readonly apply: (picked: PickedFields) => PickedFields;
}

const same = (picked: PickedFields): PickedFields => picked;

export function readerProfile(profile: SourceProfile | undefined): ReaderProfile {
  if (profile === undefined) {
    return {
      name: "the source profile",
      mapping: { columns: new Map(), defaulted: new Set() },
      delimiter: undefined,
      quote: undefined,
      preambleLines: 0,
      pick: (record) => pickFields(record),
      apply: same,
    };
  }
  const paths = profile.columns.size === 0 ? undefined : compileFieldPaths(profile.columns);
  const rules = compileFieldRules(profile.defaults, profile.values);
  return {
    name: profile.name,
    mapping: {
      columns: new Map([...profile.columns].map(([name, field]) => [normaliseFieldName(name), field])),
      defaulted: new Set(rules?.defaults.map(([field]) => field)),
    },
    delimiter: profile.delimiter,
    quote: profile.quote,
    preambleLines: Math.max(0, (profile.headerRow ?? 1) - 1),
    pick: paths === undefined ? (record) => pickFields(record) : (record) => pickFieldsByPaths(record, paths),
    apply: rules === undefined ? same : (picked) => applyFieldRules(picked, rules),
  };
}
