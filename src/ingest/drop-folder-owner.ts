import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { z } from "zod";
import type { DropFolder } from "./drop-folder.js";
import { fileSystemCode, fileSystemFix } from "../errors/file-system-fixes.js";
import { DropFolderOwnedError, type FolderOwner } from "./errors/drop-folder-owned-error.js";
import { DropFolderUnusableError } from "./errors/drop-folder-unusable-error.js";

/**
 * The drop folder's deployment record, in the relay's own subfolder reports/: a dot-name, no report's.
 * Not in processing/, whose every file is a claimed one or a copy on its way there.
 */
export function ownerRecordPath(folder: DropFolder): string {
  return join(folder.reports, ".deployment.json");
}

const ownerRecord = z.object({
  deployment: z.string(),
  host: z.string(),
  pid: z.number().int(),
  served_at: z.string(),
});
type OwnerRecord = z.infer<typeof ownerRecord>;

/**
 * One deployment per drop folder, for good: the first deployment (its QUEUE_PREFIX and Redis) to take
 * the folder is named in its record, and every other one is refused from then on, whether the first
 * runs or not: the ledger of the files taken is the first one's, so another would take a file dropped
 * again, or one left, as new and send it twice. Processes of the same deployment share the folder
 * (claims are atomic renames), each noted as the last to serve it. The folder is handed over only by
 * removing the record (docs/reliability.md). Throws DropFolderOwnedError naming both deployments.
 */
export async function takeDropFolder(folder: DropFolder, deployment: string): Promise<void> {
  const path = ownerRecordPath(folder);
  const held = await readOwner(path);
  if (held !== undefined && ("unreadable" in held || held.deployment !== deployment))
    throw new DropFolderOwnedError(
      folder.root,
      deployment,
      path,
      "unreadable" in held ? held : lastServed(held),
    );
  const record: OwnerRecord = {
    deployment,
    host: hostname(),
    pid: process.pid,
    served_at: new Date().toISOString(),
  };
  const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temp, JSON.stringify(record));
    // The first take: link fails when another process made the record meanwhile, which is then judged.
    // A record already this deployment's is replaced whole, never cut short.
    if (held === undefined) await link(temp, path);
    else await rename(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw unwritable(folder, path, error);
    await takeDropFolder(folder, deployment);
  } finally {
    await rm(temp, { force: true });
  }
}

/** The record could not be written (a full disk, a read-only mount): the folder cannot be used. */
function unwritable(folder: DropFolder, path: string, error: unknown): DropFolderUnusableError {
  const errno = fileSystemCode(error);
  const why = errno === undefined ? (error as Error).message : fileSystemFix(errno);
  return new DropFolderUnusableError(
    folder.root,
    `cannot hold its deployment record ${path}`,
    `${why}; then run again`,
    { cause: error },
  );
}

function lastServed(held: OwnerRecord): FolderOwner {
  return {
    deployment: held.deployment,
    lastServed: `last served by process ${held.pid} on ${held.host} at ${held.served_at}`,
  };
}

/** The record as written, undefined when there is none, or why it cannot be read (never a way in). */
async function readOwner(path: string): Promise<OwnerRecord | { unreadable: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    return { unreadable: code ?? String(error) };
  }
  try {
    const parsed = ownerRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : { unreadable: "not a deployment record" };
  } catch {
    return { unreadable: "cut short or not JSON" };
  }
}
