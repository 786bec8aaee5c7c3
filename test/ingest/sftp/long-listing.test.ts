import { describe, expect, it } from "vitest";
import { openSftpSession } from "../../../src/ingest/sftp/session.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startHostileSftpServer } from "../../support/hostile-sftp-server.js";
import { acmeSource } from "../../support/remote-source.js";

const cleanups = cleanupsAfterEach();

describe("a folder whose listing takes longer than a request may go unanswered", () => {
  it("when each answer of a slow server comes in time but the whole listing takes longer than the source's timeout, then every name is listed, never taken for a stalled server", async () => {
    const answerMs = 100;
    const unansweredMs = 2000;
    // A hundred names an answer: enough answers that the listing outlasts the timeout by a second.
    const names = ((unansweredMs + 1000) / answerMs) * 100;
    const server = await startHostileSftpServer({ listingAnswerMs: answerMs });
    cleanups.push(() => server.close());
    for (let i = 0; i < names; i++) server.list(`n-${i}.csv`, "x\n");
    const session = await openSftpSession(
      acmeSource(server, server.inbox, server.fingerprint, { unansweredMs }),
    );
    cleanups.push(() => session.close());

    const listing = await session.list(server.inbox);

    expect(listing).toHaveLength(names);
    expect(new Set(listing.map((e) => e.listed)).size).toBe(names);
  });
});
