import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder } from "../../src/ingest/drop-folder.js";
import { openSftpSession } from "../../src/ingest/sftp/session.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { silentLogger } from "../../src/log/logger.js";
import { pullSettled } from "../../src/use-cases/remote-pull.js";
import { tempDropDir } from "../support/drop.js";
import { startHostileSftpServer, type HostileSftpServer } from "../support/hostile-sftp-server.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { acmeSource } from "../support/remote-source.js";

// pullSettled (one pass of `run`, one scan of `start`) against a server on ssh2's server side that
// lists a file with no attributes at all (SFTP v3 allows it), and a file whose done-marker never comes.

const redis = testRedis();
let server: HostileSftpServer;
const cleanups: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startHostileSftpServer();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server.close();
  redis.disconnect();
});

/** Short: the pass polls twice more, SETTLE_MS apart, before it names what is still not takeable. */
const SETTLE_MS = 200;
const HEADER = "external_id,currency,destination_country,archive_policy\n";

describe("SFTP files a pass sees and cannot take", () => {
  it("when a file waits for a done-marker that never comes, and another is listed without attributes, then after the bounded wait each is named with its reason, and the marked file is taken", async () => {
    server.list("unmarked.csv", `${HEADER}UNMARKED-1,EUR,DE,eu-10y\n`);
    server.list("bare.csv", `${HEADER}BARE-1,EUR,DE,eu-10y\n`, undefined, { noAttributes: true });
    server.list("marked.csv", `${HEADER}MARKED-1,EUR,DE,eu-10y\n`);
    server.list("marked.csv.done", "");
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const folder = dropFolder(drop.dir);
    await ensureDropFolder(folder);
    const prefix = testPrefix();
    const source = acmeSource(server, server.inbox, server.fingerprint, { doneMarker: ".done" });

    const pulls = await pullSettled({
      folder,
      batches: new BatchStore(redis, prefix),
      logger: silentLogger(),
      redis,
      prefix,
      openSession: openSftpSession,
      sources: [source],
      settleMs: SETTLE_MS,
      attempts: 1,
      backoffMs: 10,
    });

    const left = (pulls[0]?.left ?? []).map((f) => `${f.shown}: ${f.why}`).sort();
    expect(left).toEqual([
      expect.stringMatching(/^bare\.csv: left on the server: the server lists it without its size/),
      expect.stringMatching(
        /^unmarked\.csv: left on the server: it waits for its done-marker unmarked\.csv\.done/,
      ),
    ]);
    expect(pulls[0]?.taken).toBe(1);
  });
});
