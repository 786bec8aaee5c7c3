import { appendFile, mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder, parseClaimedName } from "../../src/ingest/drop-folder.js";
import type { RemoteSource } from "../../src/ingest/sftp/remote-source.js";
import { openSftpSession, type RemoteSession } from "../../src/ingest/sftp/session.js";
import { resolveNamespace } from "../../src/invoice/key.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { RemoteClaims } from "../../src/ledger/remote-claims.js";
import { createLogger, silentLogger } from "../../src/log/logger.js";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { dropPass } from "../../src/use-cases/drop-pass.js";
import { pullRemoteSources, type RemotePullDeps } from "../../src/use-cases/remote-pull.js";
import { remotePass } from "../../src/use-cases/remote-pass.js";
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
/** A CSV of `n` rows; `country` changes the rows' content without changing their length. */
const rows = (prefix: string, n: number, country = "DE"): string =>
  HEADER + Array.from({ length: n }, (_, i) => `${prefix}-${i + 1},EUR,${country},eu-10y\n`).join("");

class Cut extends Error {}

/** A session whose `op` throws before doing its work the first time it is called on `match`. */
function cutOnce(inner: RemoteSession, op: "rename" | "remove" | "download", match: string): RemoteSession {
  let cut = false;
  const wrapped = async (from: string, to: string, size = 0): Promise<void> => {
    if (!cut && from.endsWith(match)) {
      cut = true;
      throw new Cut(`cut before ${op} of ${from}`);
    }
    await (op === "download" ? inner.download(from, to, size) : inner[op](from, to));
  };
  return { ...inner, [op]: wrapped };
}

/** Rewrites a file in place with other bytes of the same length and gives it back its mtime. */
async function replaceKeepingSizeAndTime(path: string, text: string): Promise<void> {
  const before = await stat(path);
  expect(Buffer.byteLength(text)).toBe(before.size);
  await writeFile(path, text);
  await utimes(path, before.atime, before.mtime);
}

async function world(name: string, overrides: Partial<RemoteSource> = {}) {
  const inbox = join(server.root, name);
  await mkdir(inbox);
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const folder = dropFolder(drop.dir);
  await ensureDropFolder(folder);
  const prefix = testPrefix();
  const source = acmeSource(server, inbox, await server.hostFingerprint(), overrides);
  const batches = new BatchStore(redis, prefix);
  const deps = (
    openSession: RemotePullDeps["openSession"] = openSftpSession,
    more: Partial<RemotePullDeps> = {},
  ): RemotePullDeps => ({
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
    ...more,
  });
  /** The claimed files here: name → batch ids, each with its content. */
  const local = async () => {
    const out: { batch: string; name: string; text: string }[] = [];
    for (const file of (await readdir(folder.processing)).sort()) {
      const parsed = parseClaimedName(file);
      if (parsed !== undefined)
        out.push({
          batch: parsed.batchId,
          name: parsed.name,
          text: await readFile(join(folder.processing, file), "utf8"),
        });
    }
    return out;
  };
  return {
    inbox,
    folder,
    prefix,
    batches,
    deps,
    local,
    claims: new RemoteClaims(redis, prefix, "acme"),
    remoteProcessing: async () => (await readdir(join(inbox, "processing")).catch(() => [])).sort(),
  };
}

type World = Awaited<ReturnType<typeof world>>;

/** Polls until no claim is left (a file taken again settles across polls), at most `rounds` times. */
async function pullUntilDone(w: World, rounds = 4): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const [pull] = await pullRemoteSources(w.deps());
    expect(pull?.error).toBeUndefined();
    if ((await w.claims.claims()).size === 0) return;
  }
}

/** Marks each batch as reported, as the drop pass would once its rows are final. */
async function reportAll(w: World): Promise<void> {
  for (const { batch, name } of await w.local()) {
    if ((await w.batches.get(batch)) === undefined)
      await w.batches.open({ id: batch, file: name, format: "csv", path: "/x", host: "h" });
    await w.batches.update(batch, { state: "reported" });
  }
}

