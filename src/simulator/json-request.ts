import type { IncomingMessage, ServerResponse } from "node:http";
import { isJsonContentType, sendProblem } from "./http-reply.js";
import { parseJson } from "./invoice-request.js";
import { problems } from "./problem.js";
import { readBody } from "./read-body.js";

/**
 * Reads a JSON request body of the control and token routes: 415 without application/json, 413 when too
 * large, 400 when not JSON. Returns the parsed value, or undefined once the problem has been answered.
 */
export async function readJsonRequest(
  req: IncomingMessage,
  res: ServerResponse,
  maxBodyBytes: number,
): Promise<{ readonly value: unknown } | undefined> {
  const body = await readBody(req, maxBodyBytes);
  const contentType = req.headers["content-type"];
  if (!isJsonContentType(contentType)) {
    sendProblem(res, problems.unsupportedMediaType(contentType));
    return undefined;
  }
  const parsed = parseJson(body, maxBodyBytes, 400);
  if (!parsed.ok) {
    sendProblem(res, parsed.reply.problem);
    return undefined;
  }
  return { value: parsed.value };
}
