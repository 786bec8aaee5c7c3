import { EventEmitter } from "node:events";
import { stat } from "node:fs/promises";
import type { FileEntryWithStats, SFTPWrapper } from "ssh2";
import type SftpClient from "ssh2-sftp-client";
import type { ClaimedContent } from "../claimed-content.js";
import { admitName, type FileName, type RefusedName } from "../../names/file-name.js";
import { connectOnce, patienceOf } from "./connect-once.js";
import { connectionProblem } from "./connection-problem.js";
import { credentials } from "./credentials.js";
import { HostKeyRefusedError } from "./errors/host-key-refused-error.js";
import { HostKeyRevokedError } from "./errors/host-key-revoked-error.js";
import { RemoteFileRefusedError } from "./errors/remote-file-refused-error.js";
import { RemoteSourceUnavailableError } from "./errors/remote-source-unavailable-error.js";
import { acceptedKeys, algorithmsFor } from "./host-key.js";
import { readRest, remoteStanding, type RemoteStanding } from "./remote-content.js";
import type { RemoteSource } from "./remote-source.js";

/** One entry of a remote folder. */
export interface RemoteEntry {
  /** The name as the server listed it (decoded by ssh2): matched against globs and printed, never a path. */
  readonly listed: string;
  /** `listed` checked where it came in (admitName): the name every path of the file is made from, or why not. */
  readonly name: FileName | RefusedName;
  readonly size: number;
  /** Seconds resolution on most servers (SFTP v3 sends whole seconds). */
  readonly mtimeMs: number;
  /** From the listing's `ls -l` type letter. */
  readonly type: "file" | "folder" | "link" | "other";
}

const TYPES: Readonly<Record<string, RemoteEntry["type"]>> = { "-": "file", d: "folder", l: "link" };

/** The few SFTP operations the pull and the upload need: the port the use cases talk to. */
export interface RemoteSession {
  readonly list: (dir: string) => Promise<RemoteEntry[]>;
  /** Undefined when there is nothing at `path`. */
  readonly stat: (path: string) => Promise<{ size: number; mtimeMs: number } | undefined>;
  /** Every byte up to the end of the file, whatever size the server says it has. */
  readonly download: (remote: string, local: string) => Promise<void>;
  /** Reads `path` again to tell whether it still holds the content taken (remote-content.ts). */
  readonly standing: (path: string, claimed: ClaimedContent) => Promise<RemoteStanding>;
  readonly upload: (local: string, remote: string) => Promise<void>;
  /** Fails when `to` exists (SFTP v3 rename), which tells a second mover it came too late. */
  readonly rename: (from: string, to: string) => Promise<void>;
  readonly remove: (path: string) => Promise<void>;
  readonly mkdirp: (path: string) => Promise<void>;
  readonly close: () => Promise<void>;
}

export type OpenSession = (source: RemoteSource) => Promise<RemoteSession>;

/**
 * The key type a fingerprint pin was last met with, per server and pin: asked for first from then on,
 * so a server whose preferred key is not the pinned one costs one connection a poll, not one per type.
 */
const metWith = new Map<string, string>();

/**
 * Connects to the source's server, trusting only a pinned host key, then logs in with the key or
 * password the source names, read now from its file or variable. The host-key algorithms offered are
 * those of the pinned keys' types (known_hosts, as OpenSSH orders them); a fingerprint says no type, so
 * a server whose first key is not the pinned one is asked again for its other types, one connection
 * each. Refusals: HostKeyRefusedError (naming the expected and each offered fingerprint),
 * HostKeyRevokedError, RemoteSourceUnavailableError (`secret`/`config` before any connection, `auth`,
 * `connect` in an operator's words); no secret is ever in a message.
 */
export async function openSftpSession(source: RemoteSource): Promise<RemoteSession> {
  const accepted = await acceptedKeys(source);
  const login = await credentials(source);
  const server = `${source.host}:${source.port}`;
  const offered: string[] = [];
  const known = `${server} ${accepted.expected}`;
  const first = algorithmsFor([metWith.get(known) ?? ""]);
  let algorithms = [...first, ...accepted.algorithms.filter((a) => !first.includes(a))];
  for (;;) {
    const attempt = await connectOnce(source, login, algorithms, accepted);
    if (attempt.kind === "open") {
      if (accepted.probe) metWith.set(known, attempt.type);
      return sessionOf(attempt.client, attempt.sftp, source.name, server, patienceOf(source));
    }
    if (attempt.kind === "revoked")
      throw new HostKeyRevokedError(source.name, server, attempt.fingerprint, attempt.where);
    if (attempt.kind === "not-pinned") {
      offered.push(attempt.fingerprint);
      const left = algorithms.filter((a) => !algorithmsFor([attempt.type]).includes(a));
      if (accepted.probe && left.length > 0) {
        algorithms = left;
        continue;
      }
      throw new HostKeyRefusedError(source.name, server, accepted.expected, offered);
    }
    // No host key offered at all: the server has none of the types still asked for.
    if (attempt.level === "handshake" && (offered.length > 0 || !accepted.probe))
      throw new HostKeyRefusedError(source.name, server, accepted.expected, offered);
    if (attempt.level === "client-authentication")
      throw new RemoteSourceUnavailableError(
        source.name,
        "auth",
        `${server} refused the login of ${source.user} with the ${source.auth.kind === "key" ? "key in key_file" : "password"}; ` +
          "check the user, and that the server holds this key or password (authorized_keys)",
      );
    throw new RemoteSourceUnavailableError(
      source.name,
      "connect",
      connectionProblem(server, attempt.code, attempt.level),
    );
  }
}

