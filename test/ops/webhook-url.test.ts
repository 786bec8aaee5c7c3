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

  it("when it carries a password in its userinfo, then it is shown without it and the logger masks it", () => {
    const url = "https://relay:h00k-pw%21@hooks.example.com/in/abc";
    expect(safeWebhookUrl(url)).toBe("https://hooks.example.com/[redacted]");
    expect(webhookSecrets(url)).toEqual(expect.arrayContaining(["h00k-pw%21", "h00k-pw!"]));
  });
});
