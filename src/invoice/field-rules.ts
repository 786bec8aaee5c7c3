import { withoutFields, type FlatField, type PickedFields } from "./normalise.js";

/**
 * A source profile's `defaults` and `values` (docs/vendor-files.md, "Vendor files"), prepared once per file: applied
 * to each record's picked fields before normalisation, so that keys, derived from the canonical document
 * only, are the same however a vendor shapes and words its file.
 */
export interface FieldRules {
  /** Field → the value it takes when the record lacks it (absent, null or blank). */
  readonly defaults: readonly (readonly [FlatField, string])[];
  /** Field → the vendor's words (trimmed) → ours. */
  readonly values: readonly (readonly [FlatField, ReadonlyMap<string, string>])[];
}

/** The rules, or undefined when there are none (records are then passed on untouched). */
export function compileFieldRules(
  defaults: Readonly<Partial<Record<FlatField, string>>>,
  values: ReadonlyMap<FlatField, ReadonlyMap<string, string>>,
): FieldRules | undefined {
  const rules: FieldRules = {
    defaults: Object.entries(defaults).flatMap(([field, value]) =>
      value === undefined ? [] : [[field as FlatField, value] as const],
    ),
    values: [...values].filter(([, words]) => words.size > 0),
  };
  return rules.defaults.length === 0 && rules.values.length === 0 ? undefined : rules;
}

function lacks(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

/**
 * The record with the vendor's words replaced by ours and what it lacks filled in; a value the map does
 * not name is left as it is, to be validated as without a profile. Pure: a changed record is a copy.
 */
export function applyFieldRules(picked: PickedFields, rules: FieldRules): PickedFields {
  let fields: Partial<Record<FlatField, unknown>> | undefined;
  let columns = picked.columns;
  for (const [target, words] of rules.values) {
    const value = picked.fields[target];
    const word =
      typeof value === "string" ? value.trim() : typeof value === "number" ? String(value) : undefined;
    const ours = word === undefined ? undefined : words.get(word);
    if (ours !== undefined) (fields ??= { ...picked.fields })[target] = ours;
  }
  for (const [target, value] of rules.defaults) {
    if (!lacks((fields ?? picked.fields)[target])) continue;
    (fields ??= { ...picked.fields })[target] = value;
    // The value is the profile's, not the column's: an error about it must not blame the column.
    if (columns?.[target] !== undefined) columns = withoutFields(columns, [target]);
  }
  if (fields === undefined) return picked;
  return columns === undefined ? { ...picked, fields } : { ...picked, fields, columns };
}
