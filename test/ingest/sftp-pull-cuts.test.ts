import { cp, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder, parseClaimedName } from "../../src/ingest/drop-folder.js";
import type { RemoteSource } from "../../src/ingest/sftp/remote-source.js";
import { openSftpSession, type RemoteSession } from "../../src/ingest/sftp/session.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RemoteClaims } from "../../src/ledger/remote-claims.js";
import { silentLogger } from "../../src/log/logger.js";
import { pullRemoteSources, type RemotePullDeps } from "../../src/use-cases/remote-pull.js";
import { tempDropDir } from "../support/drop.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { startSftpServer, type SftpServer } from "../support/sftp-server.js";
import { acmeSource } from "../support/remote-source.js";

const SAMPLES = join(import.meta.dirname, "../../samples");
const FILES = ["invoices-eu.csv", "invoices-us.ndjson"];
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

class Cut extends Error {}

/** A session that fails at its `at`-th operation, before doing it or after it was done (the answer lost). */
function cutting(
  inner: RemoteSession,
  counter: { n: number },
  at: number,
  when: "before" | "after",
): RemoteSession {
  const wrap =
    <A extends unknown[], R>(op: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const mine = counter.n++;
      if (mine === at && when === "before") throw new Cut(`cut before operation ${at}`);
      const result = await op(...args);
      if (mine === at && when === "after") throw new Cut(`cut after operation ${at}`);
      return result;
    };
  return {
    list: wrap(inner.list),
    stat: wrap(inner.stat),
    download: wrap(inner.download),
    standing: wrap(inner.standing),
    upload: wrap(inner.upload),
    rename: wrap(inner.rename),
    remove: wrap(inner.remove),
    mkdirp: wrap(inner.mkdirp),
    close: inner.close,
  };
}

async function world(name: string, overrides: Partial<RemoteSource> = {}) {
  const inbox = join(server.root, name);
  await mkdir(inbox);
  for (const file of FILES) await cp(join(SAMPLES, file), join(inbox, file));
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const folder = dropFolder(drop.dir);
  await ensureDropFolder(folder);
  const prefix = testPrefix();
  const source = acmeSource(server, inbox, await server.hostFingerprint(), overrides);
  const deps = (openSession: RemotePullDeps["openSession"], attempts = 1): RemotePullDeps => ({
    folder,
    batches: new BatchStore(redis, prefix),
    logger: silentLogger(),
    redis,
    prefix,
    openSession,
    sources: [source],
    settleMs: 0,
    attempts,
    backoffMs: 10,
  });
  return { inbox, folder, prefix, deps, claims: new RemoteClaims(redis, prefix, "acme") };
}

type World = Awaited<ReturnType<typeof world>>;

/** Every remote file taken exactly once, whole, under one batch id here and there; nothing half-done. */
async function expectTakenOnce(w: World): Promise<void> {
  const local = (await readdir(w.folder.processing)).sort();
  expect(
    local.filter((n) => n.startsWith(".")),
    "no partial download left",
  ).toEqual([]);
  const claimed = local.map((n) => parseClaimedName(n));
  expect(claimed.map((c) => c?.name).sort()).toEqual([...FILES].sort());
  const remote = (await readdir(join(w.inbox, "processing"))).sort();
  expect(remote).toEqual(local);
  expect((await readdir(w.inbox)).filter((n) => FILES.includes(n))).toEqual([]);
  for (const name of local)
    expect(await readFile(join(w.folder.processing, name))).toEqual(
      await readFile(join(w.inbox, "processing", name)),
    );
  expect(await w.claims.claims()).toEqual(new Map());
}

const healthy: RemotePullDeps["openSession"] = openSftpSession;

