#!/usr/bin/env node
import { commandsFor } from "../src/cli/commands/index.js";
import { buildProgram, runProgram } from "../src/cli/program.js";
import { processSecrets } from "../src/cli/runtime.js";
import { endCommand } from "../src/cli/hard-stop.js";

const code = await runProgram(buildProgram(await commandsFor(process.argv)), process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  secrets: processSecrets(process.env, process.argv),
});
// A file-system call a pass could not wait for (a hung share) would keep the process alive: named, ended.
endCommand(code, process.stderr);
