import type { Dirent, Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { admitName, isRefused, type FileName, type RefusedName } from "../names/file-name.js";
import { shownName } from "../names/shown-text.js";
import { isDropName, markedDone, type DropFolder, type Readiness } from "./drop-folder.js";

export interface DropCandidate {
  readonly name: FileName;
  /** A symbolic link is never followed: it is claimed and rejected as such. */
  readonly symlink: boolean;
}

/** An entry with a drop file's name that is no file (a folder, a named pipe…): never read, named. */
export interface NotAFile {
  readonly shown: string;
  readonly kind: string;
}

/** A drop file not ready yet: why, in words that end "…", for the pass to name it if it is still so. */
export interface WaitingFile {
  readonly shown: string;
  readonly why: string;
}

/** A name that is a drop file's but for its end (a trailing space or dot): never taken, named. */
export interface NearMiss {
  readonly shown: string;
  /** The name it was likely meant to have. */
  readonly meant: string;
}

export interface DropScan {
  /** Ready to claim, oldest first. */
  readonly ready: DropCandidate[];
  /** Names refused (admitName: not UTF-8, or too long for the names made from them). */
  readonly refused: RefusedName[];
  readonly notFiles: NotAFile[];
  /** Still being written, dated in the future and not yet quiet, or without their done-marker. */
  readonly waiting: WaitingFile[];
  readonly nearMisses: NearMiss[];
}

/**
 * When each drop file was last seen to change, by this process's clock: a file is quiet once its size,
 * modification time and inode have not changed for SETTLE_MS as this process watched it, whatever its
 * modification time says (a share whose clock runs ahead dates its files in the future).
 */
export class QuietWatch {
  readonly #seen = new Map<string, { readonly stamp: string; readonly since: number }>();

  /** How long `name` has been seen unchanged, 0 at first sight or after a change. */
  quietFor(name: string, info: Stats, now: number): number {
    const stamp = `${info.size}:${info.mtimeMs}:${info.ino}`;
    const seen = this.#seen.get(name);
    if (seen?.stamp === stamp) return now - seen.since;
    this.#seen.set(name, { stamp, since: now });
    return 0;
  }

  /** Forgets the files no longer there (claimed, removed). */
  keepOnly(names: ReadonlySet<string>): void {
    for (const name of this.#seen.keys()) if (!names.has(name)) this.#seen.delete(name);
  }
}

/**
 * The drop folder as a pass sees it: every entry with a drop file's name (or almost one) is ready to
 * claim, or is told apart with the reason it is not taken now, so the pass can name it. A file is ready
 * when its last change is at least `settleMs` old by its modification time, or `watch` has seen it
 * unchanged that long; with DONE_MARKER_SUFFIX set, once marked done, and only then (dated in the
 * future: once marked and seen unchanged that long).
 * The folder is read as bytes: a name that is not UTF-8 is seen as it is, not as a lookalike.
 */
export async function scanDropFolder(
  folder: DropFolder,
  settleMs: number,
  watch = new QuietWatch(),
  now = Date.now(),
): Promise<DropScan> {
  const entries = await readdir(folder.root, { withFileTypes: true, encoding: "buffer" });
  const ready: { name: FileName; symlink: boolean; mtime: number }[] = [];
  const scan: Omit<DropScan, "ready"> = { refused: [], notFiles: [], waiting: [], nearMisses: [] };
  const present = new Set<string>();
  for (const entry of entries) {
    const text = entry.name.toString("utf8");
    if (!isDropName(text)) {
      const meant = text.replace(/[ .]+$/, "");
      if (meant !== text && isDropName(meant)) scan.nearMisses.push({ shown: shownName(entry.name), meant });
      continue;
    }
    if (!(entry.isFile() || entry.isSymbolicLink())) {
      scan.notFiles.push({ shown: shownName(entry.name), kind: entryKind(entry) });
      continue;
    }
    const name = admitName(entry.name);
    if (isRefused(name)) {
      scan.refused.push(name);
      continue;
    }
    let info: Stats;
    try {
      info = await lstat(join(folder.root, name));
    } catch {
      continue; // gone meanwhile (another process claimed it)
    }
    present.add(name);
    const quiet = watch.quietFor(name, info, now);
    const waiting = await notReady(folder, name, info, { settleMs, quiet, now });
    if (waiting === undefined) ready.push({ name, symlink: info.isSymbolicLink(), mtime: info.mtimeMs });
    else scan.waiting.push({ shown: shownName(name), why: waiting });
  }
  watch.keepOnly(present);
  ready.sort((a, b) => a.mtime - b.mtime || a.name.localeCompare(b.name));
  return { ready: ready.map(({ name, symlink }) => ({ name, symlink })), ...scan };
}

/** Undefined when the file may be taken now; else why not. */
async function notReady(
  folder: DropFolder,
  name: FileName,
  info: Stats,
  at: { readonly settleMs: number; readonly quiet: number; readonly now: number },
): Promise<string | undefined> {
  const readiness = await readinessOf(folder, name, info.mtimeMs, at.settleMs, at.quiet, at.now);
  if (readiness === "settled") return undefined;
  const age = at.now - info.mtimeMs;
  if (age < -FUTURE_MS && readiness === "writing")
    return (
      `is dated ${seconds(-age)} s in the future (the clock of the machine that wrote it is ahead?): it is ` +
      `taken once it has not changed for SETTLE_MS=${at.settleMs} ms by this machine's clock`
    );
  if (folder.doneMarkerSuffix !== undefined)
    return `waits for its done-marker ${shownName(`${name}${folder.doneMarkerSuffix}`)} (DONE_MARKER_SUFFIX), written after it`;
  return `is still being written (changed ${seconds(Math.max(0, age))} s ago; SETTLE_MS=${at.settleMs} ms): a later pass takes it once it has settled`;
}

/**
 * Whether a file may be taken now (Readiness): unchanged for `settleMs` by its modification time or as
 * `quiet` says (how long this process has seen it unchanged, QuietWatch); with DONE_MARKER_SUFFIX set,
 * once marked done after its last change, and only then. Dated ahead of this machine's clock, a file's
 * time tells nothing: only `quiet` does, for SETTLE_MS as for its marker's "written after it" (any
 * marker, once the file has settled so).
 */
export async function readinessOf(
  folder: DropFolder,
  name: string,
  mtimeMs: number,
  settleMs: number,
  quiet = 0,
  now = Date.now(),
): Promise<Readiness> {
  const age = now - mtimeMs;
  const settled = age >= settleMs || quiet >= settleMs;
  if (await markedDone(folder, name, age < -FUTURE_MS && settled ? -Infinity : mtimeMs)) return "settled";
  if (!settled) return "writing";
  return folder.doneMarkerSuffix === undefined ? "settled" : "unmarked";
}

/**
 * How far ahead of this machine's clock a modification time must be to be called "in the future": a
 * file written while the scan runs is dated after the scan's `now`, and file systems stamp times from a
 * coarse clock; a second covers both, and a share whose clock runs ahead is off by far more.
 */
const FUTURE_MS = 1000;

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

function entryKind(entry: Dirent<Buffer>): string {
  if (entry.isDirectory()) return "folder";
  if (entry.isFIFO()) return "named pipe";
  if (entry.isSocket()) return "socket";
  return "device";
}
