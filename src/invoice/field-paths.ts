import { truncateValue, type FieldError } from "./field-error.js";
import {
  fieldSetter,
  normaliseFieldName,
  TOP_LEVEL,
  withoutFields,
  type FlatField,
  type PickedFields,
} from "./normalise.js";

/**
 * Dotted paths into JSON objects (`invoice.number`) and the field each fills, prepared once per file:
 * a source profile's `columns` for JSON and NDJSON (docs/vendor-files.md, "Vendor files").
 */
export interface FieldPaths {
  /** Lower-cased full path → the field and the path as the profile spells it. */
  readonly fields: ReadonlyMap<string, { readonly target: FlatField; readonly path: string }>;
  /** Lower-cased proper prefixes of those paths: the objects to look inside. */
  readonly parents: ReadonlySet<string>;
  /** Field → path as spelled, for the fields' errors (PickedFields.columns). */
  readonly columns: Readonly<Partial<Record<FlatField, string>>>;
}

/** Paths are matched segment by segment, trimmed and case-insensitively, as field names are. */
export function compileFieldPaths(columns: ReadonlyMap<string, FlatField>): FieldPaths {
  const fields = new Map<string, { target: FlatField; path: string }>();
  const parents = new Set<string>();
  const named: Partial<Record<FlatField, string>> = {};
  for (const [path, target] of columns) {
    const segments = path.split(".").map(normaliseFieldName);
    fields.set(segments.join("."), { target, path });
    for (let n = 1; n < segments.length; n++) parents.add(segments.slice(0, n).join("."));
    named[target] ??= path;
  }
  return { fields, parents, columns: Object.freeze(named) };
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * pickFields (src/invoice/normalise.ts) for a record read through a profile's paths: a mapped path fills
 * its field; every other name is matched as without a profile (`routing` objects included) or is unknown.
 */
export function pickFieldsByPaths(
  record: Readonly<Record<string, unknown>>,
  paths: FieldPaths,
): PickedFields {
  const fields: Partial<Record<FlatField, unknown>> = {};
  const unknown: string[] = [];
  const errors: FieldError[] = [];
  let unmapped: FlatField[] | undefined; // mapped fields filled by their own name instead
  const set = fieldSetter(fields, errors);
  const visit = (object: Readonly<Record<string, unknown>>, prefix: string, spelled: string): void => {
    for (const [name, value] of Object.entries(object)) {
      const path = prefix + normaliseFieldName(name);
      const shown = spelled + name;
      const mapped = paths.fields.get(path);
      if (mapped !== undefined) {
        set(mapped.target, value, mapped.path);
        unmapped = unmapped?.filter((t) => t !== mapped.target);
        continue;
      }
      if (paths.parents.has(path) || path === "routing") {
        if (isObject(value)) visit(value, `${path}.`, `${shown}.`);
        else if (path === "routing")
          errors.push({ field: "routing", value: truncateValue(value), reason: "must be an object" });
        else unknown.push(shown);
        continue;
      }
      const target = TOP_LEVEL.get(path);
      if (target === undefined) unknown.push(shown);
      else {
        if (paths.columns[target] !== undefined && !(target in fields)) (unmapped ??= []).push(target);
        set(target, value, shown);
      }
    }
  };
  visit(record, "", "");
  return { fields, unknown, errors, columns: unmappedRemoved(paths.columns, unmapped) };
}

/** The columns to name in errors, without the fields this record filled by their own names. */
function unmappedRemoved(
  columns: Readonly<Partial<Record<FlatField, string>>>,
  unmapped: readonly FlatField[] | undefined,
): Readonly<Partial<Record<FlatField, string>>> {
  if (unmapped === undefined || unmapped.length === 0) return columns;
  return withoutFields(columns, unmapped);
}
