// `npm run demo -- --sftp`: the demo's files wait on a private SFTP server instead of in the drop folder,
// and the run pulls them from it and puts each batch's results back (docs/sftp.md).
import { cp, mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Scope } from "../lifecycle/scope.js";
import { DevServerError } from "./errors/dev-server-error.js";
import { SSHD, sshdAvailable, startSftpServer } from "./sftp-server.js";

/** The remote folder the demo's source polls, under the server's root. */
const REMOTE_FOLDER = "outgoing";

export interface DemoSftp {
  /** The `sftp:` section of sources.yaml naming the server, its pinned host key and the client's key. */
  readonly sourcesYaml: string;
  /** One line saying where the files wait. */
  readonly where: string;
  /** What the server holds after the run: its folders and their files. */
  remoteTree(): Promise<string[]>;
}

/**
 * Starts a private sshd (src/dev/sftp-server.ts) in `scope`, with `files` of `samples` waiting in its
 * `outgoing/`; DevServerError, saying what to install, when this machine has no sshd.
 */
export async function startDemoSftp(
  scope: Scope,
  samples: string,
  files: readonly string[],
): Promise<DemoSftp> {
  if (!(await sshdAvailable()))
    throw new DevServerError(
      `npm run demo -- --sftp needs OpenSSH's server at ${SSHD} ` +
        "(Debian/Ubuntu: apt-get install openssh-server); without --sftp the demo needs none",
    );
  const server = await startSftpServer();
  scope.defer(() => server.close());
  const folder = join(server.root, REMOTE_FOLDER);
  await mkdir(folder);
  for (const name of files) await cp(join(samples, name), join(folder, name));
  const source = [
    "sftp:",
    "  - name: demo",
    `    url: "${server.url(`/${REMOTE_FOLDER}`)}"`,
    `    key_file: "${server.clientKeyFile}"`,
    `    host_key: "${await server.hostFingerprint()}"`,
    "    reports: yes",
    "",
  ].join("\n");
  return {
    sourcesYaml: source,
    where: `SFTP server ${server.user}@127.0.0.1:${server.port} (a private sshd), folder ${folder}`,
    remoteTree: async () => {
      const lines: string[] = [];
      for (const entry of (await readdir(folder, { withFileTypes: true })).sort((a, b) =>
        a.name.localeCompare(b.name),
      )) {
        if (!entry.isDirectory()) {
          lines.push(entry.name);
          continue;
        }
        const inside = (await readdir(join(folder, entry.name))).filter((n) => !n.startsWith(".")).sort();
        lines.push(`${entry.name}/ (${inside.length} file(s))`, ...inside.map((n) => `  ${n}`));
      }
      return lines;
    },
  };
}
