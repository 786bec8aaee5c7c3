import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claim, dropFolder, ensureDropFolder, moveClaimed } from "../../src/ingest/drop-folder.js";
import { FileSystemUnansweredError } from "../../src/errors/file-system-unanswered-error.js";
import { fileName, type FileName } from "../../src/names/file-name.js";
import { releasePipe } from "../support/named-pipe.js";

// A file system that stops answering: every thread Node gives the file system is held by an open of a
// named pipe no one writes to (as calls to a hung share pile up), so a claim's or an archive's rename
// waits behind them for ever. Each is on the pass's signal: it ends with it, naming the file.

/** libuv's file-system threads (UV_THREADPOOL_SIZE, 4 unless set): all of them are held. */
const THREADS = Number(process.env["UV_THREADPOOL_SIZE"] ?? "4");
/** The pass's signal ends this soon: the rename behind the held threads never returns before. */
const DEADLINE_MS = 300;

const pipes: string[] = [];
afterEach(() => {
  for (const pipe of pipes.splice(0)) releasePipe(pipe);
});

/** Holds every file-system thread until afterEach lets go (the opens then return and are closed). */
function holdThreads(dir: string): void {
  for (let i = 0; i < THREADS; i++) {
    const pipe = join(dir, `held-${i}`);
    execFileSync("mkfifo", [pipe]);
    pipes.push(pipe);
    void open(pipe, "r").then((handle) => handle.close());
  }
}

function name(raw: string): FileName {
  const named = fileName(raw);
  if (named === undefined) throw new Error(`not a file name: ${raw}`);
  return named;
}

describe("a rename the file system does not answer", () => {
  it("when a claim's rename never returns, then it ends with the pass's signal, naming the file", async () => {
    const root = mkdtempSync(join(tmpdir(), "invoice-relay-rename-"));
    const folder = dropFolder(root);
    await ensureDropFolder(folder);
    writeFileSync(join(root, "night.csv"), "external_id\n");
    holdThreads(root);

    const claimed = claim(folder, name("night.csv"), undefined, AbortSignal.timeout(DEADLINE_MS));

    await expect(claimed).rejects.toBeInstanceOf(FileSystemUnansweredError);
    await expect(claimed).rejects.toThrow(/night\.csv, renamed to be claimed was still under way at/);
    for (const pipe of pipes.splice(0)) releasePipe(pipe);
    rmSync(root, { recursive: true, force: true });
  });

  it("when an archive's rename never returns, then it ends with the pass's signal, naming the file", async () => {
    const root = mkdtempSync(join(tmpdir(), "invoice-relay-rename-"));
    const folder = dropFolder(root);
    await ensureDropFolder(folder);
    const path = join(folder.processing, "20261207T180000Z-abcdef--night.csv");
    writeFileSync(path, "external_id\n");
    holdThreads(root);
    const file = { batchId: "20261207T180000Z-abcdef", name: name("night.csv"), path };

    const moved = moveClaimed(folder, file, "archive", AbortSignal.timeout(DEADLINE_MS));

    await expect(moved).rejects.toThrow(/night\.csv, moved to archive\/ was still under way at/);
    for (const pipe of pipes.splice(0)) releasePipe(pipe);
    rmSync(root, { recursive: true, force: true });
  });
});
