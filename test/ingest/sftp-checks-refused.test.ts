import { appendFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder, newBatchId, parseClaimedName } from "../../src/ingest/drop-folder.js";
import { RemoteFileRefusedError } from "../../src/ingest/sftp/errors/remote-file-refused-error.js";
import { openSftpSession, type RemoteSession } from "../../src/ingest/sftp/session.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { RemoteClaims } from "../../src/ledger/remote-claims.js";
import { silentLogger } from "../../src/log/logger.js";
import { pullRemoteSources, type RemotePullDeps } from "../../src/use-cases/remote-pull.js";
import { tempDropDir } from "../support/drop.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { startSftpServer, type SftpServer } from "../support/sftp-server.js";
import { acmeSource } from "../support/remote-source.js";

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

const HEADER = "external_id,currency,destination_country,archive_policy\n";
const rows = (prefix: string, n: number): string =>
  HEADER + Array.from({ length: n }, (_, i) => `${prefix}-${i + 1},EUR,DE,eu-10y\n`).join("");

/** A session whose server refuses `op` on every path ending with `match` (as a permission denied would). */
function refusing(inner: RemoteSession, op: "standing" | "stat" | "download", match: string): RemoteSession {
  const refuse = (path: string) => {
    if (path.endsWith(match)) throw new RemoteFileRefusedError("read", path, "Permission denied");
  };
  if (op === "standing")
    return { ...inner, standing: async (path, claimed) => (refuse(path), inner.standing(path, claimed)) };
  if (op === "stat") return { ...inner, stat: async (path) => (refuse(path), inner.stat(path)) };
  return {
    ...inner,
    download: async (remote, local, size) => (refuse(remote), inner.download(remote, local, size)),
  };
}

async function world(name: string) {
  const inbox = join(server.root, name);
  await mkdir(inbox);
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const folder = dropFolder(drop.dir);
  await ensureDropFolder(folder);
  const prefix = testPrefix();
  const source = acmeSource(server, inbox, await server.hostFingerprint());
  const batches = new BatchStore(redis, prefix);
  const deps = (openSession: RemotePullDeps["openSession"] = openSftpSession): RemotePullDeps => ({
    folder,
    batches,
    logger: silentLogger(),
    redis,
    prefix,
    openSession,
    sources: [source],
    settleMs: 0,
    attempts: 1,
    backoffMs: 10,
  });
  const local = async () =>
    (await readdir(folder.processing)).flatMap((f) => {
      const parsed = parseClaimedName(f);
      return parsed === undefined ? [] : [{ batch: parsed.batchId, name: parsed.name, file: f }];
    });
  const reportAll = async () => {
    for (const { batch, name } of await local()) {
      if ((await batches.get(batch)) === undefined)
        await batches.open({ id: batch, file: name, format: "csv", path: "/x", host: "h" });
      await batches.update(batch, { state: "reported" });
    }
  };
  return {
    inbox,
    folder,
    deps,
    local,
    reportAll,
    prefix,
    claims: new RemoteClaims(redis, prefix, "acme"),
    remote: async (dir: string) => (await readdir(join(inbox, dir)).catch(() => [])).sort(),
  };
}

