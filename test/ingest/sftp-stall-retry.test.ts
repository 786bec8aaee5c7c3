import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder } from "../../src/ingest/drop-folder.js";
import { openSftpSession } from "../../src/ingest/sftp/session.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { pullRemoteSources, type RemotePullDeps } from "../../src/use-cases/remote-pull.js";
import { tempDropDir } from "../support/drop.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { startHostileSftpServer, type HostileSftpServer, type Lies } from "../support/hostile-sftp-server.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { acmeSource } from "../support/remote-source.js";

// pullRemoteSources retrying a source whose server stopped answering: what the source's failure names
// when the retry ends at another step than the one the server left unanswered.

const redis = testRedis();
const cleanups = cleanupsAfterEach();

/** Short, so that a stall costs a fraction of a second (timeout_seconds). */
const PATIENCE_MS = 300;
const CONTENT = "external_id,currency,destination_country,archive_policy\nSTALL-1,EUR,DE,eu-10y\n";
const MTIME = Math.floor(Date.now() / 1000) - 60;

/**
 * A source on a server of its own serving stall.csv with `lies`, polled once (the file seen, not yet
 * settled); `onRetry` runs as the pull says it tries the source again.
 */
async function world(
  lies: Lies,
  onRetry: (server: HostileSftpServer) => void,
  attempts: number,
  backoffMs: number,
) {
  const server = await startHostileSftpServer();
  cleanups.push(() => server.close());
  server.list("stall.csv", CONTENT, MTIME, lies);
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const local = dropFolder(drop.dir);
  await ensureDropFolder(local);
  const prefix = testPrefix();
  const source = acmeSource(server, server.inbox, server.fingerprint, { unansweredMs: PATIENCE_MS });
  const logger = pino(
    { level: "error" },
    {
      write: (line: string) => {
        if (line.includes("trying again")) onRetry(server);
      },
    },
  );
  const deps: RemotePullDeps = {
    folder: local,
    batches: new BatchStore(redis, prefix),
    logger,
    redis,
    prefix,
    openSession: openSftpSession,
    sources: [source],
    settleMs: 0,
    attempts,
    backoffMs,
  };
  await pullRemoteSources(deps);
  return { deps, port: server.port };
}

describe("an SFTP source whose server stops answering, retried", () => {
  it("when a download stalls and the retry stalls at another step, then the source's failure names both, the stalled read first", async () => {
    const { deps, port } = await world(
      { stallFrom: 10 },
      (server) => {
        server.list("stall.csv", CONTENT, MTIME, { stallStatMoved: true });
      },
      2,
      10,
    );

    const [pull] = await pullRemoteSources(deps);

    expect(pull?.error?.message).toMatch(
      new RegExp(
        `^SFTP source acme: 127\\.0\\.0\\.1:${port} answered nothing for 0\\.3 s while asked to read ` +
          `/inbox/stall\\.csv; at the retry, 127\\.0\\.0\\.1:${port} answered nothing for 0\\.3 s while ` +
          "asked to stat /inbox/processing/\\S+--stall\\.csv; the connection was closed",
      ),
    );
  });

  it("when the pass ends during the pause after a stalled download, then the source is named for the read the server left unanswered, and no retry is begun", async () => {
    const end = new AbortController();
    const { deps, port } = await world(
      { stallFrom: 10 },
      () => {
        end.abort("deadline");
      },
      3,
      60_000,
    );

    const [pull] = await pullRemoteSources(deps, end.signal);

    expect(pull?.error?.message).toBe(
      `SFTP source acme: 127.0.0.1:${port} answered nothing for 0.3 s while asked to read /inbox/stall.csv; ` +
        "the connection was closed. If it happens again, ask the server's operator whether it is overloaded " +
        "or stuck",
    );
  });
});
