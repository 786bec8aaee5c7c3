import { cp, mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { tempDropDir } from "./drop.js";
import { startSftpServer, type SftpServer } from "./sftp-server.js";
import { cliEnv } from "./cli-env.js";

export const SFTP_API_KEY = "irs_live_e2e_key_0123456789";
const SAMPLES = join(import.meta.dirname, "../../samples");

/** The samples with no profile of their own: CSV, NDJSON and JSON, each with some bad rows. */
export const MIXED_SAMPLES = ["invoices-eu.csv", "invoices-us.ndjson", "invoices-apac.json"];

export interface SftpSetup {
  readonly server: SftpServer;
  readonly sim: SimulatorHandle;
  readonly dir: string;
  /** The remote folder polled (absolute, on the server). */
  readonly inbox: string;
  readonly env: Record<string, string>;
  /** sources.yaml with one source, acme; `source` overrides its fields (undefined removes one). */
  writeSources(extra?: string, source?: Record<string, string | undefined>): Promise<void>;
  remote(sub?: string): Promise<string[]>;
  uploadSamples(names?: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** A private sshd, a simulator, a drop folder and the environment of a `run` polling one SFTP source. */
export async function sftpSetup(): Promise<SftpSetup> {
  const server = await startSftpServer();
  const sim = await startSimulator({ apiKey: SFTP_API_KEY, seed: 7 });
  const drop = await tempDropDir();
  const inbox = join(server.root, "outgoing");
  await mkdir(inbox);
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: SFTP_API_KEY, name: "e2e", dropDir: drop.dir },
    {
      SETTLE_MS: "300",
      BACKOFF_BASE_MS: "50",
      BACKOFF_CAP_MS: "500",
      LOG_LEVEL: process.env["SFTP_TEST_LOG"] ?? "warn",
    },
  );
  const setup: SftpSetup = {
    server,
    sim,
    dir: drop.dir,
    inbox,
    env,
    writeSources: async (extra = "", source = {}) => {
      const fields: Record<string, string | undefined> = {
        name: "acme",
        url: server.url("/outgoing"),
        key_file: server.clientKeyFile,
        host_key: await server.hostFingerprint(),
        reports: "yes",
        ...source,
      };
      const lines = Object.entries(fields)
        .filter((e): e is [string, string] => e[1] !== undefined)
        .map(([k, v], i) => `${i === 0 ? "  - " : "    "}${k}: "${v}"`);
      await writeFile(join(drop.dir, "sources.yaml"), `sftp:\n${lines.join("\n")}\n${extra}`);
    },
    remote: async (sub = "") =>
      (await readdir(join(inbox, sub)).catch(() => [] as string[])).filter((n) => !n.startsWith(".")).sort(),
    uploadSamples: async (names = MIXED_SAMPLES) => {
      for (const name of names) await cp(join(SAMPLES, name), join(inbox, name));
    },
    close: async () => {
      await sim.close();
      await server.close();
      await drop.cleanup();
    },
  };
  return setup;
}
