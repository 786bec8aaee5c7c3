import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveNamespace } from "../../src/invoice/key.js";
import {
  claimedName,
  dropFolder,
  ensureDropFolder,
  moveClaimed,
  newBatchId,
} from "../../src/ingest/drop-folder.js";
import { openSftpSession } from "../../src/ingest/sftp/session.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { RemoteClaims } from "../../src/ledger/remote-claims.js";
import { silentLogger } from "../../src/log/logger.js";
import type { FileName } from "../../src/names/file-name.js";
import { segment } from "../support/file-names.js";
import { writeBatchReport } from "../../src/results/batch-report.js";
import { pullRemoteSources, pullSettled, type RemotePullDeps } from "../../src/use-cases/remote-pull.js";
import { tempDropDir } from "../support/drop.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { startSftpServer, type SftpServer } from "../support/sftp-server.js";
import { acmeSource } from "../support/remote-source.js";

const CSV = "external_id,currency,destination_country,archive_policy\nW-1,EUR,DE,eu-10y\n";
const redis = testRedis();
let server: SftpServer;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startSftpServer();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server.close();
  redis.disconnect();
});

/** A name this machine's file system holds, but not with the 20-odd bytes the relay adds to it. */
function named(bytes: number): FileName {
  return segment(`${"n".repeat(bytes - 4)}.csv`);
}

async function world(inboxName: string) {
  const inbox = join(server.root, inboxName);
  await mkdir(inbox);
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const folder = dropFolder(drop.dir);
  await ensureDropFolder(folder);
  const prefix = testPrefix();
  const source = acmeSource(server, inbox, await server.hostFingerprint(), { reports: true });
  const batches = new BatchStore(redis, prefix);
  const deps: RemotePullDeps = {
    folder,
    batches,
    logger: silentLogger(),
    redis,
    prefix,
    openSession: openSftpSession,
    sources: [source],
    settleMs: 0,
    attempts: 1,
    backoffMs: 10,
  };
  return { inbox, folder, prefix, deps, batches, claims: new RemoteClaims(redis, prefix, "acme") };
}

describe("write paths given a name the file system refuses", () => {
  it("when a report's name is too long for the file system, then writing it fails with ENAMETOOLONG to its caller, no unhandled 'error' event, nothing half-written left", async () => {
    const w = await world("reports");
    const id = newBatchId();
    const name = named(240);
    const path = join(w.folder.processing, claimedName(id, named(9)));
    await writeFile(path, CSV);
    await w.batches.open({ id, file: name, format: "csv", path, host: "here" });
    const meta = await w.batches.require(id);
    const deps = {
      ledger: new RedisLedger(redis, w.prefix),
      batches: w.batches,
      namespace: resolveNamespace(),
    };
    await expect(writeBatchReport(deps, meta, w.folder)).rejects.toMatchObject({
      code: "ENAMETOOLONG",
    });
    expect(await readdir(w.folder.reports)).toEqual([]);
  });

  it("when a claimed file is archived under a name too long for the file system, then the move fails to its caller with ENAMETOOLONG", async () => {
    const w = await world("archive");
    const id = newBatchId();
    const path = join(w.folder.processing, claimedName(id, named(9)));
    await writeFile(path, CSV);
    const file = { batchId: id, name: named(240), path };
    await expect(moveClaimed(w.folder, file, "archive")).rejects.toMatchObject({ code: "ENAMETOOLONG" });
  });

  it("when a claim left by an earlier version names a file too long for the names made from it, then the pull drops that claim, names the file, and takes the source's other files", async () => {
    const w = await world("downloads");
    const long = named(235);
    await writeFile(join(w.inbox, long), CSV);
    await writeFile(join(w.inbox, "other.csv"), CSV);
    const info = await stat(join(w.inbox, long));
    await w.claims.begin(long, {
      batch: newBatchId(),
      name: long,
      size: info.size,
      mtimeMs: Math.floor(info.mtimeMs / 1000) * 1000,
      step: "downloading",
    });
    // Polled twice, as `run` does: a file is settled only across two polls.
    const [pull] = await pullSettled(w.deps);
    expect(pull?.error).toBeUndefined();
    expect(pull?.taken).toBe(1);
    expect(new Set(pull?.left?.map((r) => r.shown))).toEqual(new Set([long]));
    expect(pull?.left?.map((r) => r.why).join("\n")).toMatch(/rename the file to a shorter name/);
    expect(await w.claims.claims()).toEqual(new Map());
    const local = await readdir(w.folder.processing);
    expect(local.filter((n) => n.startsWith("."))).toEqual([]);
    expect(local.map((n) => n.replace(/^.*?--/, ""))).toEqual(["other.csv"]);
    expect(await readdir(w.inbox)).toContain(long);
  });

  it("when the server refuses the name of a report upload, then that batch's upload fails alone, named, and the other batches' reports are uploaded", async () => {
    const w = await world("uploads");
    await mkdir(join(w.inbox, "processing"));
    await mkdir(join(w.inbox, "archive"));
    await mkdir(join(w.inbox, "reports"));
    // 214 bytes: its reports' names fit here (252 bytes), not their temporary names on the server.
    for (const name of [named(214), named(9)]) {
      const id = newBatchId();
      const claimed = claimedName(id, name);
      await writeFile(join(w.inbox, "processing", claimed), CSV);
      const path = join(w.folder.archive, claimed);
      await writeFile(path, CSV);
      const reports = { csv: join(w.folder.reports, `${name}.${id}.results.csv`), summary: "" };
      reports.summary = reports.csv.replace(/results\.csv$/, "summary.json");
      await writeFile(reports.csv, "line\n");
      await writeFile(reports.summary, "{}\n");
      await w.batches.open({ id, file: name, format: "csv", path, host: "here" });
      await w.batches.markReported(id, {
        report_csv: reports.csv,
        summary_json: reports.summary,
        counts: "{}",
        path,
      });
      await w.claims.setPulled(id, {
        name,
        remote: join(w.inbox, "processing", claimed),
        archived: false,
        report: "pending",
      });
    }
    const [pull] = await pullRemoteSources(w.deps, undefined, { take: false });
    expect(pull?.error).toBeUndefined();
    expect(pull?.left?.map((r) => r.shown)).toEqual([named(214)]);
    const uploaded = await readdir(join(w.inbox, "reports"));
    expect(uploaded.filter((n) => n.startsWith(`${named(9)}.`))).toHaveLength(2);
    expect(uploaded.filter((n) => n.startsWith("."))).toEqual([]);
    expect(await readdir(join(w.inbox, "archive"))).toHaveLength(2);
  });
});
