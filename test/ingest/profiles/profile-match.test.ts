import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimedName, parseClaimedName } from "../../../src/ingest/drop-folder.js";
import { SourceProfileError } from "../../../src/ingest/profiles/errors/source-profile-error.js";
import { SourcesFileMissingError } from "../../../src/ingest/profiles/errors/sources-file-missing-error.js";
import { parseProfiles } from "../../../src/ingest/profiles/load-profiles.js";
import { formatFor, profileFor } from "../../../src/ingest/profiles/profile-match.js";
import { loadSources, sourcesFilePath } from "../../../src/ingest/profiles/sources-file.js";
import { segment } from "../../support/file-names.js";

const PROFILES = parseProfiles(
  `profiles:
  - match: "sap-*.csv"
    delimiter: ";"
  - match: "sap-2026-*.csv"
    delimiter: "|"
  - match: "*.{csv,txt}"
  - match: "vendor-?.json"
    format: ndjson
`,
  "sources.yaml",
);

describe("matching a drop file to its profile", () => {
  it("when two profiles match, then the first in the file wins", () => {
    expect(profileFor(PROFILES, "sap-2026-11.csv")?.name).toBe('sources.yaml, profile 1 ("sap-*.csv")');
  });

  it("when only a later profile matches, then that one is used", () => {
    expect(profileFor(PROFILES, "erp.csv")?.name).toBe('sources.yaml, profile 3 ("*.{csv,txt}")');
    expect(profileFor(PROFILES, "vendor-7.json")?.name).toBe('sources.yaml, profile 4 ("vendor-?.json")');
  });

  it("when no profile matches, or there are none, then there is no profile", () => {
    expect(profileFor(PROFILES, "vendor-10.json")).toBeUndefined();
    expect(profileFor([], "sap-1.csv")).toBeUndefined();
    expect(profileFor(undefined, "sap-1.csv")).toBeUndefined();
  });

  it("when the name differs from the glob only in case, then it does not match, as on the file system", () => {
    expect(profileFor(PROFILES, "SAP-1.CSV")).toBeUndefined();
    expect(profileFor(PROFILES, "SAP-1.csv")?.name).toBe('sources.yaml, profile 3 ("*.{csv,txt}")');
  });

  it("when a file is claimed, then its name as dropped matches as before the claim, its name in processing/ does not", () => {
    const inProcessing = claimedName("20261121T020000Z-3fa9c1", segment("sap-1.csv"));
    expect(profileFor(PROFILES.slice(0, 1), inProcessing)).toBeUndefined();
    const dropped = parseClaimedName(inProcessing)?.name ?? "";
    expect(profileFor(PROFILES, dropped)?.name).toBe('sources.yaml, profile 1 ("sap-*.csv")');
  });

  it("when a profile sets format, then it overrides the extension's format", () => {
    expect(formatFor("vendor-7.json", profileFor(PROFILES, "vendor-7.json"))).toBe("ndjson");
    expect(formatFor("sap-1.csv", profileFor(PROFILES, "sap-1.csv"))).toBe("csv");
    expect(formatFor("a.jsonl", undefined)).toBe("ndjson");
  });
});

describe("finding the source profiles file", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sources-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("when SOURCES_FILE is not set and the drop folder has no sources.yaml, then there are no profiles", async () => {
    const drop = join(dir, "empty-drop");
    await mkdir(drop);
    expect(await loadSources({ sourcesFile: undefined, dropDir: drop })).toEqual({
      file: undefined,
      profiles: [],
    });
  });

  it("when SOURCES_FILE is not set and the drop folder has sources.yaml, then that file is loaded", async () => {
    const drop = join(dir, "drop");
    await mkdir(drop);
    await writeFile(join(drop, "sources.yaml"), 'profiles:\n  - match: "sap-*.csv"\n');
    const loaded = await loadSources({ sourcesFile: undefined, dropDir: drop });
    expect(loaded.file).toBe(join(drop, "sources.yaml"));
    expect(loaded.profiles.map((p) => p.name)).toEqual(['sources.yaml, profile 1 ("sap-*.csv")']);
  });

  it("when SOURCES_FILE is set, then it is used instead of the drop folder's sources.yaml", async () => {
    const drop = join(dir, "drop");
    const file = join(dir, "vendors.yaml");
    await writeFile(file, 'profiles:\n  - match: "*.json"\n');
    expect(await sourcesFilePath(file, drop)).toBe(file);
    expect((await loadSources({ sourcesFile: file, dropDir: drop })).profiles.map((p) => p.name)).toEqual([
      'vendors.yaml, profile 1 ("*.json")',
    ]);
  });

  it("when SOURCES_FILE is set but missing, then loading fails naming SOURCES_FILE", async () => {
    const file = join(dir, "nowhere.yaml");
    await expect(loadSources({ sourcesFile: file, dropDir: dir })).rejects.toBeInstanceOf(
      SourcesFileMissingError,
    );
    await expect(loadSources({ sourcesFile: file, dropDir: dir })).rejects.toThrow(
      `SOURCES_FILE ${file} does not exist`,
    );
  });

  it("when the drop folder's sources.yaml is broken, then loading fails naming it", async () => {
    const drop = join(dir, "broken-drop");
    await mkdir(drop);
    await writeFile(join(drop, "sources.yaml"), 'profiles:\n  - match: "sap-*.csv"\n    encoding: ascii\n');
    const error = await loadSources({ sourcesFile: undefined, dropDir: drop }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceProfileError);
    expect((error as Error).message).toMatch(
      /broken-drop\/sources\.yaml, profile 1 \("sap-\*\.csv"\), field encoding \(line 3\): "ascii" is not an encoding/,
    );
  });
});
