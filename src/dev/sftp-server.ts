// A private sshd for tests and `npm run bench:sftp` (Debian's openssh-server; .ci/run installs it).
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DevServerError } from "./errors/dev-server-error.js";
import { freePort } from "./free-port.js";

const run = promisify(execFile);

/** Debian's openssh-server (.ci/run installs it). */
export const SSHD = "/usr/sbin/sshd";

/**
 * A private OpenSSH server on a free loopback port, serving SFTP only; a test keeps its remote tree under
 * `root`, a temporary folder of its own (a chroot would need every folder above it to be root's and not
 * writable by others, which /tmp is not). It keeps its host key across `stop()`/`start()` (a restart), and can be given a
 * new one (`newHostKey()`) to play a server whose key changed.
 */
export interface SftpServer {
  readonly port: number;
  /** The test's remote tree: remote paths are absolute paths under it. */
  readonly root: string;
  readonly user: string;
  /** The client's private key (OpenSSH format, no passphrase) and one the server does not know. */
  readonly clientKeyFile: string;
  readonly strangerKeyFile: string;
  /** The host key's `SHA256:` fingerprint (of its ed25519 key, or `type`), and a known_hosts file naming the ed25519 key for 127.0.0.1:port. */
  hostFingerprint(type?: HostKeyType): Promise<string>;
  readonly knownHostsFile: string;
  /** The known_hosts line of its key of `type`: `[127.0.0.1]:port ssh-rsa AAAA…`. */
  knownHostsLine(type: HostKeyType): Promise<string>;
  url(path: string): string;
  start(): Promise<void>;
  stop(): Promise<void>;
  newHostKey(): Promise<void>;
  close(): Promise<void>;
}

export type HostKeyType = "ed25519" | "rsa";

/** `rsa`: an RSA host key beside the ed25519 one, as many servers have (OpenSSH prefers ed25519). */
export async function startSftpServer(options: { readonly rsa?: boolean } = {}): Promise<SftpServer> {
  const dir = await mkdtemp(join(tmpdir(), "relay-sshd-"));
  const root = join(dir, "root");
  await mkdir(root);
  // sshd started by root wants its privilege separation directory; as another user it runs without.
  if (process.getuid?.() === 0) await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
  const hostKey = join(dir, "host_ed25519");
  const clientKeyFile = join(dir, "client_ed25519");
  const strangerKeyFile = join(dir, "stranger_ed25519");
  const knownHostsFile = join(dir, "known_hosts");
  for (const key of [hostKey, clientKeyFile, strangerKeyFile])
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
  const rsaHostKey = join(dir, "host_rsa");
  if (options.rsa === true)
    await run("ssh-keygen", ["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", rsaHostKey]);
  const hostKeyFile = (type: HostKeyType) => (type === "rsa" ? rsaHostKey : hostKey);
  await writeFile(join(dir, "authorized_keys"), await readFile(`${clientKeyFile}.pub`));
  const port = await freePort();
  // The user running the tests logs in (root needs PermitRootLogin, granted below).
  const user = userInfo().username;
  const config = join(dir, "sshd_config");
  await writeFile(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKey}`,
      ...(options.rsa === true ? [`HostKey ${rsaHostKey}`] : []),
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "PermitRootLogin yes",
      "PasswordAuthentication yes",
      "KbdInteractiveAuthentication no",
      "StrictModes no",
      "UsePAM no",
      "Subsystem sftp internal-sftp",
      "ForceCommand internal-sftp",
      "AllowTcpForwarding no",
      "X11Forwarding no",
      "LogLevel ERROR",
      "",
    ].join("\n"),
  );
  const writeKnownHosts = async () => {
    const pub = (await readFile(`${hostKey}.pub`, "utf8")).trim().split(" ");
    await writeFile(knownHostsFile, `[127.0.0.1]:${port} ${pub[0] ?? ""} ${pub[1] ?? ""}\n`);
  };
  await writeKnownHosts();
  let child: ChildProcess | undefined;
  let output = "";
  const server: SftpServer = {
    port,
    root,
    user,
    clientKeyFile,
    strangerKeyFile,
    knownHostsFile,
    url: (path) => `sftp://${user}@127.0.0.1:${port}${join(root, path)}`,
    knownHostsLine: async (type) => {
      const pub = (await readFile(`${hostKeyFile(type)}.pub`, "utf8")).trim().split(" ");
      return `[127.0.0.1]:${port} ${pub[0] ?? ""} ${pub[1] ?? ""}`;
    },
    hostFingerprint: async (type = "ed25519") => {
      const { stdout } = await run("ssh-keygen", ["-l", "-E", "sha256", "-f", `${hostKeyFile(type)}.pub`]);
      const found = /SHA256:[A-Za-z0-9+/]+/.exec(stdout);
      if (found === null) throw new DevServerError(`no fingerprint in ${stdout}`);
      return found[0];
    },
    start: async () => {
      child = spawn(SSHD, ["-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
      child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
      await waitListening(
        port,
        () => child?.exitCode ?? null,
        () => output,
      );
    },
    stop: async () => {
      const proc = child;
      child = undefined;
      if (proc === undefined || proc.exitCode !== null) return;
      // sshd's own children (the open sessions) outlive it: cut them too, by their ids, as a crash does.
      const sessions = await childrenOf(proc.pid);
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
      for (const pid of sessions) killQuietly(pid);
    },
    newHostKey: async () => {
      await rm(hostKey, { force: true });
      await rm(`${hostKey}.pub`, { force: true });
      await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
    },
    close: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** Whether this machine can run the private sshd at all. */
export async function sshdAvailable(): Promise<boolean> {
  try {
    await access(SSHD);
    return true;
  } catch {
    return false;
  }
}

async function childrenOf(pid: number | undefined): Promise<number[]> {
  if (pid === undefined) return [];
  const { stdout } = await run("ps", ["-o", "pid=", "--ppid", String(pid)]).catch(() => ({ stdout: "" }));
  return stdout
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    // gone already
  }
}

async function waitListening(
  port: number,
  exitCode: () => number | null,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (exitCode() !== null) throw new DevServerError(`sshd exited at start: ${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => {
        resolve(false);
      });
    });
    if (up) return;
    if (Date.now() > deadline) throw new DevServerError(`sshd did not listen on ${port}: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
