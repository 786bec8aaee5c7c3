import type { CommandFactory } from "../program.js";
import { agentnetCommand } from "./agentnet.js";
import { checkCommand } from "./check.js";
import { consoleCommand } from "./console.js";
import { dbCommand } from "./db.js";
import { ingestCommand } from "./ingest.js";
import { resultsCommand } from "./results.js";
import { retryCommand } from "./retry.js";
import { runCommand } from "./run.js";
import { simulateCommand } from "./simulate.js";
import { statusCommand } from "./status.js";
import { startCommand } from "./start.js";
import { workerCommand } from "./worker.js";

/** Every command of the binary, in the order `--help` lists them. */
export const allCommands: readonly CommandFactory[] = [
  runCommand,
  startCommand,
  workerCommand,
  ingestCommand,
  checkCommand,
  statusCommand,
  retryCommand,
  resultsCommand,
  consoleCommand,
  dbCommand,
  simulateCommand,
  agentnetCommand,
];
