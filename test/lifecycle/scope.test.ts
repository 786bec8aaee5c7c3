import { describe, expect, it } from "vitest";
import { withScope } from "../../src/lifecycle/scope.js";

describe("a command's scope", () => {
  it("when the body returns, then what it deferred is closed in reverse order", async () => {
    const closed: string[] = [];
    const value = await withScope(
      () => undefined,
      (scope) => {
        scope.defer(() => closed.push("first"));
        scope.defer(async () => {
          await Promise.resolve();
          closed.push("second");
        });
        return Promise.resolve("done");
      },
    );
    expect(value).toBe("done");
    expect(closed).toEqual(["second", "first"]);
  });

  it("when the body and a closer both fail, then the body's error propagates, the closer's is reported and the others still close", async () => {
    const closed: string[] = [];
    const reported: unknown[] = [];
    const opening = withScope(
      (error) => reported.push(error),
      (scope) => {
        scope.defer(() => closed.push("exporter"));
        scope.defer(() => {
          throw new Error("close failed");
        });
        return Promise.reject(new Error("port in use"));
      },
    );
    await expect(opening).rejects.toThrow("port in use");
    expect(closed).toEqual(["exporter"]);
    expect(reported).toEqual([new Error("close failed")]);
  });

  it("when the scope closes, then its signal handlers are removed", async () => {
    const before = process.listenerCount("SIGUSR2");
    await withScope(
      () => undefined,
      (scope) => {
        scope.onSignals(["SIGUSR2"], () => undefined);
        expect(process.listenerCount("SIGUSR2")).toBe(before + 1);
        return Promise.resolve();
      },
    );
    expect(process.listenerCount("SIGUSR2")).toBe(before);
  });
});
