import { describe, expect, it } from "vitest";
import { judgedKey, KeyInUse } from "../../src/submit/key-in-use.js";

const OLD = "irs_live_old_key_0123456789";
const NEW = "irs_live_new_key_9876543210";

/** A key file whose content the test sets; `refresh` reads it as it is now. */
function keyFile(initial: string) {
  const file = { value: initial };
  return {
    file,
    source: { current: () => file.value, refresh: () => Promise.resolve(file.value) },
  };
}

describe("which API key a request carries", () => {
  it("when the file's new value is refused while the old key worked, then the old key is tried and stays in use, said once for that value", async () => {
    const { file, source } = keyFile(OLD);
    const kept: number[] = [];
    const keys = new KeyInUse(source, (status) => kept.push(status));
    keys.accepted(OLD);
    file.value = NEW;

    expect(keys.current()).toBe(NEW);
    expect(await keys.refused(NEW, 401)).toBe(OLD);
    expect(await keys.refused(NEW, 401)).toBe(OLD);
    expect(keys.current()).toBe(OLD);
    expect(kept).toEqual([401]);
  });

  it("when the service then refuses the old key too, then the file's value is tried again, and used once accepted", async () => {
    const { file, source } = keyFile(OLD);
    const keys = new KeyInUse(source);
    keys.accepted(OLD);
    file.value = NEW;
    await keys.refused(NEW, 403);

    expect(await keys.refused(OLD, 401)).toBe(NEW);
    keys.accepted(NEW);
    expect(keys.current()).toBe(NEW);
  });

  it("when no key was accepted before, or the accepted key is refused with nothing new in the file, then there is none to try", async () => {
    const never = new KeyInUse(keyFile(OLD).source);
    expect(await never.refused(OLD, 401)).toBeUndefined();

    const revoked = new KeyInUse(keyFile(OLD).source);
    revoked.accepted(OLD);
    expect(await revoked.refused(OLD, 401)).toBeUndefined();
  });

  it("when an answer comes before the service looks at the key (429, 5xx, a proxy's 407), then it says nothing of the key", () => {
    expect([201, 409, 422].map(judgedKey)).toEqual(["accepted", "accepted", "accepted"]);
    expect([401, 403].map(judgedKey)).toEqual(["refused", "refused"]);
    expect([407, 408, 429, 500, 503].map(judgedKey)).toEqual(Array(5).fill("unknown"));
  });
});
