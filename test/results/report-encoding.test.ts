import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { claimedName, dropFolder, ensureDropFolder, newBatchId } from "../../src/ingest/drop-folder.js";
import { parseProfiles } from "../../src/ingest/profiles/load-profiles.js";
import { profileSnapshot } from "../../src/ingest/profiles/profile-snapshot.js";
import { resolveNamespace } from "../../src/invoice/key.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { segment } from "../support/file-names.js";
import { reportPaths, writeBatchReport } from "../../src/results/batch-report.js";
import { fileSystemCode } from "../../src/errors/file-system-fixes.js";
import { ReportWriteError } from "../../src/results/errors/report-write-error.js";
import type { ReportEncoding } from "../../src/ingest/profiles/source-profile.js";
import { tempDropDir } from "../support/drop.js";
import { testPrefix, testRedis } from "../support/redis.js";

const CSV = "external_id,currency,destination_country,archive_policy\nRE-2026-11-0003-Ä,EUR,DE,eu-10y\n";
const BOM = [0xef, 0xbb, 0xbf];
const redis = testRedis();
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  redis.disconnect();
});

/** A batch of one claimed CSV, read with a profile whose `report_encoding:` is `profileEncoding` (if any). */
async function batchIn(folderEncoding?: ReportEncoding, profileEncoding?: ReportEncoding) {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const folder = dropFolder(drop.dir, { reportEncoding: folderEncoding });
  await ensureDropFolder(folder);
  const prefix = testPrefix();
  const batches = new BatchStore(redis, prefix);
  const id = newBatchId();
  const file = segment("finance.csv");
  const path = join(folder.processing, claimedName(id, file));
  await writeFile(path, CSV);
  const yaml =
    profileEncoding === undefined
      ? undefined
      : `profiles:\n  - match: "*.csv"\n    report_encoding: ${profileEncoding}\n`;
  const profile = yaml === undefined ? undefined : parseProfiles(yaml, "sources.yaml")[0];
  await batches.open({
    id,
    file,
    format: "csv",
    path,
    host: "here",
    ...(profile === undefined ? {} : { profile: profile.name, profileJson: profileSnapshot(profile) }),
  });
  const deps = { ledger: new RedisLedger(redis, prefix), batches, namespace: resolveNamespace() };
  return { folder, deps, meta: await batches.require(id) };
}

async function writtenBytes(folderEncoding?: ReportEncoding, profileEncoding?: ReportEncoding) {
  const { folder, deps, meta } = await batchIn(folderEncoding, profileEncoding);
  const report = await writeBatchReport(deps, meta, folder);
  return {
    csv: await readFile(report.csvPath),
    summary: await readFile(report.summaryPath),
  };
}

describe("the encoding reports are written in", () => {
  it("when nothing sets it, then the results CSV is UTF-8 without a byte order mark", async () => {
    const { csv } = await writtenBytes();
    expect(csv.subarray(0, 5).toString()).toBe("line,");
    expect(csv.toString("utf8")).toContain("RE-2026-11-0003-Ä");
  });

  it("when REPORT_ENCODING is utf-8-bom, then the CSV starts with EF BB BF and the summary JSON still parses, without one", async () => {
    const { csv, summary } = await writtenBytes("utf-8-bom");
    expect([...csv.subarray(0, 3)]).toEqual(BOM);
    expect(csv.subarray(3).toString("utf8")).toMatch(/^line,external_id,/);
    expect(csv.subarray(3).toString("utf8")).toContain("RE-2026-11-0003-Ä");
    expect(summary[0]).toBe(0x7b);
    expect(JSON.parse(summary.toString("utf8"))).toMatchObject({ file: "finance.csv" });
  });

  it("when the file's source profile sets report_encoding, then it wins over REPORT_ENCODING either way", async () => {
    expect([...(await writtenBytes(undefined, "utf-8-bom")).csv.subarray(0, 3)]).toEqual(BOM);
    expect((await writtenBytes("utf-8-bom", "utf-8")).csv.subarray(0, 5).toString()).toBe("line,");
  });

  it("when REPORT_ENCODING or a profile's report_encoding is not one of the two, then each is refused naming what to write", () => {
    expect(() => loadConfig({ REPORT_ENCODING: "latin1" })).toThrow(
      /REPORT_ENCODING must be utf-8 or utf-8-bom \(for reports opened in Excel\)/,
    );
    expect(() =>
      parseProfiles('profiles:\n  - match: "*.csv"\n    report_encoding: excel\n', "s.yaml"),
    ).toThrow(
      /s\.yaml, profile 1 \("\*\.csv"\), field report_encoding \(line 3\): "excel" is not a report encoding; write utf-8 or utf-8-bom/,
    );
  });
});

describe("a report the file system refuses", () => {
  it("when the disk is full, then the error names the file, its batch, the reports folder, ENOSPC and what to do, and leaves nothing behind", async () => {
    const { folder, deps, meta } = await batchIn();
    // The report's temporary file is /dev/full, where every write fails with ENOSPC, as on a full disk.
    await symlink("/dev/full", `${reportPaths(folder.reports, meta).csv}.${process.pid}.tmp`);
    const failure = await writeBatchReport(deps, meta, folder).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: "REPORT_UNWRITABLE", errno: "ENOSPC" });
    expect(String(failure)).toContain(
      `cannot write the report of finance.csv (batch ${meta.id}) to ${folder.reports}: ENOSPC, the file system is full; free space on it`,
    );
    expect(await readdir(folder.reports)).toEqual([]);
    expect((await deps.batches.require(meta.id)).state).toBe("ingesting");
  });

  it("when the file system is read-only or the quota is used up, then the same error says that and its fix; other failures pass through as they are", () => {
    const readOnly = new ReportWriteError("/srv/drop/reports", "a.csv", "b1", "EROFS");
    expect(readOnly.message).toContain("EROFS, the file system is mounted read-only; mount it read-write");
    expect(fileSystemCode(Object.assign(new Error("x"), { code: "EDQUOT" }))).toBe("EDQUOT");
    expect(fileSystemCode(Object.assign(new Error("x"), { code: "ENAMETOOLONG" }))).toBeUndefined();
  });
});
