#!/usr/bin/env node
import { commandsFor } from "../src/cli/commands/index.js";
import { buildProgram, runProgram } from "../src/cli/program.js";
import { processSecrets } from "../src/cli/runtime.js";

/**
 * After the command ended, how long what it left open may still hold the process. Every command closes
 * what it opened (src/lifecycle/scope.ts) and the process ends by itself; but a close that needs Redis
 * (BullMQ's worker ends its lock timers only once its connections say they ended) never ends while Redis
 * is away, and a stop must not wait for Redis. Long enough for the last log lines to be written.
 */
const LEFT_OPEN_MS = 2000;

process.exitCode = await runProgram(buildProgram(await commandsFor(process.argv)), process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  secrets: processSecrets(process.env, process.argv),
});
setTimeout(() => {
  process.stderr.write(
    `invoice-relay: a connection was still closing ${LEFT_OPEN_MS} ms after the command ended (Redis away?); exiting\n`,
  );
  process.exit();
}, LEFT_OPEN_MS).unref();
