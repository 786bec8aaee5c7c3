import { describe, expect, it } from "vitest";
import { safeWebhookUrl, webhookSecrets } from "../../src/ops/notify/webhook-url.js";

const SLACK = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX";

describe("the webhook URL as a secret", () => {
  it("when it is shown, then only its origin is", () => {
    expect(safeWebhookUrl(SLACK)).toBe("https://hooks.slack.com/[redacted]");
  });

  it("when a logger masks it, then the whole URL and its path are masked", () => {
    expect(webhookSecrets(SLACK)).toEqual(
      expect.arrayContaining([SLACK, "/services/T000/B000/XXXXXXXXXXXXXXXX"]),
    );
    expect(webhookSecrets(undefined)).toEqual([]);
  });
});
