import type { FileEntryWithStats, SFTPWrapper } from "ssh2";
import type SftpClient from "ssh2-sftp-client";
import { z } from "zod";
import type { ClaimedContent } from "../claimed-content.js";
import { admitName, type FileName, type RefusedName } from "../../names/file-name.js";
import { RemoteFileRefusedError } from "./errors/remote-file-refused-error.js";
import { closeHandle, downloadListed, remoteStanding } from "./remote-content.js";

/** One entry of a remote folder. */
export interface RemoteEntry {
  /** The name as the server listed it (decoded by ssh2): matched against globs and printed, never a path. */
  readonly listed: string;
  /** `listed` checked where it came in (admitName): the name every path of the file is made from, or why not. */
  readonly name: FileName | RefusedName;
  /** Undefined when the listing leaves it out (SFTP v3 sends each attribute only when its flag is set). */
  readonly size: number | undefined;
  /** Seconds resolution on most servers (SFTP v3 sends whole seconds); undefined when left out. */
  readonly mtimeMs: number | undefined;
  /** From the listing's `ls -l` type letter. */
  readonly type: "file" | "folder" | "link" | "other";
}

const TYPES: Readonly<Record<string, RemoteEntry["type"]>> = { "-": "file", d: "folder", l: "link" };

/** S_IFMT's kinds (POSIX), as SFTP v3's permissions attribute carries them. */
const MODE_TYPES: Readonly<Record<number, RemoteEntry["type"]>> = {
  0o100000: "file",
  0o040000: "folder",
  0o120000: "link",
};

/**
 * An entry's kind, from its `ls -l` long name, else from the mode its attributes carry. SFTP v3 allows a
 * name with neither (a bare long name, no attributes): then it is taken for a file whose listing says
 * nothing more, named for what is missing, never for being something else. Pure.
 */
export function entryType(longname: string, mode: number | undefined): RemoteEntry["type"] {
  if (/^[-dlcbps][-rwxsStT]{9}/.test(longname)) return TYPES[longname.slice(0, 1)] ?? "other";
  if (mode !== undefined && mode !== 0) return MODE_TYPES[mode & 0o170000] ?? "other";
  return "file";
}

/**
 * What a listing says of an entry's size and time. ssh2 types them as numbers, but leaves out those the
 * server did not send (SFTP v3 lets it send none at all): each is checked here, absent when not a count.
 */
const LISTED_ATTRIBUTES = z.object({
  size: z.number().int().nonnegative().optional().catch(undefined),
  mtime: z.number().int().nonnegative().optional().catch(undefined),
});

/**
 * The session's operations as requests to the server; `progress` is told of what each answer of a long
 * one delivered.
 */
export function requests(client: SftpClient, sftp: SFTPWrapper) {
  return {
    list: (dir: string, progress: (delivered: number) => void) => listing(sftp, dir, progress),
    stat: (path: string) =>
      answered("read", path, async () => {
        if ((await client.exists(path)) === false) return undefined;
        const s = await client.stat(path);
        return { size: s.size, mtimeMs: s.modifyTime };
      }),
    download: (remote: string, local: string, size: number, progress: (delivered: number) => void) =>
      answered("send", remote, () => downloadListed(sftp, remote, local, size, progress)),
    standing: (path: string, claimed: ClaimedContent, progress: (delivered: number) => void) =>
      answered("read", path, () => remoteStanding(sftp, path, claimed, progress)),
    upload: (local: string, remote: string, progress: (delivered: number) => void) =>
      answered("write", remote, async () => {
        await client.fastPut(local, remote, {
          step: (_total: number, chunk: number) => {
            progress(chunk);
          },
        });
      }),
    rename: (from: string, to: string) =>
      answered("rename", `${from} to ${to}`, async () => {
        await client.rename(from, to);
      }),
    remove: (path: string) =>
      answered("remove", path, async () => {
        await client.delete(path, true);
      }),
    mkdirp: async (path: string) => {
      if ((await client.exists(path)) === false) await client.mkdir(path, true);
    },
  };
}

/**
 * The entries of a folder, asked for an answer at a time (a server sends a hundred or so names each),
 * `progress` told of the names each brought: a folder of 100,000 names takes as long as it takes, and
 * only a server that stops sending names is taken for stalled. `.` and `..` are left out; the type is
 * the `ls -l` letter.
 */
async function listing(
  sftp: SFTPWrapper,
  dir: string,
  progress: (delivered: number) => void,
): Promise<RemoteEntry[]> {
  const handle = await new Promise<Buffer>((resolve, reject) => {
    sftp.opendir(dir, (error, opened) => {
      if (error) reject(error);
      else resolve(opened);
    });
  });
  const out: RemoteEntry[] = [];
  let answered = false;
  try {
    for (;;) {
      const names = await new Promise<FileEntryWithStats[] | undefined>((resolve, reject) => {
        sftp.readdir(handle, (error, list) => {
          if ((error as { code?: unknown } | undefined)?.code === END_OF_FILE) resolve(undefined);
          else if (error) reject(error);
          else resolve(list);
        });
      });
      if (names === undefined) {
        answered = true;
        return out;
      }
      progress(names.length);
      for (const e of names) {
        const { size, mtime } = LISTED_ATTRIBUTES.parse({ size: e.attrs.size, mtime: e.attrs.mtime });
        out.push({
          listed: e.filename,
          name: admitName(e.filename),
          size,
          mtimeMs: mtime === undefined ? undefined : mtime * 1000,
          type: entryType(e.longname, e.attrs.mode),
        });
      }
    }
  } finally {
    await closeHandle(sftp, handle, answered);
  }
}

/** SSH_FX_EOF (SFTP v3): a folder has no more names. */
const END_OF_FILE = 1;

// ssh2 gives an SFTP status (the server's answer) as a numeric code; ssh2-sftp-client's own checks of a
// path give these. Anything else (a dropped connection, a timeout) is the source's problem, not the file's;
// an error of this machine's file system (Node's name their system call) is never the server's answer.
const PATH_CODES: ReadonlySet<unknown> = new Set(["ERR_BAD_PATH", "ENOENT", "EACCES", "ENOTDIR"]);

/** Runs an operation on one file; the server's refusal of it becomes a RemoteFileRefusedError. */
async function answered<T>(operation: string, path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
    if (syscall === undefined && (typeof code === "number" || PATH_CODES.has(code)))
      throw new RemoteFileRefusedError(
        operation,
        path,
        error instanceof Error ? error.message : String(error),
      );
    throw error;
  }
}
