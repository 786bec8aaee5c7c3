// npm run bench:sftp — one 100,000-row CSV pulled from a private sshd over loopback (downloaded, moved on the
// server and read there again) and ingested (claimed, checked, keyed, registered in the ledger and
// enqueued), beside the same file from the local drop folder.
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "../src/dev/redis-server.js";
import { startSftpServer } from "../src/dev/sftp-server.js";
import { dropFolder, ensureDropFolder, type DropFolder } from "../src/ingest/drop-folder.js";
import type { RemoteSource } from "../src/ingest/sftp/remote-source.js";
import { openSftpSession } from "../src/ingest/sftp/session.js";
import { resolveNamespace } from "../src/invoice/key.js";
import { BatchStore } from "../src/ledger/batch-store.js";
import { RedisLedger } from "../src/ledger/redis-ledger.js";
import { silentLogger } from "../src/log/logger.js";
import { createRedis } from "../src/queue/connection.js";
import { createInvoiceQueue } from "../src/queue/invoice-queue.js";
import { dropPass } from "../src/use-cases/drop-pass.js";
import type { PulledFile } from "../src/use-cases/ingest-claimed.js";
import { pullRemoteSources } from "../src/use-cases/remote-pull.js";
import { hostSpeed } from "./support.js";
import { writeCsv } from "./generate.js";

const ROWS = Number(process.env["BENCH_SFTP_ROWS"] ?? 100_000);
const PAIRS = Number(process.env["BENCH_SFTP_PAIRS"] ?? 3);

console.log(`single-core speed ${Math.round(hostSpeed())}k JSON round trips/s (it varies by the hour)`);
const dir = await mkdtemp(join(tmpdir(), "invoice-relay-bench-sftp-"));
const redisServer = process.env["REDIS_URL"] === undefined ? await RedisServer.start() : undefined;
const redisUrl = process.env["REDIS_URL"] ?? redisServer?.url ?? "";
const sshd = await startSftpServer();
const redis = createRedis(redisUrl, "producer");
try {
  const csv = join(dir, "bench.csv");
  await writeCsv(csv, ROWS);
  const mb = (await stat(csv)).size / 1e6;
  console.log(`generated ${ROWS} CSV rows (${mb.toFixed(1)} MB)`);

  const deps = async (name: string, folder: DropFolder) => {
    await ensureDropFolder(folder);
    const prefix = `bench-sftp-${name}-${randomUUID()}`;
    return {
      prefix,
      folder,
      redis,
      ledger: new RedisLedger(redis, prefix),
      batches: new BatchStore(redis, prefix),
      queue: createInvoiceQueue(redis, prefix, 10),
      namespace: resolveNamespace(),
      logger: silentLogger(),
    };
  };
  const ingest = async (d: Awaited<ReturnType<typeof deps>>, pulled?: ReadonlyMap<string, PulledFile>) => {
    const passed = await dropPass({ ...d, pulled }, 0);
    const result = passed[0]?.result;
    if (passed.length !== 1 || result?.kind !== "ingested" || result.enqueued !== ROWS)
      throw new Error(`expected one file of ${ROWS} rows enqueued: ${JSON.stringify(passed)}`);
    await d.queue.close();
  };

  const ratios: number[] = [];
  for (let pair = 1; pair <= PAIRS; pair++) {
    // The local drop folder: the file is there, settled; claim and ingest.
    const local = await deps("local", dropFolder(join(dir, `local-${pair}`)));
    await copyFile(csv, join(local.folder.root, "bench.csv"));
    let started = performance.now();
    await ingest(local);
    const localSeconds = (performance.now() - started) / 1000;

    // The SFTP source: a first poll sees the file (settling needs two); timed from the second poll,
    // which downloads, fsyncs, renames and moves it on the server, to the end of the ingest.
    const inbox = join(sshd.root, `outgoing-${pair}`);
    await mkdir(inbox);
    await copyFile(csv, join(inbox, "bench.csv"));
    const remote = await deps("sftp", dropFolder(join(dir, `sftp-${pair}`)));
    const source: RemoteSource = {
      name: "bench",
      host: "127.0.0.1",
      port: sshd.port,
      user: sshd.user,
      path: inbox,
      auth: { kind: "key", keyFile: sshd.clientKeyFile },
      hostKey: { kind: "fingerprint", fingerprint: await sshd.hostFingerprint() },
      match: [],
      afterClaim: "move",
      reports: false,
    };
    let downloadSeconds = 0;
    let rereadSeconds = 0;
    const pull = { ...remote, openSession: timedSession, sources: [source], settleMs: 0, attempts: 1 };
    async function timedSession(s: RemoteSource) {
      const session = await openSftpSession(s);
      return {
        ...session,
        download: async (from: string, to: string, size: number) => {
          const t = performance.now();
          await session.download(from, to, size);
          downloadSeconds += (performance.now() - t) / 1000;
        },
        standing: async (...args: Parameters<typeof session.standing>) => {
          const t = performance.now();
          const standing = await session.standing(...args);
          rereadSeconds += (performance.now() - t) / 1000;
          return standing;
        },
      };
    }
    await pullRemoteSources(pull);
    started = performance.now();
    const [pulled] = await pullRemoteSources(pull);
    if (pulled?.taken !== 1)
      throw new Error(`the pull took ${pulled?.taken ?? 0} files: ${String(pulled?.error)}`);
    const pullSeconds = (performance.now() - started) / 1000;
    await ingest(remote, pulled.unopened);
    const sftpSeconds = (performance.now() - started) / 1000;
    const ratio = localSeconds / sftpSeconds;
    ratios.push(ratio);
    console.log(
      `pair ${pair}: local drop folder ${localSeconds.toFixed(2)} s (${Math.round(ROWS / localSeconds)} rows/s); ` +
        `SFTP pull and ingest ${sftpSeconds.toFixed(2)} s (${Math.round(ROWS / sftpSeconds)} rows/s; the pull ` +
        `${pullSeconds.toFixed(2)} s, its download ${downloadSeconds.toFixed(2)} s = ` +
        `${(mb / downloadSeconds).toFixed(1)} MB/s, its second read on the server ${rereadSeconds.toFixed(2)} s); ` +
        `SFTP / local throughput ${ratio.toFixed(2)}×`,
    );
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  console.log(
    `SFTP pull and ingest / local drop folder, throughput: median ${median.toFixed(2)}× over ${PAIRS} pairs ` +
      `(${sorted.map((r) => r.toFixed(2)).join(", ")}); target ≥ 0.5× — ${median >= 0.5 ? "met" : "NOT met"}`,
  );
} finally {
  redis.disconnect();
  await sshd.close();
  await redisServer?.stop();
  await rm(dir, { recursive: true, force: true });
}
