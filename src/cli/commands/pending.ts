import { Command } from "commander";
import { ExitCode } from "../exit-codes.js";

/** A command listed in --help whose implementation is not part of this build yet. */
export function pendingCommand(name: string, description: string) {
  return (): Command =>
    new Command(name)
      .description(`${description} (not available in this build yet)`)
      .allowUnknownOption()
      .action(() => {
        process.stderr.write(`invoice-relay ${name}: not available in this build yet\n`);
        process.exitCode = ExitCode.CouldNotFinish;
      });
}
