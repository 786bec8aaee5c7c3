import { FIELD_NAMES, normaliseFieldName, type FlatField } from "../../invoice/normalise.js";
import { rawInvoiceSchema } from "../../invoice/schema.js";
import { formatOf } from "../read-invoice-file.js";
import { canonicalField, canonicalFieldHint } from "./canonical-field.js";
import { globProblem } from "./profile-match.js";
import { shown, type RawProfile } from "./profile-schema.js";
import { readingOptions, type SourceProfile } from "./source-profile.js";

/** A problem of one profile: its field as a path below the profile, and what to write instead. */
export interface FieldProblem {
  readonly path: readonly string[];
  readonly problem: string;
}

/** What the schema cannot see field by field: the glob, fields against each other, keys of the maps. */
export function checkProfile(raw: RawProfile): {
  readonly problems: FieldProblem[];
  readonly profile?: Omit<SourceProfile, "name">;
} {
  const problems: FieldProblem[] = [];
  const add = (path: readonly string[], problem: string) => problems.push({ path, problem });

  const glob = globProblem(raw.match);
  if (glob !== undefined) add(["match"], glob);
  if (raw.delimiter !== undefined && raw.delimiter === raw.quote)
    add(
      ["quote"],
      `is ${shown(raw.quote)}, the same character as delimiter; write another quote, such as "\\""`,
    );
  else if (raw.delimiter === '"' && raw.quote === undefined)
    add(
      ["delimiter"],
      `is "\\"", the quote character when quote is not set; write another delimiter, or set another quote such as "'"`,
    );
  if (raw.format !== undefined && raw.format !== "csv")
    for (const field of ["delimiter", "quote", "header_row"] as const)
      if (raw[field] !== undefined)
        add([field], `applies to CSV files only, but format is ${raw.format}; remove it, or set format: csv`);

  const columns = checkColumns(raw.columns ?? {}, add);
  if (readsJson(raw)) checkJsonPaths(raw.columns ?? {}, raw.format === undefined, add);
  const defaults = checkDefaults(raw.defaults ?? {}, add);
  const values = checkValues(raw.values ?? {}, add);
  if (problems.length > 0) return { problems };
  return {
    problems,
    profile: {
      match: raw.match,
      ...readingOptions({ ...raw, headerRow: raw.header_row, reportEncoding: raw.report_encoding }),
      columns,
      defaults,
      values,
    },
  };
}

type Add = (path: readonly string[], problem: string) => void;

/** Source column → canonical field: each column once (as headers match, ignoring case), each field once. */
function checkColumns(columns: Readonly<Record<string, FlatField>>, add: Add): Map<string, FlatField> {
  const out = new Map<string, FlatField>();
  const sources = new Map<string, string>();
  const targets = new Map<FlatField, string>();
  for (const [source, field] of Object.entries(columns)) {
    const path = ["columns", source];
    const same = sources.get(source.trim().toLowerCase());
    const earlier = targets.get(field);
    if (source.trim() === "")
      add(path, "names no column; write the CSV header name or the dotted JSON path, such as invoice.number");
    else if (same !== undefined)
      add(
        path,
        `is the same column as ${shown(same)} (columns are matched ignoring case and surrounding spaces); keep one of them`,
      );
    else if (earlier !== undefined)
      add(
        path,
        `maps to ${field}, as column ${shown(earlier)} does; a canonical field takes one column, so remove one of them`,
      );
    sources.set(source.trim().toLowerCase(), source);
    targets.set(field, source);
    out.set(source, field);
  }
  return out;
}

/** Whether the profile may read JSON: its format says so, or, without one, its glob need not end in `.csv`. */
function readsJson(raw: RawProfile): boolean {
  return raw.format === undefined ? formatOf(raw.match) !== "csv" : raw.format !== "csv";
}

/**
 * JSON paths as src/invoice/field-paths.ts follows them, segment by segment, trimmed and ignoring case:
 * two columns must not be one path, and a mapped path must not lead into another's object (`invoice`
 * would take the whole object, and `invoice.number` would never be read).
 */
