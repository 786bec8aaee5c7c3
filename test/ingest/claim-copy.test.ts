import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claimGiven } from "../../src/ingest/claim-copy.js";
import { dropFolder, ensureDropFolder } from "../../src/ingest/drop-folder.js";
import { admitName, isRefused } from "../../src/names/file-name.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { tempDropDir } from "../support/drop.js";
import { mountSmallFileSystem } from "../support/small-file-system.js";

const cleanups = cleanupsAfterEach();

describe("ingest FILE copying a file into processing/", () => {
  it("when processing/'s file system fills up during the copy, then the claim fails naming the file, processing/ and the fix, keeps nothing there, and leaves the file in place", async () => {
    const drop = await tempDropDir();
    const elsewhere = await tempDropDir();
    cleanups.push(drop.cleanup, elsewhere.cleanup);
    const folder = dropFolder(drop.dir);
    await ensureDropFolder(folder);
    cleanups.push(await mountSmallFileSystem(folder.processing, 64 * 1024));
    const source = join(elsewhere.dir, "night.csv");
    const content = `external_id,currency,destination_country,archive_policy\n${"N-1,EUR,DE,eu-10y\n".repeat(8000)}`;
    await writeFile(source, content);
    const name = admitName("night.csv");
    if (isRefused(name)) throw new Error(name.why);

    const failure = await claimGiven(folder, source, name, { forceCopy: true }).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(failure).toMatchObject({ code: "TAKE_WRITE_REFUSED", errno: "ENOSPC" });
    expect(String(failure)).toContain(
      `${source} could not be written into ${folder.processing}: ENOSPC, the file system is full; free space on it. ` +
        "Nothing of it is kept there; it is still in place: ingest it again then",
    );
    expect(await readdir(folder.processing)).toEqual([]);
    expect(await readFile(source, "utf8")).toBe(content);
  });
});
