import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";

const packageSchema = z.object({ name: z.literal("invoice-relay"), version: z.string().min(1) });

/**
 * The version of this installation, from its package.json: the nearest one above `from`, which is the
 * project's whether the code runs from src/ (tests) or dist/src/ (the binary, npx, the image).
 */
export function packageVersion(from: string = import.meta.dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const path = join(dir, "package.json");
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || dirname(dir) === dir) throw error;
      continue;
    }
    return packageSchema.parse(JSON.parse(text)).version;
  }
}
