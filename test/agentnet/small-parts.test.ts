import { describe, expect, it } from "vitest";
import { defaultCredentialsPath } from "../../src/agentnet/credentials-path.js";
import { printable, redactCredentials } from "../../src/agentnet/printable.js";

describe("defaultCredentialsPath", () => {
  it("when XDG_CONFIG_HOME is an absolute path, then the file lives under it", () => {
    expect(defaultCredentialsPath({ XDG_CONFIG_HOME: "/cfg" }, "/home/u")).toBe(
      "/cfg/invoice-relay/agentnet-credentials.json",
    );
  });

  it.each([{}, { XDG_CONFIG_HOME: "" }, { XDG_CONFIG_HOME: "relative/cfg" }])(
    "when XDG_CONFIG_HOME is %j, then the file lives under ~/.config",
    (env) => {
      expect(defaultCredentialsPath(env, "/home/u")).toBe(
        "/home/u/.config/invoice-relay/agentnet-credentials.json",
      );
    },
  );
});

describe("printable and redactCredentials", () => {
  it("when the text holds a terminal escape sequence, then it is shown escaped on one line", () => {
    expect(printable("ok\u001b[2J\nnext")).toBe("ok\\u001b[2J\\u000anext");
  });

  it("when the text quotes a developer key or agent token, then their random part is masked", () => {
    expect(redactCredentials("key amn_dev_9fKq2LmX7vB0, token x_agt_Zz99YY")).toBe(
      "key amn_dev_[redacted], token x_agt_[redacted]",
    );
  });

  it("when the text is long, then it is cut with an ellipsis", () => {
    expect(printable("a".repeat(20), 5)).toBe("aaaaa…");
  });
});
