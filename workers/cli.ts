#!/usr/bin/env node
import { commandsFor } from "../src/cli/commands/index.js";
import { buildProgram, runProgram } from "../src/cli/program.js";
import { processSecrets } from "../src/cli/runtime.js";

process.exitCode = await runProgram(buildProgram(await commandsFor(process.argv)), process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  secrets: processSecrets(process.env, process.argv),
});