describe("pulling from an SFTP source, cut at any step", () => {
  it("when every operation of a pass in turn fails, before it is done or with its answer lost, then the next passes take each file exactly once", async () => {
    // How many operations one pass that takes both files makes.
    const probe = await world("probe");
    await pullRemoteSources(probe.deps(healthy)); // first sighting
    const counter = { n: 0 };
    await pullRemoteSources(
      probe.deps(async (s) => cutting(await openSftpSession(s), counter, -1, "before")),
    );
    await expectTakenOnce(probe);
    const operations = counter.n;
    expect(operations).toBeGreaterThan(8);

    for (let at = 0; at < operations; at++)
      for (const when of ["before", "after"] as const) {
        const w = await world(`cut-${at}-${when}`);
        await pullRemoteSources(w.deps(healthy));
        const n = { n: 0 };
        const [cut] = await pullRemoteSources(
          w.deps(async (s) => cutting(await openSftpSession(s), n, at, when)),
        );
        expect(cut?.error, `operation ${at} ${when}`).toBeInstanceOf(Cut);
        await pullRemoteSources(w.deps(healthy));
        await pullRemoteSources(w.deps(healthy));
        await expectTakenOnce(w);
      }
  }, 240_000);

  it("when sshd restarts between the download and the move on the server, then the retry moves the file it downloaded and takes nothing twice", async () => {
    const w = await world("restart");
    await pullRemoteSources(w.deps(healthy));
    let restarted = false;
    const restarting: RemotePullDeps["openSession"] = async (s) => {
      const inner = await openSftpSession(s);
      return {
        ...inner,
        rename: async (from, to) => {
          if (!restarted) {
            restarted = true;
            await server.stop();
            await server.start();
          }
          await inner.rename(from, to);
        },
      };
    };
    const [pull] = await pullRemoteSources(w.deps(restarting, 3));
    expect(restarted).toBe(true);
    expect(pull?.error).toBeUndefined();
    await expectTakenOnce(w);
  });

  it("when the connection is cut in the middle of a download, then the retry goes on from the part downloaded, and takes the file whole; no partial file is left or ingested", async () => {
    const w = await world("midway");
    const big =
      "external_id,currency,destination_country,archive_policy\n" + "X-1,EUR,DE,eu-10y\n".repeat(400_000);
    await writeFile(join(w.inbox, "big.csv"), big);
    await pullRemoteSources(w.deps(healthy));
    let cuts = 0;
    // What the retry found already downloaded.
    let resumedFrom: number | undefined;
    const cutMidway: RemotePullDeps["openSession"] = async (s) => {
      const inner = await openSftpSession(s);
      return {
        ...inner,
        download: async (remote, local, size) => {
          if (cuts === 1)
            resumedFrom ??= await stat(local).then(
              (st) => st.size,
              () => 0,
            );
          const download = inner.download(remote, local, size);
          download.catch(() => undefined); // awaited below, after the cut
          if (remote.endsWith("big.csv") && cuts === 0) {
            cuts += 1;
            // once part of it is here, the server goes away (sessions cut), then comes back
            for (;;) {
              const size = await stat(local).then(
                (st) => st.size,
                () => 0,
              );
              if (size > 0) break;
              await new Promise((r) => setTimeout(r, 5));
            }
            await server.stop();
            await server.start();
          }
          await download;
        },
      };
    };
    const [pull] = await pullRemoteSources(w.deps(cutMidway, 3));
    expect(cuts).toBe(1);
    expect(pull?.error).toBeUndefined();
    expect(resumedFrom).toBeGreaterThan(0);
    const local = await readdir(w.folder.processing);
    expect(local.filter((n) => n.startsWith("."))).toEqual([]);
    const bigLocal = local.find((n) => n.endsWith("--big.csv"));
    expect(bigLocal).toBeDefined();
    expect(await readFile(join(w.folder.processing, bigLocal ?? ""), "utf8")).toBe(big);
  });
});

describe("pulling from an SFTP source with a done-marker", () => {
  it("when a file has no marker, then it is left however long it is quiet; once its marker is there, it is taken and the marker removed", async () => {
    const w = await world("marked", { doneMarker: ".done" });
    const [first] = await pullRemoteSources(w.deps(healthy));
    const [second] = await pullRemoteSources(w.deps(healthy));
    expect([first?.taken, second?.taken, second?.waiting, second?.settling]).toEqual([0, 0, 2, 0]);
    await writeFile(join(w.inbox, "invoices-eu.csv.done"), "");
    const [third] = await pullRemoteSources(w.deps(healthy));
    expect(third?.taken).toBe(1);
    expect((await readdir(w.inbox)).sort()).toEqual(["archive", "invoices-us.ndjson", "processing"]);
  });
});
