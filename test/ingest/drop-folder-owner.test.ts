import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { dropFolder, ensureDropFolder } from "../../src/ingest/drop-folder.js";
import { ownerRecordPath, takeDropFolder } from "../../src/ingest/drop-folder-owner.js";
import { DropFolderOwnedError } from "../../src/ingest/errors/drop-folder-owned-error.js";
import { DropFolderUnusableError } from "../../src/ingest/errors/drop-folder-unusable-error.js";
import { mountSmallFileSystem } from "../support/small-file-system.js";
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

async function refusal(f: ReturnType<typeof dropFolder>, deployment: string): Promise<Error> {
  const refused = await takeDropFolder(f, deployment).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refused).toBeInstanceOf(DropFolderOwnedError);
  return refused as Error;
}

describe("the drop folder's deployment", () => {
  it("when a second deployment takes a folder another took, then it is refused with both names, the last server, the record and the way to hand over; a process of the same deployment is not", async () => {
    const f = await folder();
    await takeDropFolder(f, A);
    await takeDropFolder(f, A);
    const { message } = await refusal(f, B);
    expect(message).toContain(
      `belongs to another deployment (${A}, last served by process ${process.pid} on ${hostname()} at `,
    );
    expect(message).toContain(`this one is ${B}`);
    expect(message).toContain(`a drop folder of its own (DROP_DIR)`);
    expect(message).toContain(
      `if the other one is retired for good, hand the folder over to this one by removing ${ownerRecordPath(f)}`,
    );
  });

  it("when the first deployment's processes have all ended, then the folder is still its own, until its record is removed", async () => {
    const f = await folder();
    await takeDropFolder(f, A);
    // Nothing runs: no process renews anything, and no time makes the record lapse.
    await refusal(f, B);
    await rm(ownerRecordPath(f));
    await takeDropFolder(f, B);
    expect(JSON.parse(await readFile(ownerRecordPath(f), "utf8"))).toMatchObject({
      deployment: B,
      pid: process.pid,
    });
    await refusal(f, A);
  });

  it("when the record is cut short or is not a deployment record, then every deployment is refused naming it, until it is removed", async () => {
    const f = await folder();
    for (const [text, said] of [
      ['{"deployment":', "cut short or not JSON"],
      ['{"owner":"someone"}', "not a deployment record"],
    ] as const) {
      await writeFile(ownerRecordPath(f), text);
      for (const deployment of [A, B]) {
        const { message } = await refusal(f, deployment);
        expect(message).toContain(`cannot be read (${ownerRecordPath(f)}: ${said})`);
        expect(message).toContain(`this one is ${deployment}`);
      }
    }
    await rm(ownerRecordPath(f));
    await takeDropFolder(f, A);
  });

  it("when two deployments take a new folder at once, then one has it and the other is refused", async () => {
    const f = await folder();
    const outcomes = await Promise.allSettled([takeDropFolder(f, A), takeDropFolder(f, B)]);
    const { deployment } = JSON.parse(await readFile(ownerRecordPath(f), "utf8")) as { deployment: string };
    const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(DropFolderOwnedError);
    expect(outcomes[deployment === A ? 0 : 1]?.status).toBe("fulfilled");
  });

  it("when the folder's file system is full, then the record is not written, the folder is named unusable with the fix, and no temporary file is left", async () => {
    const f = await folder();
    const unmount = await mountSmallFileSystem(f.reports, 4096);
    cleanups.push(unmount);
    await writeFile(join(f.reports, "filler"), Buffer.alloc(4096)).catch(() => undefined);

    const refused = await takeDropFolder(f, A).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(refused).toBeInstanceOf(DropFolderUnusableError);
    expect((refused as Error).message).toBe(
      `the drop folder ${f.root} cannot hold its deployment record ${ownerRecordPath(f)}: ENOSPC, the ` +
        "file system is full; free space on it; then run again",
    );
    expect((await readdir(f.reports)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});