describe("an SFTP file that changes on the server while it is taken", () => {
  it("when it is replaced with the same size and mtime between its download and its move, then the content taken is the content the server keeps", async () => {
    const w = await world("replaced-in-pass");
    const path = join(w.inbox, "x.csv");
    await writeFile(path, rows("OLD", 3));
    await pullRemoteSources(w.deps()); // first sighting
    const replacing: RemotePullDeps["openSession"] = async (s) => {
      const inner = await openSftpSession(s);
      let done = false;
      return {
        ...inner,
        rename: async (from, to) => {
          if (!done && from === path) {
            done = true;
            await replaceKeepingSizeAndTime(path, rows("NEW", 3));
          }
          await inner.rename(from, to);
        },
      };
    };
    await pullRemoteSources(w.deps(replacing));
    await pullUntilDone(w);
    const [taken, ...more] = await w.local();
    expect(more).toEqual([]);
    expect(taken?.text).toBe(rows("NEW", 3));
    const remote = await w.remoteProcessing();
    expect(remote).toHaveLength(1);
    expect(await readFile(join(w.inbox, "processing", remote[0] ?? ""), "utf8")).toBe(rows("NEW", 3));
  });

  it("when the relay is cut before the move and the file is then replaced with the same size and mtime, then the next pass takes the new content", async () => {
    const w = await world("replaced-after-cut");
    const path = join(w.inbox, "x.csv");
    await writeFile(path, rows("OLD", 3));
    await pullRemoteSources(w.deps());
    const [cut] = await pullRemoteSources(
      w.deps(async (s) => cutOnce(await openSftpSession(s), "rename", "x.csv")),
    );
    expect(cut?.error).toBeInstanceOf(Cut);
    await replaceKeepingSizeAndTime(path, rows("NEW", 3));
    await pullUntilDone(w);
    const texts = (await w.local()).map((f) => f.text);
    expect(texts).toContain(rows("NEW", 3));
    for (const name of await w.remoteProcessing()) {
      const batch = parseClaimedName(name)?.batchId;
      const here = (await w.local()).find((f) => f.batch === batch);
      expect(here?.text, name).toBe(await readFile(join(w.inbox, "processing", name), "utf8"));
    }
  });

  it("when after_claim is delete and the file is replaced with the same size and mtime before its removal, then it is not removed unread: the new content is taken too", async () => {
    const w = await world("replaced-delete", { afterClaim: "delete" });
    const path = join(w.inbox, "x.csv");
    await writeFile(path, rows("OLD", 3));
    await pullRemoteSources(w.deps());
    const [cut] = await pullRemoteSources(
      w.deps(async (s) => cutOnce(await openSftpSession(s), "remove", "x.csv")),
    );
    expect(cut?.error).toBeInstanceOf(Cut);
    await replaceKeepingSizeAndTime(path, rows("NEW", 3));
    await pullUntilDone(w);
    await pullUntilDone(w); // the file left on the server settles, and is taken
    expect((await w.local()).map((f) => f.text).sort()).toEqual([rows("NEW", 3), rows("OLD", 3)]);
    expect(await readdir(w.inbox)).toEqual([]);
  });

  it("when rows are appended to the server's copy after it was taken, then it is taken again, whole, as a new batch before it is archived", async () => {
    const w = await world("grown");
    await writeFile(join(w.inbox, "grow.csv"), rows("G", 5));
    await pullRemoteSources(w.deps());
    await pullRemoteSources(w.deps());
    const [first] = await w.local();
    expect(first?.text).toBe(rows("G", 5));
    const [copy] = await w.remoteProcessing();
    // A writer that held the file open goes on writing into the moved file.
    await appendFile(join(w.inbox, "processing", copy ?? ""), rows("G", 10).slice(rows("G", 5).length));
    await reportAll(w);
    await pullRemoteSources(w.deps(), undefined, { take: false }); // the archive step sees it grew
    await pullUntilDone(w);
    const taken = await w.local();
    expect(taken.map((f) => f.text)).toEqual(expect.arrayContaining([rows("G", 5), rows("G", 10)]));
    const again = taken.find((f) => f.text === rows("G", 10));
    expect(again?.batch).not.toBe(first?.batch);
    expect(await w.remoteProcessing()).toEqual([`${again?.batch ?? ""}--grow.csv`]);
    expect(await readdir(join(w.inbox, "archive"))).toEqual([]);
  });
});

