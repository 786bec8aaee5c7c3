import type { CommandFactory } from "../program.js";

/**
 * Every command of the binary, in the order `--help` lists them, each loaded only when asked for: a
 * command imports what it needs (BullMQ, undici, fastify, pg, ssh2…), and loading all of them would
 * double the start-up time of the quick ones (`status`, `check`).
 */
export const commandLoaders: readonly {
  readonly name: string;
  readonly load: () => Promise<CommandFactory>;
}[] = [
  { name: "run", load: async () => (await import("./run.js")).runCommand },
  { name: "start", load: async () => (await import("./start.js")).startCommand },
  { name: "worker", load: async () => (await import("./worker.js")).workerCommand },
  { name: "ingest", load: async () => (await import("./ingest.js")).ingestCommand },
  { name: "check", load: async () => (await import("./check.js")).checkCommand },
  { name: "status", load: async () => (await import("./status.js")).statusCommand },
  { name: "retry", load: async () => (await import("./retry.js")).retryCommand },
  { name: "results", load: async () => (await import("./results.js")).resultsCommand },
  { name: "console", load: async () => (await import("./console.js")).consoleCommand },
  { name: "db", load: async () => (await import("./db.js")).dbCommand },
  { name: "simulate", load: async () => (await import("./simulate.js")).simulateCommand },
  { name: "agentnet", load: async () => (await import("./agentnet.js")).agentnetCommand },
];

/**
 * The commands `argv` needs: the one it names, none for `--version`, or every one (for `--help`, or a name
 * that is no command, which commander answers with the list).
 */
export async function commandsFor(argv: readonly string[]): Promise<CommandFactory[]> {
  const named = commandLoaders.find((c) => c.name === argv[2]);
  if (named !== undefined) return [await named.load()];
  if (argv.length === 3 && (argv[2] === "--version" || argv[2] === "-V")) return [];
  return Promise.all(commandLoaders.map((c) => c.load()));
}
