import { lstat, mkdir, readdir, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { BATCH_ID_PATTERN, newBatchId } from "../ledger/batch-id.js";
import { fileName, type FileName } from "../names/file-name.js";
import { formatOf } from "./read-invoice-file.js";
import { onFileSystem } from "./file-system-waits.js";
import { shownName } from "../names/shown-text.js";
import type { ReportEncoding } from "./profiles/source-profile.js";

/** The drop folder and the sub-folders invoice-relay manages inside it. */
export interface DropFolder {
  readonly root: string;
  readonly processing: string;
  readonly archive: string;
  readonly rejected: string;
  readonly reports: string;
  /**
   * DONE_MARKER_SUFFIX: when set, `invoices.csv` is ready only once `invoices.csv<suffix>` exists (written
   * after the file, so no older than it), whatever SETTLE_MS says; the marker is removed on claim.
   */
  readonly doneMarkerSuffix?: string | undefined;
  /** REPORT_ENCODING: how reports/ files are written, unless a file's source profile says otherwise. */
  readonly reportEncoding?: ReportEncoding | undefined;
}

export function dropFolder(
  root: string,
  options: Pick<DropFolder, "doneMarkerSuffix" | "reportEncoding"> = {},
): DropFolder {
  const abs = resolve(root);
  return {
    root: abs,
    processing: join(abs, "processing"),
    archive: join(abs, "archive"),
    rejected: join(abs, "rejected"),
    reports: join(abs, "reports"),
    doneMarkerSuffix: options.doneMarkerSuffix,
    reportEncoding: options.reportEncoding,
  };
}

/**
 * Makes the folder and its subfolders: for tools that make a drop folder of their own (tests, benchmarks).
 * The relay's commands never create the drop folder itself (drop-folder-usable.ts checks it).
 */
export async function ensureDropFolder(folder: DropFolder): Promise<void> {
  for (const dir of [folder.root, folder.processing, folder.archive, folder.rejected, folder.reports]) {
    await mkdir(dir, { recursive: true });
  }
}

const IGNORED_SUFFIXES = [".tmp", ".part", ".partial"];

/** Whether a top-level name is a drop file by its name alone: a known extension, not hidden, not an upload. */
export function isDropName(name: string): boolean {
  if (name.startsWith(".")) return false;
  const lower = name.toLowerCase();
  if (IGNORED_SUFFIXES.some((suffix) => lower.endsWith(suffix))) return false;
  return formatOf(name) !== undefined;
}

/** Whether a top-level name is the done-marker of a drop file (DONE_MARKER_SUFFIX set). */
export function isDoneMarker(folder: DropFolder, name: string): boolean {
  const suffix = folder.doneMarkerSuffix;
  return suffix !== undefined && name.endsWith(suffix) && isDropName(name.slice(0, -suffix.length));
}

/**
 * Whether a drop file's done-marker is there and was written after the file's last change. A marker
 * older than the file belongs to an earlier upload under the same name (left by a crash between a claim
 * and the marker's removal), not to the one still being written.
 */
export async function markedDone(folder: DropFolder, name: string, fileMtimeMs: number): Promise<boolean> {
  if (folder.doneMarkerSuffix === undefined) return false;
  try {
    return (await lstat(join(folder.root, `${name}${folder.doneMarkerSuffix}`))).mtimeMs >= fileMtimeMs;
  } catch {
    return false;
  }
}

/**
 * Whether a file may be taken now (readinessOf in drop-scan.ts): `settled` (unchanged for SETTLE_MS, or
 * with DONE_MARKER_SUFFIX set, marked done after its last change), `writing` (changed within SETTLE_MS:
 * a writer may still be at it) or `unmarked` (quiet, but DONE_MARKER_SUFFIX is set and its marker is
 * missing or older than the file).
 */
export type Readiness = "settled" | "writing" | "unmarked";

export { newBatchId };

// `s`: a name may hold any character but `/` and NUL, line breaks (\n, \r, U+2028, U+2029) included.
const CLAIMED = new RegExp(`^(${BATCH_ID_PATTERN.source.slice(1, -1)})--(.+)$`, "s");

/** A claimed file carries its batch id in its name, so the batch survives a crash with the file. */
export interface ClaimedFile {
  readonly batchId: string;
  /** The name it was dropped under. */
  readonly name: FileName;
  /** Where it is now. */
  readonly path: string;
  /** Bytes claimed: readers read no further (a writer may still be appending; see FileChangedError). */
  readonly size?: number | undefined;
}

export function claimedName(batchId: string, name: FileName): string {
  return `${batchId}--${name}`;
}

export function parseClaimedName(claimed: string): { batchId: string; name: FileName } | undefined {
  const match = CLAIMED.exec(claimed);
  const name = match?.[2] === undefined ? undefined : fileName(match[2]);
  return match?.[1] === undefined || name === undefined ? undefined : { batchId: match[1], name };
}

/**
 * Claims a drop file by renaming it into processing/ (atomic within one file system). Two processes
 * racing for the same file: one rename wins, the other gets ENOENT and returns undefined. The rename is
 * on the pass's `signal` (onFileSystem).
 */
export async function claim(
  folder: DropFolder,
  name: FileName,
  batchId = newBatchId(),
  signal?: AbortSignal,
): Promise<ClaimedFile | undefined> {
  const target = join(folder.processing, claimedName(batchId, name));
  try {
    await onFileSystem(`the drop folder's file ${shownName(name)}, renamed to be claimed`, signal, () =>
      rename(join(folder.root, name), target),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  await removeDoneMarker(folder, join(folder.root, name));
  return { batchId, name, path: target };
}

/** After a claim: a marker left behind would make the next upload under the name ready at once. */
export async function removeDoneMarker(folder: DropFolder, path: string): Promise<void> {
  if (folder.doneMarkerSuffix !== undefined) await rm(`${path}${folder.doneMarkerSuffix}`, { force: true });
}

/** Files left in processing/ by an earlier run that did not finish: they are resumed, never re-claimed. */
export async function claimedFiles(folder: DropFolder): Promise<ClaimedFile[]> {
  const names = await readdir(folder.processing);
  const out: ClaimedFile[] = [];
  for (const fileName of names.sort()) {
    const parsed = parseClaimedName(fileName);
    if (parsed !== undefined) out.push({ ...parsed, path: join(folder.processing, fileName) });
  }
  return out;
}

/**
 * Moves a claimed file to archive/ or rejected/, keeping its claimed name; returns the new path. The
 * rename is on the pass's `signal` (onFileSystem).
 */
export async function moveClaimed(
  folder: DropFolder,
  file: ClaimedFile,
  to: "archive" | "rejected",
  signal?: AbortSignal,
): Promise<string> {
  const target = join(
    to === "archive" ? folder.archive : folder.rejected,
    claimedName(file.batchId, file.name),
  );
  if (file.path === target) return target;
  await onFileSystem(`the drop folder's file ${shownName(file.name)}, moved to ${to}/`, signal, () =>
    rename(file.path, target),
  );
  return target;
}
