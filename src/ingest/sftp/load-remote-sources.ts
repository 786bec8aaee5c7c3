import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import type { ProfileProblem } from "../profiles/errors/sources-file-problems-error.js";
import { lineAt } from "../profiles/load-profiles.js";
import { globProblem } from "../profiles/profile-match.js";
import { sourcesFilePath } from "../profiles/sources-file.js";
import { RemoteSourceError } from "./errors/remote-source-error.js";
import { exists } from "../local-files.js";
import type { RemoteSource } from "./remote-source.js";
import {
  checkRemoteSource,
  rawRemoteSourceSchema,
  REMOTE_SOURCE_FIELDS,
  validFields,
} from "./remote-source-schema.js";

/**
 * The SFTP sources of the sources file (its `sftp:` list; docs/sftp.md), checked as a whole: every
 * problem, each naming the source and the field, in one RemoteSourceError. The files it names (keys,
 * passphrases, passwords, known_hosts) must be readable and a password variable set; they are read
 * again at each connection, so a rotated secret is used from the next poll on. The sources file itself
 * is read by loadProfiles first, which reports a missing file or broken YAML.
 */
export async function loadRemoteSources(settings: {
  readonly sourcesFile: string | undefined;
  readonly dropDir: string;
  readonly env?: NodeJS.ProcessEnv;
}): Promise<RemoteSource[]> {
  const file = await sourcesFilePath(settings.sourcesFile, settings.dropDir);
  if (file === undefined) return [];
  const text = await readFile(file, "utf8");
  const lines = new LineCounter();
  const doc = parseDocument(text, { schema: "failsafe", lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) return []; // loadProfiles reports it
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (data === null || typeof data !== "object" || !("sftp" in data)) return [];
  const list: unknown = (data as Record<string, unknown>)["sftp"];
  const problems: ProfileProblem[] = [];
  const lineOf = (path: readonly (string | number)[]) => lineAt(doc, lines, path);
  if (!Array.isArray(list)) {
    throw new RemoteSourceError(file, [
      {
        where: file,
        field: "sftp",
        line: lineOf(["sftp"]),
        problem: 'must be a list of sources, each starting "- name:"',
      },
    ]);
  }
  const sources: RemoteSource[] = [];
  for (const [i, entry] of (list as unknown[]).entries()) {
    const named = isRecord(entry) && typeof entry["name"] === "string" ? ` (${entry["name"]})` : "";
    const where = `${basename(file)}, sftp source ${i + 1}${named}`;
    const at = (path: readonly string[], problem: string) =>
      problems.push({ where, field: path.join("."), line: lineOf(["sftp", i, ...path]), problem });
    const parsed = rawRemoteSourceSchema.safeParse(entry);
    const refused = new Set<string>();
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const path = issue.path.map(String);
        if (issue.code === "unrecognized_keys")
          for (const key of issue.keys)
            at(
              [...path, key],
              `is not a field of an SFTP source; use only ${REMOTE_SOURCE_FIELDS.join(", ")}`,
            );
        else {
          refused.add(path[0] ?? "");
          at(path.length === 0 ? [] : [path[0] ?? ""], issue.message);
        }
      }
    }
    const fields = parsed.success ? parsed.data : isRecord(entry) ? validFields(entry, refused) : {};
    const checked = checkRemoteSource(fields);
    for (const p of checked.problems) at(p.path, p.problem);
    for (const glob of checked.source?.match ?? []) {
      const problem = globProblem(glob);
      if (problem !== undefined) at(["match"], problem);
    }
    const source = parsed.success ? checked.source : undefined;
    if (source === undefined) continue;
    for (const [field, path] of secretFiles(source)) {
      if ((await stat(path).catch(() => undefined))?.isDirectory() === true)
        at([field], `names ${path}, a folder; name the file itself`);
      else if (!(await exists(path)))
        at([field], `names ${path}, which cannot be read; check the path and its permissions`);
    }
    if (
      source.auth.kind === "password-env" &&
      (settings.env ?? process.env)[source.auth.passwordEnv] === undefined
    )
      at(["password_env"], `names ${source.auth.passwordEnv}, which is not set in the environment`);
    if (sources.some((s) => s.name === source.name))
      at(["name"], `${source.name} names an earlier source too; give each source its own name`);
    sources.push(source);
  }
  if (problems.length > 0) throw new RemoteSourceError(file, problems);
  return sources;
}

function secretFiles(source: RemoteSource): [string, string][] {
  const files: [string, string][] = [];
  if (source.auth.kind === "key") {
    files.push(["key_file", source.auth.keyFile]);
    if (source.auth.passphraseFile !== undefined) files.push(["passphrase_file", source.auth.passphraseFile]);
  }
  if (source.auth.kind === "password-file") files.push(["password_file", source.auth.passwordFile]);
  if (source.hostKey.kind === "known-hosts") files.push(["known_hosts", source.hostKey.file]);
  return files;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
