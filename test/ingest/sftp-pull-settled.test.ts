import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder } from "../../src/ingest/drop-folder.js";
import { openSftpSession, type OpenSession } from "../../src/ingest/sftp/session.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RemoteClaims } from "../../src/ledger/remote-claims.js";
import { silentLogger } from "../../src/log/logger.js";
import { pullSettled } from "../../src/use-cases/remote-pull.js";
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

const SETTLE_MS = 400;

describe("pullSettled, when another pass holds the source between its polls", () => {
  it("when the first poll finds a file not settled and the later polls find the source held by another pass, then the file is still named with its reason", async () => {
    const inbox = join(server.root, "held");
    await mkdir(inbox);
    await writeFile(join(inbox, "gone.csv"), "external_id,currency,destination_country,archive_policy\n");
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const folder = dropFolder(drop.dir);
    await ensureDropFolder(folder);
    const prefix = testPrefix();
    const source = acmeSource(server, inbox, await server.hostFingerprint());
    // First seen now (so not settled), and gone when asked for; once the first poll's session closes, another pass takes the
    // source (its lease) for the rest of this pass.
    let sessions = 0;
    const held: { release?: () => Promise<unknown> } = {};
    const openSession: OpenSession = async (s, signal) => {
      const inner = await openSftpSession(s, signal);
      const first = sessions++ === 0;
      return {
        ...inner,
        stat: async (path) => (path.endsWith("gone.csv") ? undefined : inner.stat(path)),
        close: async () => {
          await inner.close();
          if (first)
            setTimeout(() => {
              void new RemoteClaims(redis, prefix, "acme").lease().then((lease) => {
                if (lease !== undefined) held.release = () => lease.release();
              });
            }, SETTLE_MS / 4);
        },
      };
    };

    const pulls = await pullSettled({
      folder,
      batches: new BatchStore(redis, prefix),
      logger: silentLogger(),
      redis,
      prefix,
      openSession,
      sources: [source],
      settleMs: SETTLE_MS,
      attempts: 1,
      backoffMs: 10,
    });
    await held.release?.();

    expect(held.release).toBeDefined();
    expect(pulls[0]?.left?.map((f) => `${f.shown}: ${f.why}`)).toEqual([
      expect.stringMatching(/^gone\.csv: left on the server: it/),
    ]);
  });
});
