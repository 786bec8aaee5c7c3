import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { fieldProblems } from "./field-problems.js";
import { isJsonContentType, sendJson, sendProblem } from "./http-reply.js";
import { parseJson } from "./invoice-request.js";
import { problems } from "./problem.js";
import { readBody } from "./read-body.js";
import type { SimulatorState } from "./simulator-state.js";

const tokenRequestSchema = z.strictObject({
  developer_name: z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
  email: z.email("must be an e-mail address such as dev@example.com"),
});

export const DEVELOPER_KEY_NOTE =
  "Store this API key securely: it is displayed only once and cannot be retrieved again.";

/**
 * `POST /api/v1/auth/token` (spec part B): issues a developer key. No Authorization is asked for: the spec
 * shows the request without one. Only the key's sha256 is kept.
 */
export async function handleToken(
  req: IncomingMessage,
  res: ServerResponse,
  sim: SimulatorState,
): Promise<void> {
  const body = await readBody(req, sim.options.maxBodyBytes);
  const contentType = req.headers["content-type"];
  if (!isJsonContentType(contentType)) {
    sendProblem(res, problems.unsupportedMediaType(contentType));
    return;
  }
  const parsed = parseJson(body, sim.options.maxBodyBytes, 400);
  if (!parsed.ok) {
    sendProblem(res, parsed.reply.problem);
    return;
  }
  const result = tokenRequestSchema.safeParse(parsed.value);
  if (!result.success) {
    sendProblem(res, problems.invalidBody(fieldProblems(result.error, parsed.value), "token request"));
    return;
  }
  const issued = sim.developerKeys.issue(result.data.developer_name);
  sendJson(
    res,
    201,
    JSON.stringify({
      developer_id: issued.developerId,
      api_key: issued.apiKey,
      key_prefix: issued.keyPrefix,
      note: DEVELOPER_KEY_NOTE,
    }),
    { "cache-control": "no-store" },
  );
}
