import { EventEmitter } from "node:events";
import { readFile } from "node:fs/promises";
import type { SFTPWrapper } from "ssh2";
import type SftpClient from "ssh2-sftp-client";
import type { ClaimedContent } from "../claimed-content.js";
import { HostKeyRefusedError } from "./errors/host-key-refused-error.js";
import { RemoteSourceUnavailableError } from "./errors/remote-source-unavailable-error.js";
import { acceptedKeys, fingerprintOf } from "./host-key.js";
import { remoteStanding, type RemoteStanding } from "./remote-content.js";
import { describeSource, type RemoteSource } from "./remote-source.js";

/** One entry of a remote folder. */
export interface RemoteEntry {
  readonly name: string;
  readonly size: number;
  /** Seconds resolution on most servers (SFTP v3 sends whole seconds). */
  readonly mtimeMs: number;
  readonly isFile: boolean;
}

/** The few SFTP operations the pull and the upload need: the port the use cases talk to. */
export interface RemoteSession {
  readonly list: (dir: string) => Promise<RemoteEntry[]>;
  /** Undefined when there is nothing at `path`. */
  readonly stat: (path: string) => Promise<{ size: number; mtimeMs: number } | undefined>;
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

const READY_TIMEOUT_MS = 15_000;

/**
 * Connects to the source's server, refusing any host key the pin does not accept (HostKeyRefusedError,
 * naming the expected and the offered fingerprint), then logs in with the key or password the source
 * names, read now from its file or variable. A refused login or an unreachable server is a
 * RemoteSourceUnavailableError naming the source; no secret is ever in a message.
 */
export async function openSftpSession(source: RemoteSource): Promise<RemoteSession> {
  const accepted = await acceptedKeys(source.hostKey, source.host, source.port);
  let offered: string | undefined;
  // The library's default listeners print to the console; a dropped connection is seen instead by the
  // operation in flight, which fails and is retried.
  const quiet = () => undefined;
  const { SftpClient: SftpClientClass } = await import("./ssh-stack.js");
  const client = new SftpClientClass(`invoice-relay:${source.name}`, {
    error: quiet,
    end: quiet,
    close: quiet,
  });
  // ssh2-sftp-client rewords the connection's errors; ssh2's own say which stage failed (`level`).
  let level: unknown;
  const ssh: unknown = Reflect.get(client, "client");
  if (ssh instanceof EventEmitter)
    ssh.prependListener("error", (error: unknown) => {
      level ??= (error as { level?: unknown } | undefined)?.level;
    });
  let sftp: SFTPWrapper;
  try {
    sftp = await client.connect({
      host: source.host,
      port: source.port,
      username: source.user,
      ...(await credentials(source)),
      readyTimeout: READY_TIMEOUT_MS,
      keepaliveInterval: 5_000,
      keepaliveCountMax: 3,
      retries: 0,
      hostVerifier: (key: Buffer) => {
        offered = fingerprintOf(key);
        return accepted.fingerprints.has(offered);
      },
    });
  } catch (error) {
    await client.end().catch(() => undefined);
    const server = `${source.host}:${source.port}`;
    if (offered !== undefined && !accepted.fingerprints.has(offered))
      throw new HostKeyRefusedError(source.name, server, accepted.expected, offered);
    if (level === "client-authentication")
      throw new RemoteSourceUnavailableError(
        source.name,
        "auth",
        `${server} refused the login of ${source.user} with the ${source.auth.kind === "key" ? "key in key_file" : "password"}; ` +
          "check the user, and that the server holds this key or password (authorized_keys)",
      );
    throw new RemoteSourceUnavailableError(
      source.name,
      "connect",
      `could not connect to ${describeSource(source)}: ${errorText(error)}`,
    );
  }
  return sessionOf(client, sftp);
}

async function credentials(
  source: RemoteSource,
): Promise<{ privateKey: Buffer; passphrase?: string } | { password: string }> {
  const fail = (detail: string) => new RemoteSourceUnavailableError(source.name, "secret", detail);
  const auth = source.auth;
  if (auth.kind === "password-env") {
    const password = process.env[auth.passwordEnv];
    if (password === undefined) throw fail(`password_env names ${auth.passwordEnv}, which is not set`);
    return { password };
  }
  const read = async (field: string, path: string) => {
    try {
      return await readFile(path);
    } catch {
      throw fail(`${field} ${path} cannot be read; check the path and its permissions`);
    }
  };
  if (auth.kind === "password-file")
    return {
      password: (await read("password_file", auth.passwordFile)).toString("utf8").replace(/\r?\n$/, ""),
    };
  const privateKey = await read("key_file", auth.keyFile);
  const passphrase =
    auth.passphraseFile === undefined
      ? undefined
      : (await read("passphrase_file", auth.passphraseFile)).toString("utf8").replace(/\r?\n$/, "");
  const { usablePrivateKey } = await import("./ssh-stack.js");
  if (!usablePrivateKey(privateKey, passphrase))
    throw fail(
      `key_file ${auth.keyFile} is not a private key this process can use` +
        (auth.passphraseFile === undefined
          ? " (is it protected by a passphrase? name it in passphrase_file)"
          : " with the passphrase in passphrase_file"),
    );
  return passphrase === undefined ? { privateKey } : { privateKey, passphrase };
}

function sessionOf(client: SftpClient, sftp: SFTPWrapper): RemoteSession {
  return {
    list: async (dir) =>
      (await client.list(dir)).map((e) => ({
        name: e.name,
        size: e.size,
        mtimeMs: e.modifyTime,
        isFile: e.type === "-",
      })),
    stat: async (path) => {
      if ((await client.exists(path)) === false) return undefined;
      const s = await client.stat(path);
      return { size: s.size, mtimeMs: s.modifyTime };
    },
    download: async (remote, local) => {
      await client.fastGet(remote, local, { concurrency: 16, chunkSize: 64 * 1024 });
    },
    standing: (path, claimed) => remoteStanding(sftp, path, claimed),
    upload: async (local, remote) => {
      await client.fastPut(local, remote);
    },
    rename: async (from, to) => {
      await client.rename(from, to);
    },
    remove: async (path) => {
      await client.delete(path, true);
    },
    mkdirp: async (path) => {
      if ((await client.exists(path)) === false) await client.mkdir(path, true);
    },
    close: async () => {
      await client.end().catch(() => undefined);
    },
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
