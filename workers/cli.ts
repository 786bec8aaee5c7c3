#!/usr/bin/env node
import { allCommands } from "../src/cli/commands/index.js";
import { buildProgram, runProgram } from "../src/cli/program.js";

const code = await runProgram(buildProgram(allCommands), process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;
