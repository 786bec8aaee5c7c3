import type { ServerResponse } from "node:http";
import type { Problem } from "./problem.js";

export type Headers = Readonly<Record<string, string>>;

export function sendJson(res: ServerResponse, status: number, body: string, headers: Headers = {}): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendProblem(res: ServerResponse, problem: Problem, headers: Headers = {}): void {
  const body = JSON.stringify(problem);
  res.writeHead(problem.status, {
    "content-type": "application/problem+json",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}

/** `application/json`, optionally with parameters such as `; charset=utf-8` (case-insensitive). */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const semicolon = value.indexOf(";");
  const mediaType = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  if (mediaType !== "application/json") return false;
  if (semicolon === -1) return true;
  // Only a UTF-8 charset (or none) is JSON as RFC 8259 defines it.
  const charset = /(?:^|;)\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(value.slice(semicolon));
  return charset === null || charset[1]?.toLowerCase() === "utf-8" || charset[1]?.toLowerCase() === "utf8";
}