describe("what an SFTP pass leaves and says", () => {
  it("when a partial download is left by a kill and the remote file then changes, then the next pass removes the partial file", async () => {
    const w = await world("partial");
    const path = join(w.inbox, "x.csv");
    await writeFile(path, rows("P", 50));
    await pullRemoteSources(w.deps());
    // The download is cut; a SIGKILL at that moment would leave part of the file under its temporary name.
    let partPath = "";
    await pullRemoteSources(
      w.deps(async (s) => {
        const inner = await openSftpSession(s);
        return {
          ...inner,
          download: (_remote, localPath) => {
            partPath = localPath;
            return Promise.reject(new Cut("killed"));
          },
        };
      }),
    );
    expect([...(await w.claims.claims()).values()].map((c) => c.step)).toEqual(["downloading"]);
    await writeFile(partPath, rows("P", 50).slice(0, 40));
    await appendFile(path, "P-51,EUR,DE,eu-10y\n");
    await pullRemoteSources(w.deps());
    expect((await readdir(w.folder.processing)).filter((n) => n.startsWith("."))).toEqual([]);
  });

  it("when the same bytes come again under another name, then they are a batch of their own, not archived unseen", async () => {
    const w = await world("resent");
    await writeFile(join(w.inbox, "monday.csv"), rows("M", 3));
    await pullUntilDone(w);
    await pullUntilDone(w);
    await writeFile(join(w.inbox, "monday-resend.csv"), rows("M", 3));
    await pullUntilDone(w);
    await pullUntilDone(w);
    expect((await w.local()).map((f) => f.name).sort()).toEqual(["monday-resend.csv", "monday.csv"]);
  });

  it("when RESULTS_RETENTION has passed since a content was taken, then the source's record of it is removed", async () => {
    const w = await world("retention");
    let now = Date.UTC(2026, 10, 20);
    const deps = w.deps(openSftpSession, { retentionMs: 60_000, now: () => now });
    await writeFile(join(w.inbox, "a.csv"), rows("R", 2));
    await pullRemoteSources(deps);
    await pullRemoteSources(deps);
    const content = new LedgerNames(w.prefix).remoteContent("acme");
    expect(await redis.hlen(content)).toBe(1);
    now += 30_000;
    await pullRemoteSources(deps);
    expect(await redis.hlen(content)).toBe(1);
    now += 31_000;
    await pullRemoteSources(deps);
    expect(await redis.hlen(content)).toBe(0);
  });

  it("when a pass is killed after the pull and before the ingest, then the next pass ingests the file as pulled, with no warning of lost Redis data", async () => {
    const w = await world("unopened");
    await writeFile(join(w.inbox, "a.csv"), rows("U", 2));
    await pullRemoteSources(w.deps());
    await pullRemoteSources(w.deps()); // taken; the pass dies before its drop pass
    const lines: string[] = [];
    const logger = createLogger({
      level: "info",
      format: "json",
      destination: { write: (l) => lines.push(l) },
    });
    const pulled = await remotePass({ ...w.deps(), logger }).take(undefined, false);
    const queue = createInvoiceQueue(redis, w.prefix, 3);
    cleanups.push(() => queue.close());
    const passed = await dropPass(
      {
        folder: w.folder,
        redis,
        ledger: new RedisLedger(redis, w.prefix),
        batches: w.batches,
        queue,
        namespace: resolveNamespace(),
        logger,
        pulled,
      },
      0,
    );
    expect(passed.map((p) => p.result.kind)).toEqual(["ingested"]);
    expect(lines.join("\n")).not.toContain("Redis lost data");
    expect(lines.join("\n")).toContain("pulled from an SFTP source");
  });
});
