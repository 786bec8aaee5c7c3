import { EventEmitter } from "node:events";
import type { SFTPWrapper } from "ssh2";
import type SftpClient from "ssh2-sftp-client";
import type { ClaimedContent } from "../claimed-content.js";
import { connectOnce, patienceOf, type ConnectStage } from "./connect-once.js";
import { connectionProblem, unansweredClause } from "./connection-problem.js";
import { credentials } from "./credentials.js";
import { HostKeyRefusedError } from "./errors/host-key-refused-error.js";
import { HostKeyRevokedError } from "./errors/host-key-revoked-error.js";
import { RemoteSourceUnavailableError } from "./errors/remote-source-unavailable-error.js";
import { acceptedKeys, algorithmsFor } from "./host-key.js";
import type { RemoteStanding } from "./remote-content.js";
import type { RemoteSource } from "./remote-source.js";
import { requests, type RemoteEntry } from "./sftp-requests.js";
import { endedBy } from "../../lifecycle/pass-signal.js";
import { waitingFor } from "../../lifecycle/waits.js";

export type { RemoteEntry };

/** The few SFTP operations the pull and the upload need: the port the use cases talk to. */
export interface RemoteSession {
  readonly list: (dir: string) => Promise<RemoteEntry[]>;
  /** Undefined when there is nothing at `path`. */
  readonly stat: (path: string) => Promise<{ size: number; mtimeMs: number } | undefined>;
  /**
   * The file's first `size` bytes (its listed size) and never more, going on from what `local` holds
   * (remote-content.ts, downloadListed); a file that ends before or goes on after is a RemoteFileSizeError.
   */
  readonly download: (remote: string, local: string, size: number) => Promise<void>;
  /** Reads `path` again to tell whether it still holds the content taken (remote-content.ts). */
  readonly standing: (path: string, claimed: ClaimedContent) => Promise<RemoteStanding>;
  readonly upload: (local: string, remote: string) => Promise<void>;
  /** Fails when `to` exists (SFTP v3 rename), which tells a second mover it came too late. */
  readonly rename: (from: string, to: string) => Promise<void>;
  readonly remove: (path: string) => Promise<void>;
  readonly mkdirp: (path: string) => Promise<void>;
  readonly close: () => Promise<void>;
  /** The pass's one signal the session's waits end with: the local steps of its files end with it too. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Opens a session whose every wait (the connection, the handshake, each request) ends when `signal` is
 * aborted (a pass's deadline, or a signal to stop: src/lifecycle/pass-signal.ts).
 */
export type OpenSession = (source: RemoteSource, signal?: AbortSignal) => Promise<RemoteSession>;

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
export async function openSftpSession(source: RemoteSource, signal?: AbortSignal): Promise<RemoteSession> {
  const accepted = await acceptedKeys(source);
  const login = await credentials(source);
  const server = `${source.host}:${source.port}`;
  const offered: string[] = [];
  const known = `${server} ${accepted.expected}`;
  const first = algorithmsFor([metWith.get(known) ?? ""]);
  let algorithms = [...first, ...accepted.algorithms.filter((a) => !first.includes(a))];
  for (;;) {
    const attempt = await waitingFor(`SFTP source ${source.name}: ${server}, connecting`, () =>
      connectOnce(source, login, algorithms, accepted, signal),
    );
    if (attempt.kind === "open") {
      if (accepted.probe) metWith.set(known, attempt.type);
      return sessionOf(attempt.client, attempt.sftp, source.name, server, patienceOf(source), signal);
    }
    if (attempt.kind === "ended")
      throw new RemoteSourceUnavailableError(
        source.name,
        "deadline",
        `${endedBy(signal ?? AbortSignal.abort())} came while connecting to ${server} (${CONNECTING[attempt.stage]}); ` +
          "the connection was closed. If it happens again, ask the server's operator whether it is overloaded or stuck",
      );
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

/** How far a connection cut by the pass's end had got. */
const CONNECTING: Readonly<Record<ConnectStage, string>> = {
  banner: "it had sent no SSH banner, or not finished the key exchange",
  login: "it had not yet taken the login",
  session: "logged in, but it had opened no SFTP session",
};

function sessionOf(
  client: SftpClient,
  sftp: SFTPWrapper,
  source: string,
  server: string,
  patienceMs: number,
  signal: AbortSignal | undefined,
): RemoteSession {
  let dead: RemoteSourceUnavailableError | undefined;
  const cut = (error: RemoteSourceUnavailableError): RemoteSourceUnavailableError => {
    dead = error;
    const ssh: unknown = Reflect.get(client, "client");
    if (ssh instanceof EventEmitter) (ssh as EventEmitter & { destroy?: () => void }).destroy?.();
    return error;
  };
  /**
   * Runs one operation until it is done, the pass's signal ends it, or the server delivers nothing for
   * `patienceMs` (`progress` is told of what each answer of a long one delivered: bytes, names; an answer
   * with none starts no new wait). Either end closes the connection and fails the operation as the
   * source's, naming the server, the step and how far it got, so the other sources and the drop folder
   * go on.
   */
  const watched = async <T>(
    what: string,
    run: (progress: (delivered: number) => void) => Promise<T>,
    unit = "bytes",
  ): Promise<T> => {
    if (dead !== undefined) throw dead;
    let timer: NodeJS.Timeout | undefined;
    let fail: (error: Error) => void = () => undefined;
    let delivered = 0;
    const ended = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const wait = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const unanswered = unansweredClause(server, patienceMs, what);
        fail(
          cut(
            new RemoteSourceUnavailableError(
              source,
              "transfer",
              `${unanswered}; the connection was closed. If it happens again, ask the server's operator ` +
                "whether it is overloaded or stuck",
              unanswered,
            ),
          ),
        );
      }, patienceMs);
    };
    const onEnd = () => {
      const got = delivered > 0 ? ` (${delivered} ${unit} in)` : "";
      fail(
        cut(
          new RemoteSourceUnavailableError(
            source,
            "deadline",
            `${endedBy(signal ?? AbortSignal.abort())} came while ${server} was asked to ${what}${got}; the ` +
              "connection was closed, and the next pass goes on from there (a download resumes where it " +
              "stopped while the file is unchanged). If it happens again, give the pass a longer --deadline, " +
              "or ask the server's operator why it is slow",
          ),
        ),
      );
    };
    if (signal?.aborted === true) {
      onEnd();
      return ended;
    }
    signal?.addEventListener("abort", onEnd, { once: true });
    wait();
    try {
      const running = run((n) => {
        if (n <= 0) return;
        delivered += n;
        wait();
      });
      running.catch(() => undefined); // when the wait wins, the operation's own failure comes after
      return await waitingFor(`SFTP source ${source}: ${server}, asked to ${what}`, () =>
        Promise.race([running, ended]),
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onEnd);
    }
  };
  const plain = requests(client, sftp);
  return {
    list: (dir) => watched(`list ${dir}`, (progress) => plain.list(dir, progress), "names"),
    stat: (path) => watched(`stat ${path}`, () => plain.stat(path)),
    download: (remote, local, size) =>
      watched(`read ${remote}`, (progress) => plain.download(remote, local, size, progress)),
    standing: (path, claimed) =>
      watched(`read ${path}`, (progress) => plain.standing(path, claimed, progress)),
    upload: (local, remote) =>
      watched(`write ${remote}`, (progress) => plain.upload(local, remote, progress)),
    rename: (from, to) => watched(`rename ${from}`, () => plain.rename(from, to)),
    remove: (path) => watched(`remove ${path}`, () => plain.remove(path)),
    mkdirp: (path) => watched(`create ${path}`, () => plain.mkdirp(path)),
    close: async () => {
      await client.end().catch(() => undefined);
    },
    signal,
  };
}
