import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import { SourceProfileError } from "./errors/source-profile-error.js";
import type { ProfileProblem } from "./errors/sources-file-problems-error.js";
import { SourcesFileMissingError } from "./errors/sources-file-missing-error.js";
import { SourcesSyntaxError } from "./errors/sources-syntax-error.js";
import { checkProfile } from "./profile-checks.js";
import { nearest, PROFILE_FIELDS, rawProfileSchema, shown } from "./profile-schema.js";
import type { SourceProfile } from "./source-profile.js";

/**
 * Reads and validates a source profiles file (docs/configuration.md, "Source profiles"). Throws
 * SourcesFileMissingError (not there, not readable), SourcesSyntaxError (not UTF-8 YAML) or
 * SourceProfileError (every field problem, each naming the file, the profile and the field).
 */
export async function loadProfiles(path: string): Promise<SourceProfile[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (thrown) {
    throw new SourcesFileMissingError(path, readProblem(thrown));
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new SourcesSyntaxError(path, undefined, "the file is not UTF-8 text; save it as UTF-8");
  }
  return parseProfiles(text, path);
}

function readProblem(thrown: unknown): string {
  const code = (thrown as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "does not exist";
  if (code === "EISDIR") return "is a folder, not a file";
  if (code === "EACCES" || code === "EPERM") return "cannot be read (permission denied)";
  return `cannot be read (${thrown instanceof Error ? thrown.message : String(thrown)})`;
}

/**
 * The profiles of a file's text; `file` names it in messages, its base name in each profile's `name`
 * (`sources.yaml, profile 2 ("sap-*.csv")`). The YAML failsafe schema keeps every value a string exactly
 * as written (`1.0` is not turned into 1, `NO` not into false).
 */
export function parseProfiles(text: string, file: string): SourceProfile[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { schema: "failsafe", lineCounter: lines, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax !== undefined)
    throw new SourcesSyntaxError(file, lines.linePos(syntax.pos[0]).line, syntax.message);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (thrown) {
    throw new SourcesSyntaxError(file, undefined, thrown instanceof Error ? thrown.message : String(thrown));
  }
  const lineOf = (path: readonly (string | number)[]) => lineAt(doc, lines, path);
  const entries = profileEntries(data, file, lineOf);
  const problems: ProfileProblem[] = [];
  const profiles: SourceProfile[] = [];
  for (const [i, entry] of entries.entries()) {
    const match = isRecord(entry) && typeof entry["match"] === "string" ? entry["match"] : undefined;
    const label = (name: string) =>
      `${name}, profile ${i + 1}${match === undefined ? "" : ` (${JSON.stringify(match)})`}`;
    const where = label(file);
    const at = (path: readonly string[], problem: string) =>
      problems.push({ where, field: fieldName(path), line: lineOf(["profiles", i, ...path]), problem });
    if (entry === "" || (isRecord(entry) && Object.keys(entry).length === 0)) {
      at(["match"], 'is required: the profile is empty; write at least match: "<glob on the file name>"');
      continue;
    }
    if (!isRecord(entry)) {
      at([], `must be a map of fields such as match: "sap-*.csv", not ${shown(entry)}`);
      continue;
    }
    const parsed = rawProfileSchema.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const path = issue.path.map(String);
        if (issue.code === "unrecognized_keys")
          for (const key of issue.keys) at([...path, key], unknownField(key));
        else at(path, issue.message);
      }
      continue;
    }
    const checked = checkProfile(parsed.data);
    for (const p of checked.problems) at(p.path, p.problem);
    if (checked.profile !== undefined) profiles.push({ name: label(basename(file)), ...checked.profile });
  }
  if (problems.length > 0) throw new SourceProfileError(file, problems);
  return profiles;
}

/** The file's `profiles:` list, or a SourceProfileError saying what the file should look like. */
function profileEntries(
  data: unknown,
  file: string,
  lineOf: (path: readonly (string | number)[]) => number | undefined,
): unknown[] {
  const fail = (field: string, problem: string): never => {
    throw new SourceProfileError(file, [{ where: file, field, line: lineOf([field]), problem }]);
  };
  const shape = 'write a map with one field, profiles: a list of profiles, each starting "- match:"';
  if (data === null || data === undefined || data === "")
    return fail("profiles", `is missing: the file is empty; ${shape}`);
  if (!isRecord(data)) return fail("profiles", `is missing: the file is ${shown(data)}; ${shape}`);
  const unknown = Object.keys(data).find((key) => key !== "profiles" && key !== "sftp");
  if (unknown !== undefined)
    return fail(
      unknown,
      "is not a field of the file; it has two fields, profiles: a list of profiles, and sftp: a list of " +
        "SFTP sources (docs/sftp.md)",
    );
  const list = data["profiles"];
  if (list === undefined) return "sftp" in data ? [] : fail("profiles", `is missing; ${shape}`);
  if (!Array.isArray(list))
    return fail(
      "profiles",
      `must be a list of profiles, each starting "- match:", not ${list === "" ? "empty" : shown(list)} ` +
        "(for no profiles, write profiles: [] or remove the file)",
    );
  return list as unknown[];
}

function unknownField(key: string): string {
  const meant = nearest(key, PROFILE_FIELDS);
  return (
    `is not a profile field; ${meant === undefined ? "" : `write ${meant}, or `}` +
    `use only ${PROFILE_FIELDS.join(", ")}`
  );
}

/** A field path as an operator finds it in the file: `encoding`, `columns["Währung"]`, `values.currency.Euro`. */
function fieldName(path: readonly string[]): string | undefined {
  if (path.length === 0) return undefined;
  return path
    .map((seg, i) =>
      i === 0 ? seg : /^[A-Za-z_][A-Za-z0-9_]*$/.test(seg) ? `.${seg}` : `[${JSON.stringify(seg)}]`,
    )
    .join("");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The 1-based line of the deepest part of `path` found in the document: a map key's line, or an item's. */
export function lineAt(
  doc: Document,
  lines: LineCounter,
  path: readonly (string | number)[],
): number | undefined {
  let node: unknown = doc.contents;
  let offset: number | undefined;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (pair === undefined) break;
      offset = isNode(pair.key) ? (pair.key.range?.[0] ?? offset) : offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      const item: unknown = node.items[segment];
      if (!isNode(item)) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset === undefined ? undefined : lines.linePos(offset).line;
}
