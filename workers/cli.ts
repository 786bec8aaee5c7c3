#!/usr/bin/env node
import { allCommands } from "../src/cli/commands/index.js";
import { buildProgram, runProgram } from "../src/cli/program.js";
import { processSecrets } from "../src/cli/runtime.js";

const code = await runProgram(buildProgram(allCommands), process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  secrets: processSecrets(process.env, process.argv),
});
process.exitCode = code;
// Every command closes what it opened; should a library still hold a handle, the process must not
// outlive its command (an operator's shell or a cron job would wait forever).
setTimeout(() => process.exit(code), 3000).unref();
