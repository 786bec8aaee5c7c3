import { EventEmitter } from "node:events";
import type { ServerHostKeyAlgorithm, SFTPWrapper } from "ssh2";
import type SftpClient from "ssh2-sftp-client";
import type { Credentials } from "./credentials.js";
import { fingerprintOf, keyTypeOf, type AcceptedKeys } from "./host-key.js";
import type { RemoteSource } from "./remote-source.js";

/** ssh2's stage of a failure (`level`), for the one stage it has none for: logged in, no SFTP session. */
export const NO_SESSION = "sftp-session";

/**
 * How long a request to the server may go unanswered before the connection is taken for dead, unless
 * the source sets `timeout_seconds`: the patience of the handshake, of the SFTP session's opening, of
 * each request, and of the keepalives (KEEPALIVES unanswered, spread over it). A server whose connection
 * stays up (it answers the keepalives) but that never answers a read, a listing or a rename would
 * otherwise hold the pass, and `run`, for ever. A transfer that goes on, however slowly, is never cut:
 * each answer starts the wait again. 15 s: OpenSSH's keepalive default patience (3 × 5 s) and well
 * beyond a round trip across the world.
 */
export const UNANSWERED_MS = 15_000;
/** Keepalives left unanswered before the connection is dead: OpenSSH's ServerAliveCountMax default. */
const KEEPALIVES = 3;

/** The source's patience (`timeout_seconds`), UNANSWERED_MS unless set. */
export const patienceOf = (source: RemoteSource): number => source.unansweredMs ?? UNANSWERED_MS;

/** One connection's outcome: open, a host key not pinned or revoked, or a failure at ssh2's stage `level`. */
export type Attempt =
  | { readonly kind: "open"; readonly client: SftpClient; readonly sftp: SFTPWrapper; readonly type: string }
  | { readonly kind: "not-pinned"; readonly fingerprint: string; readonly type: string }
  | { readonly kind: "revoked"; readonly fingerprint: string; readonly where: string }
  | { readonly kind: "failed"; readonly code: unknown; readonly level: unknown }
  | { readonly kind: "ended"; readonly stage: ConnectStage };

/**
 * How far a connection had got when the pass's end cut it: no banner or key exchange yet, the login not
 * yet taken, or logged in with no SFTP session.
 */
export type ConnectStage = "banner" | "login" | "session";

/**
 * One connection to the source's server offering `algorithms`, trusting only the accepted keys; never
 * throws: what happened is the Attempt.
 */
export async function connectOnce(
  source: RemoteSource,
  login: Credentials,
  algorithms: readonly ServerHostKeyAlgorithm[],
  accepted: AcceptedKeys,
  /** Ends the attempt at once (a pass's deadline, a signal to stop), whatever stage it is at. */
  signal?: AbortSignal,
): Promise<Attempt> {
  // The library's default listeners print to the console; a dropped connection is seen instead by the
  // operation in flight, which fails and is retried.
  const quiet = () => undefined;
  const { SftpClient: SftpClientClass } = await import("./ssh-stack.js");
  const client = new SftpClientClass(`invoice-relay:${source.name}`, {
    error: quiet,
    end: quiet,
    close: quiet,
  });
  // ssh2-sftp-client rewords the connection's errors; ssh2's own carry the socket's code and the stage
  // that failed (`level`).
  let failure: { code: unknown; level: unknown } | undefined;
  const ssh: unknown = Reflect.get(client, "client");
  if (ssh instanceof EventEmitter)
    ssh.prependListener("error", (error: unknown) => {
      const e = error as { code?: unknown; level?: unknown } | undefined;
      failure ??= { code: e?.code, level: e?.level };
    });
  let key: Buffer | undefined;
  // ssh2-sftp-client waits for the SFTP channel without a limit: a server that takes the login but never
  // answers the session would hold the pass for ever. Once logged in, it answers within its patience.
  let noSession: NodeJS.Timeout | undefined;
  const unopened = new Promise<never>((_, reject) => {
    if (ssh instanceof EventEmitter)
      ssh.once("ready", () => {
        noSession = setTimeout(() => {
          failure = { code: undefined, level: NO_SESSION };
          (ssh as EventEmitter & { destroy?: () => void }).destroy?.();
          reject(new Error("no SFTP session"));
        }, patienceOf(source));
      });
  });
  unopened.catch(() => undefined);
  // ssh2 waits `readyTimeout` for a banner and a handshake; the pass's end comes first when it is sooner.
  let stage: ConnectStage = "banner";
  if (ssh instanceof EventEmitter) {
    ssh.once("handshake", () => {
      stage = "login";
    });
    ssh.once("ready", () => {
      stage = "session";
    });
  }
  const ended = new Promise<never>((_, reject) => {
    const end = () => {
      (ssh as (EventEmitter & { destroy?: () => void }) | undefined)?.destroy?.();
      reject(new Error("ended"));
    };
    if (signal?.aborted === true) end();
    else signal?.addEventListener("abort", end, { once: true });
  });
  ended.catch(() => undefined);
  try {
    const connecting = client.connect({
      host: source.host,
      port: source.port,
      username: source.user,
      ...login,
      readyTimeout: patienceOf(source),
      keepaliveInterval: patienceOf(source) / KEEPALIVES,
      keepaliveCountMax: KEEPALIVES,
      retries: 0,
      algorithms: { serverHostKey: [...algorithms] },
      hostVerifier: (offered: Buffer) => {
        key = offered;
        const fingerprint = fingerprintOf(offered);
        return accepted.fingerprints.has(fingerprint) && !accepted.revoked.has(fingerprint);
      },
    });
    connecting.catch(() => undefined); // when the wait wins, the connection's own failure comes after
    const sftp = await Promise.race([connecting, unopened, ended]).finally(() => {
      clearTimeout(noSession);
    });
    // Each request waits for its answer: Nagle's algorithm would hold a small request back until the
    // last answer is acknowledged (up to a delayed ACK, 40 ms), each round trip of a listing or a check.
    (ssh as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true);
    return { kind: "open", client, sftp, type: key === undefined ? "" : keyTypeOf(key) };
  } catch {
    await client.end().catch(() => undefined);
    if (signal?.aborted === true) return { kind: "ended", stage };
    if (failure?.level === NO_SESSION) return { kind: "failed", ...failure };
    if (key !== undefined) {
      const fingerprint = fingerprintOf(key);
      const where = accepted.revoked.get(fingerprint);
      if (where !== undefined) return { kind: "revoked", fingerprint, where };
      if (!accepted.fingerprints.has(fingerprint))
        return { kind: "not-pinned", fingerprint, type: keyTypeOf(key) };
    }
    return { kind: "failed", code: failure?.code, level: failure?.level };
  }
}
