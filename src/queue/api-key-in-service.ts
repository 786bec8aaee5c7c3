import type { Queue } from "bullmq";
import { apiKeySetting } from "../config/api-key-setting.js";
import type { SubmitConfig } from "../config/load.js";
import { liveSecret, type LiveSecret } from "../config/live-secret.js";
import type { RedisClient } from "../ledger/redis-client.js";
import type { Logger } from "../log/logger.js";
import { loggedSecretEvents } from "../log/secret-mask.js";
import { clearApiKeyRefusal, recordApiKeyRefused } from "./api-key-refusal.js";

/**
 * The API key of a submission process, as it changes and as the service judges it: read again from
 * INVOICE_API_KEY_FILE (a new value resumes submission paused for a refused key), each refusal recorded
 * and said once until then, and a new value the service refuses while the old key works said once.
 */
export interface ApiKeyInService {
  readonly key: LiveSecret;
  /** The service refuses the file's value and the old key stays in use (src/submit/key-in-use.ts). */
  readonly kept: (httpStatus: number) => void;
  /** The service refused the key for good: submission pauses; whether this process recorded it first. */
  readonly refused: (httpStatus: number, detail: string) => Promise<boolean>;
}

export function apiKeyInService(
  config: SubmitConfig,
  logger: Logger,
  redis: RedisClient,
  queue: Queue,
  pollMs?: number,
): ApiKeyInService {
  const logged = loggedSecretEvents(logger);
  // A refusal is said once, not for each request it stops, until a new key in the file resumes submission.
  let refusalSaid = false;
  const key = liveSecret(
    config,
    "invoiceApiKey",
    {
      ...logged,
      // A new key in the file gives the service another chance, as a new process does.
      changed: (value, variable, file) => {
        logged.changed(value, variable, file);
        clearApiKeyRefusal(redis, queue, config.queuePrefix).then(
          (cleared) => {
            refusalSaid = false;
            if (cleared)
              logger.info(`the API key was refused earlier; resuming submission with the new ${variable}`);
          },
          (error: unknown) => {
            logger.warn({ err: error }, "could not resume submission with the new key; restart the process");
          },
        );
      },
    },
    pollMs,
  );
  const file = config.secretFiles.invoiceApiKey;
  return {
    key,
    kept: (httpStatus) => {
      logger.warn(
        { variable: "INVOICE_API_KEY_FILE", file, httpStatus },
        `the invoice service refuses the key INVOICE_API_KEY_FILE (${file ?? ""}) holds now ` +
          `(HTTP ${httpStatus}); still sending with the key it accepted before. Revoke the old key only ` +
          "once the service takes the new one, and write the file whole (rename a temporary file over it)",
      );
    },
    refused: (httpStatus, detail) => {
      if (!refusalSaid)
        logger.error(
          { httpStatus, detail },
          `the invoice service refused the API key: submission paused; fix ${apiKeySetting(config)}`,
        );
      refusalSaid = true;
      return recordApiKeyRefused(redis, queue, config.queuePrefix, {
        httpStatus,
        detail,
        at: Date.now(),
        setting: apiKeySetting(config),
      });
    },
  };
}
