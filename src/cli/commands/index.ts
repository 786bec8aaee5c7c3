import type { CommandFactory } from "../program.js";
import { agentnetCommand } from "./agentnet.js";
import { ingestCommand } from "./ingest.js";
import { pendingCommand } from "./pending.js";
import { runCommand } from "./run.js";
import { simulateCommand } from "./simulate.js";
import { startCommand } from "./start.js";
import { workerCommand } from "./worker.js";

/** Every command of the binary, in the order `--help` lists them. */
export const allCommands: readonly CommandFactory[] = [
  runCommand,
  startCommand,
  workerCommand,
  ingestCommand,
  pendingCommand("status", "Counts per state and per batch: waiting, retrying, failed."),
  pendingCommand("retry", "Re-enqueue invoices that ended failed, with their original keys."),
  pendingCommand("results", "Export results records to stdout as CSV or JSON lines."),
  simulateCommand,
  agentnetCommand,
];