function sessionOf(
  client: SftpClient,
  sftp: SFTPWrapper,
  source: string,
  server: string,
  patienceMs: number,
): RemoteSession {
  let dead: RemoteSourceUnavailableError | undefined;
  /**
   * Runs one operation; when the server answers nothing for `patienceMs` (`answer` tells each answer
   * of a long one), the connection is closed and the operation fails as the source's (`transfer`, tried
   * again with backoff), so the other sources and the drop folder go on.
   */
  const watched = async <T>(what: string, run: (answer: () => void) => Promise<T>): Promise<T> => {
    if (dead !== undefined) throw dead;
    let timer: NodeJS.Timeout | undefined;
    let fail: (error: Error) => void = () => undefined;
    const stalled = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const answer = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        dead = new RemoteSourceUnavailableError(
          source,
          "transfer",
          `${server} answered nothing for ${patienceMs / 1000} s while asked to ${what}; the connection ` +
            "was closed. If it happens again, ask the server's operator whether it is overloaded or stuck",
        );
        const ssh: unknown = Reflect.get(client, "client");
        if (ssh instanceof EventEmitter) (ssh as EventEmitter & { destroy?: () => void }).destroy?.();
        fail(dead);
      }, patienceMs);
    };
    answer();
    try {
      const running = run(answer);
      running.catch(() => undefined); // when the wait wins, the operation's own failure comes after
      return await Promise.race([running, stalled]);
    } finally {
      clearTimeout(timer);
    }
  };
  const plain = requests(client, sftp);
  return {
    list: (dir) => watched(`list ${dir}`, (answer) => plain.list(dir, answer)),
    stat: (path) => watched(`stat ${path}`, () => plain.stat(path)),
    download: (remote, local) => watched(`read ${remote}`, (answer) => plain.download(remote, local, answer)),
    standing: (path, claimed) => watched(`read ${path}`, (answer) => plain.standing(path, claimed, answer)),
    upload: (local, remote) => watched(`write ${remote}`, (answer) => plain.upload(local, remote, answer)),
    rename: (from, to) => watched(`rename ${from}`, () => plain.rename(from, to)),
    remove: (path) => watched(`remove ${path}`, () => plain.remove(path)),
    mkdirp: (path) => watched(`create ${path}`, () => plain.mkdirp(path)),
    close: async () => {
      await client.end().catch(() => undefined);
    },
  };
}

/** The session's operations as requests to the server; `answer` is told of each answer of a long one. */
function requests(client: SftpClient, sftp: SFTPWrapper) {
  return {
    list: (dir: string, answer: () => void) => listing(sftp, dir, answer),
    stat: (path: string) =>
      answered("read", path, async () => {
        if ((await client.exists(path)) === false) return undefined;
        const s = await client.stat(path);
        return { size: s.size, mtimeMs: s.modifyTime };
      }),
    download: (remote: string, local: string, answer: () => void) =>
      answered("send", remote, async () => {
        await client.fastGet(remote, local, { concurrency: 16, chunkSize: 64 * 1024, step: answer });
        await readRest(sftp, remote, local, (await stat(local)).size, answer);
      }),
    standing: (path: string, claimed: ClaimedContent, answer: () => void) =>
      answered("read", path, () => remoteStanding(sftp, path, claimed, answer)),
    upload: (local: string, remote: string, answer: () => void) =>
      answered("write", remote, async () => {
        await client.fastPut(local, remote, { step: answer });
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
 * `answer` told of each: a folder of 100,000 names takes as long as it takes, and only a server that
 * stops answering is taken for stalled. `.` and `..` are left out; the type is the `ls -l` letter.
 */
async function listing(sftp: SFTPWrapper, dir: string, answer: () => void): Promise<RemoteEntry[]> {
  const handle = await new Promise<Buffer>((resolve, reject) => {
    sftp.opendir(dir, (error, opened) => {
      if (error) reject(error);
      else resolve(opened);
    });
  });
  const out: RemoteEntry[] = [];
  try {
    for (;;) {
      const names = await new Promise<FileEntryWithStats[] | undefined>((resolve, reject) => {
        sftp.readdir(handle, (error, list) => {
          if ((error as { code?: unknown } | undefined)?.code === END_OF_FILE) resolve(undefined);
          else if (error) reject(error);
          else resolve(list);
        });
      });
      answer();
      if (names === undefined) return out;
      for (const e of names)
        out.push({
          listed: e.filename,
          name: admitName(e.filename),
          size: e.attrs.size,
          mtimeMs: e.attrs.mtime * 1000,
          type: TYPES[e.longname.slice(0, 1)] ?? "other",
        });
    }
  } finally {
    await new Promise<void>((resolve) => {
      sftp.close(handle, () => {
        resolve();
      });
    });
  }
}

/** SSH_FX_EOF (SFTP v3): a folder has no more names. */
const END_OF_FILE = 1;

// ssh2 gives an SFTP status (the server's answer) as a numeric code; ssh2-sftp-client's own checks of a
// path give these. Anything else (a dropped connection, a timeout) is the source's problem, not the file's.
const PATH_CODES: ReadonlySet<unknown> = new Set(["ERR_BAD_PATH", "ENOENT", "EACCES", "ENOTDIR"]);

/** Runs an operation on one file; the server's refusal of it becomes a RemoteFileRefusedError. */
async function answered<T>(operation: string, path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code;
    if (typeof code === "number" || PATH_CODES.has(code))
      throw new RemoteFileRefusedError(
        operation,
        path,
        error instanceof Error ? error.message : String(error),
      );
    throw error;
  }
}