function checkJsonPaths(columns: Readonly<Record<string, FlatField>>, formatUnset: boolean, add: Add): void {
  const earlier: (readonly [string, string])[] = [];
  const orCsv = formatUnset ? " (if the file is CSV, whose header names may hold dots, set format: csv)" : "";
  for (const source of Object.keys(columns)) {
    if (source.trim() === "") continue;
    const path = source.split(".").map(normaliseFieldName).join(".");
    for (const [other, otherPath] of earlier) {
      if (other.trim().toLowerCase() === source.trim().toLowerCase()) break; // refused by checkColumns
      const problem =
        otherPath === path
          ? `is the same JSON path as ${shown(other)} (paths are matched segment by segment, ignoring case ` +
            "and surrounding spaces); keep one of them"
          : path.startsWith(`${otherPath}.`)
            ? `is a JSON path inside ${shown(other)}, which is mapped too; a mapped path must lead to a value, ` +
              `not to an object, so remove ${shown(other)}${orCsv}`
            : otherPath.startsWith(`${path}.`)
              ? `is a JSON path to the object holding ${shown(other)}, which is mapped too; a mapped path must ` +
                `lead to a value, not to an object, so remove ${shown(source)}${orCsv}`
              : undefined;
      if (problem === undefined) continue;
      add(["columns", source], problem);
      break;
    }
    earlier.push([source, path]);
  }
}

/** Canonical field → the value a file without it gets. */
function checkDefaults(
  defaults: Readonly<Record<string, string>>,
  add: Add,
): Partial<Record<FlatField, string>> {
  const out: Partial<Record<FlatField, string>> = {};
  for (const [name, value] of Object.entries(defaults)) {
    const field = fieldKey(["defaults", name], out, add);
    if (field === undefined) continue;
    const invalid = value.trim() === "" ? undefined : fieldProblem(field, value);
    if (value.trim() === "")
      add(["defaults", name], "is empty; write the value to use when the file has none");
    else if (invalid !== undefined) add(["defaults", name], invalid);
    out[field] = value.trim();
  }
  return out;
}

/** Canonical field → the vendor's words → ours. */
function checkValues(
  values: Readonly<Record<string, Readonly<Record<string, string>>>>,
  add: Add,
): Map<FlatField, Map<string, string>> {
  const out = new Map<FlatField, Map<string, string>>();
  const seen: Partial<Record<FlatField, true>> = {};
  for (const [name, words] of Object.entries(values)) {
    const field = fieldKey(["values", name], seen, add);
    if (field === undefined) continue;
    seen[field] = true;
    const map = new Map<string, string>();
    const written = new Map<string, string>();
    for (const [theirs, ours] of Object.entries(words)) {
      const path = ["values", name, theirs];
      const key = theirs.trim();
      const same = written.get(key);
      if (key === "") add(path, "maps an empty value; use defaults for a value the file lacks");
      else if (same !== undefined)
        add(
          path,
          `is the same value as ${shown(same)} (values are matched after trimming spaces); keep one of them`,
        );
      else if (ours.trim() === "") add(path, "maps to nothing; write our value, such as DE");
      else {
        const invalid = fieldProblem(field, ours);
        if (invalid !== undefined) add(path, invalid);
      }
      written.set(key, theirs);
      map.set(key, ours.trim());
    }
    out.set(field, map);
  }
  return out;
}

/**
 * Why a value the profile puts into a field would fail that field's validation in every row, or
 * undefined when it passes: the invoice's own rules (src/invoice/schema.ts), normalisation included, so
 * `eur` passes as currency just as it does in a row.
 */
function fieldProblem(field: FlatField, value: string): string | undefined {
  const parsed = rawInvoiceSchema.shape[field].safeParse(value);
  if (parsed.success) return undefined;
  const reason = parsed.error.issues.map((issue) => issue.message).join("; ");
  return `${shown(value)} is not valid for ${FIELD_NAMES[field]}: ${reason}`;
}

/** A key of `defaults` or `values` as a canonical field, each field once (aliases included). */
function fieldKey(
  path: readonly string[],
  seen: Partial<Record<FlatField, unknown>>,
  add: Add,
): FlatField | undefined {
  const name = path[path.length - 1] ?? "";
  const field = canonicalField(name);
  if (field === undefined) {
    add(path, `${shown(name)} is not a canonical field; ${canonicalFieldHint()}`);
    return undefined;
  }
  if (field in seen) {
    add(path, `is ${field} again, given once already under another name; keep one of them`);
    return undefined;
  }
  return field;
}