describe("a check of the server's copy refused for one file", () => {
  it("when the server refuses to read a file again once it is in its processing/, then that file is named and kept claimed, the others are taken, and the next pass takes it", async () => {
    const w = await world("reread-refused");
    await writeFile(join(w.inbox, "a.csv"), rows("A", 3));
    await writeFile(join(w.inbox, "b.csv"), rows("B", 3));
    await pullRemoteSources(w.deps()); // first sighting
    const [pull] = await pullRemoteSources(
      w.deps(async (s) => refusing(await openSftpSession(s), "standing", "--a.csv")),
    );
    expect(pull?.error).toBeUndefined();
    expect(pull?.left?.map((l) => l.shown)).toEqual(["a.csv"]);
    expect((await w.local()).map((f) => f.name)).toEqual(["b.csv"]);
    // Moved to the server's processing/ before the refusal: the claim stays, so the file is not forgotten there.
    expect([...(await w.claims.claims()).values()].map((c) => [c.name, c.step])).toEqual([
      ["a.csv", "downloading"],
    ]);
    expect((await readdir(w.folder.processing)).filter((n) => n.startsWith("."))).toEqual([]);
    const [next] = await pullRemoteSources(w.deps());
    expect(next?.left ?? []).toEqual([]);
    expect((await w.local()).map((f) => f.name).sort()).toEqual(["a.csv", "b.csv"]);
    expect(await w.claims.claims()).toEqual(new Map());
    const a = (await w.local()).find((f) => f.name === "a.csv");
    expect(await readFile(join(w.folder.processing, a?.file ?? ""), "utf8")).toBe(rows("A", 3));
  });

  it("when the server refuses to look at one reported batch's copy before its archive, then that batch is named and the others are archived", async () => {
    const w = await world("archive-refused");
    await writeFile(join(w.inbox, "a.csv"), rows("A", 3));
    await writeFile(join(w.inbox, "b.csv"), rows("B", 3));
    await pullRemoteSources(w.deps());
    await pullRemoteSources(w.deps());
    await w.reportAll();
    const [pull] = await pullRemoteSources(
      w.deps(async (s) => refusing(await openSftpSession(s), "stat", "--a.csv")),
      undefined,
      { take: false },
    );
    expect(pull?.error).toBeUndefined();
    expect(pull?.left?.map((l) => [l.shown, /could not be archived/.test(l.why)])).toEqual([["a.csv", true]]);
    expect((await w.remote("archive")).map((n) => parseClaimedName(n)?.name)).toEqual(["b.csv"]);
    await pullRemoteSources(w.deps(), undefined, { take: false });
    expect((await w.remote("archive")).map((n) => parseClaimedName(n)?.name).sort()).toEqual([
      "a.csv",
      "b.csv",
    ]);
  });

  it("when the server refuses the copy being taken again, then it is named and kept, not waited for as settling, and taken at a later pass", async () => {
    const w = await world("retake-refused");
    await writeFile(join(w.inbox, "grow.csv"), rows("G", 5));
    await pullRemoteSources(w.deps());
    await pullRemoteSources(w.deps());
    const [copy] = await w.remote("processing");
    await appendFile(join(w.inbox, "processing", copy ?? ""), rows("G", 10).slice(rows("G", 5).length));
    await w.reportAll();
    await pullRemoteSources(w.deps(), undefined, { take: false }); // found grown: a claim takes it again
    const [again] = [...(await w.claims.claims()).values()];
    expect(again?.againOf).toBe(parseClaimedName(copy ?? "")?.batchId);
    const [pull] = await pullRemoteSources(
      w.deps(async (s) => refusing(await openSftpSession(s), "download", copy ?? "")),
      undefined,
      { take: false },
    );
    expect(pull?.error).toBeUndefined();
    expect(pull?.left?.map((l) => l.shown)).toEqual(["grow.csv"]);
    expect(pull?.again).toEqual([]);
    expect([...(await w.claims.claims()).values()].map((c) => c.batch)).toEqual([again?.batch]);
    await pullRemoteSources(w.deps(), undefined, { take: false });
    const taken = (await w.local()).find((f) => f.batch === again?.batch);
    expect(await readFile(join(w.folder.processing, taken?.file ?? ""), "utf8")).toBe(rows("G", 10));
  });
});

describe("claims read back from Redis", () => {
  it("when a claim to take a copy again was kept under its server path by an earlier version, then it is read as that batch's copy and kept under its own field", async () => {
    const prefix = testPrefix();
    const claims = new RemoteClaims(redis, prefix, "acme");
    const earlier = newBatchId();
    const path = `/srv/in/processing/${earlier}--grow.csv`;
    const claim = { batch: newBatchId(), name: "grow.csv", size: 9, mtimeMs: 0, step: "downloading" };
    const key = new LedgerNames(prefix).remoteClaims("acme");
    await redis.hset(key, path, JSON.stringify({ ...claim, from: path, settlingSince: 1 }));
    await redis.hset(key, "/elsewhere", JSON.stringify({ ...claim, from: "/etc/passwd" }));
    expect(await claims.dropUnreadableClaims()).toEqual(["/elsewhere"]);
    expect(await claims.claims()).toEqual(
      new Map([[`again/${earlier}`, { ...claim, againOf: earlier, settlingSince: 1 }]]),
    );
  });
});
