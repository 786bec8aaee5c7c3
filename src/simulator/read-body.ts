import type { IncomingMessage } from "node:http";

/** The raw body bytes, or `too-large` once more than `limit` bytes arrived (the rest is not buffered). */
export type RawBody = Buffer | "too-large";

export function readBody(req: IncomingMessage, limit: number): Promise<RawBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (tooLarge) resolve("too-large");
      else resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on("error", reject);
  });
}
