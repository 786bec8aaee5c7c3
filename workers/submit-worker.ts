#!/usr/bin/env node
// Process entry for a submission worker (same as `invoice-relay worker`), configured from the environment;
// the command closes what it opened, so the process ends by itself.
import { workerCommand } from "../src/cli/commands/worker.js";
import { buildProgram, runProgram } from "../src/cli/program.js";

const io = { stdout: process.stdout, stderr: process.stderr };
const argv = [...process.argv.slice(0, 2), "worker", ...process.argv.slice(2)];
process.exitCode = await runProgram(buildProgram([workerCommand]), argv, io);
