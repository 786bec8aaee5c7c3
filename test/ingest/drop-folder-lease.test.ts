import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder } from "../../src/ingest/drop-folder.js";
import { DropFolderLease, LEASE_STALE_MS, leasePath } from "../../src/ingest/drop-folder-lease.js";
import { DropFolderLeasedError } from "../../src/ingest/errors/drop-folder-leased-error.js";
import { silentLogger } from "../../src/log/logger.js";
import { tempDropDir } from "../support/drop.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();
const A = "QUEUE_PREFIX=acme on Redis redis://10.0.0.1:6379";
const B = "QUEUE_PREFIX=beta on Redis redis://10.0.0.1:6379";

async function folder() {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const made = dropFolder(drop.dir);
  await ensureDropFolder(made);
  return made;
}

async function take(f: ReturnType<typeof dropFolder>, deployment: string, now?: () => number) {
  const lease = await DropFolderLease.take(f, deployment, {
    logger: silentLogger(),
    ...(now ? { now } : {}),
  });
  cleanups.push(() => lease.release());
  return lease;
}

describe("the drop folder's lease", () => {
  it("when a second deployment starts on a folder another holds, then it is refused with both names, and a process of the same deployment is not", async () => {
    const f = await folder();
    await take(f, A);
    await expect(take(f, A)).resolves.toBeInstanceOf(DropFolderLease);
    const refused = await take(f, B).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DropFolderLeasedError);
    expect((refused as Error).message).toContain(
      `served by another deployment (${A}, process ${process.pid}`,
    );
    expect((refused as Error).message).toContain(`this one is ${B}`);
    expect((refused as Error).message).toContain(leasePath(f));
  });

  it("when the lease was not renewed for longer than it stays fresh (its holder died), then another deployment takes it over", async () => {
    const f = await folder();
    const start = Date.now();
    await take(f, A, () => start);
    await expect(take(f, B, () => start + LEASE_STALE_MS - 1000)).rejects.toBeInstanceOf(
      DropFolderLeasedError,
    );
    await take(f, B, () => start + LEASE_STALE_MS + 1000);
    expect(JSON.parse(await readFile(leasePath(f), "utf8"))).toMatchObject({ deployment: B });
  });

  it("when the holder releases it, or the lease file is cut short, then another deployment takes it at once", async () => {
    const f = await folder();
    const a = await DropFolderLease.take(f, A, { logger: silentLogger() });
    await a.release();
    await take(f, B);
    await writeFile(leasePath(f), '{"deployment":');
    await take(f, A);
    expect(JSON.parse(await readFile(leasePath(f), "utf8"))).toMatchObject({ deployment: A });
  });
});
