import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { fieldProblems } from "./field-problems.js";
import { sendJson, sendProblem } from "./http-reply.js";
import { problems } from "./problem.js";
import { readJsonRequest } from "./json-request.js";
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
  const parsed = await readJsonRequest(req, res, sim.options.maxBodyBytes);
  if (parsed === undefined) return;
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
