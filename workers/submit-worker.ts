#!/usr/bin/env node
// Process entry for a submission worker (same as `invoice-relay worker`), configured from the environment.
import { workerCommand } from "../src/cli/commands/worker.js";
import { buildProgram, runProgram } from "../src/cli/program.js";

const io = { stdout: process.stdout, stderr: process.stderr };
const argv = [...process.argv.slice(0, 2), "worker", ...process.argv.slice(2)];
const code = await runProgram(buildProgram([workerCommand]), argv, io);
process.exitCode = code;
setTimeout(() => process.exit(code), 3000).unref();
