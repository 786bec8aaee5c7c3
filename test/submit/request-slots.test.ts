import { describe, expect, it } from "vitest";
import type { Answer } from "../../src/submit/answer.js";
import { RequestHeldBackError } from "../../src/submit/errors/request-held-back-error.js";
import { RequestSlots, withRequestSlots } from "../../src/submit/request-slots.js";

/** Work that ends when told to; records the order in which it started. */
function gated() {
  const started: number[] = [];
  const finish = new Map<number, () => void>();
  const work = (id: number) => () => {
    started.push(id);
    return new Promise<number>((resolve) => {
      finish.set(id, () => {
        resolve(id);
      });
    });
  };
  const finishOne = (id: number): void => {
    finish.get(id)?.();
  };
  return { started, finish: finishOne, work };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("request slots", () => {
  it("when more requests wait than there are slots, then only that many run and the rest start in arrival order", async () => {
    const slots = new RequestSlots(2);
    const g = gated();
    const runs = [1, 2, 3, 4].map((id) => slots.run(g.work(id)));
    await turn();
    expect(g.started).toEqual([1, 2]);
    expect(slots.inUse).toBe(2);
    g.finish(2);
    await turn();
    expect(g.started).toEqual([1, 2, 3]);
    g.finish(1);
    g.finish(3);
    await turn();
    g.finish(4);
    expect(await Promise.all(runs)).toEqual([1, 2, 3, 4]);
    expect(slots.inUse).toBe(0);
  });

  it("when the limit is lowered, then requests in flight finish and no new one starts until below it", async () => {
    const slots = new RequestSlots(3);
    const g = gated();
    const runs = [1, 2, 3, 4].map((id) => slots.run(g.work(id)));
    await turn();
    slots.setLimit(1);
    g.finish(1);
    g.finish(2);
    await turn();
    expect(g.started).toEqual([1, 2, 3]);
    g.finish(3);
    await turn();
    expect(g.started).toEqual([1, 2, 3, 4]);
    g.finish(4);
    await Promise.all(runs);
  });

  it("when the limit is raised, then waiting requests start at once", async () => {
    const slots = new RequestSlots(1);
    const g = gated();
    const runs = [1, 2, 3].map((id) => slots.run(g.work(id)));
    await turn();
    expect(g.started).toEqual([1]);
    slots.setLimit(3);
    await turn();
    expect(g.started).toEqual([1, 2, 3]);
    for (const id of [1, 2, 3]) g.finish(id);
    await Promise.all(runs);
  });

  it("when submitting is held, then waiting and new requests are turned away unsent until the hold ends", async () => {
    let now = 1_000;
    const slots = new RequestSlots(1, () => now);
    const g = gated();
    const first = slots.run(g.work(1));
    const waiting = slots.run(g.work(2));
    await turn();
    slots.hold(500);
    await expect(waiting).rejects.toBeInstanceOf(RequestHeldBackError);
    await expect(slots.run(g.work(3))).rejects.toThrow(/held back/);
    g.finish(1);
    expect(await first).toBe(1);
    now = 1_500;
    const after = slots.run(g.work(4));
    await turn();
    g.finish(4);
    expect(await after).toBe(4);
    expect(g.started).toEqual([1, 4]);
    expect(slots.inUse).toBe(0);
  });

  it("when a request fails, then its slot is given back", async () => {
    const slots = new RequestSlots(1);
    await expect(slots.run(() => Promise.reject(new Error("socket hang up")))).rejects.toThrow("hang up");
    expect(slots.inUse).toBe(0);
    expect(await slots.run(() => Promise.resolve("next"))).toBe("next");
  });

  it("when a submitter is limited by slots, then a request is sent only once a slot is free", async () => {
    const slots = new RequestSlots(1);
    const events: string[] = [];
    const answer: Answer = { kind: "response", status: 201, headers: {}, body: "{}" };
    const submitter = withRequestSlots(
      {
        submit: async (key) => {
          events.push(`send ${key}`);
          await turn();
          events.push(`answer ${key}`);
          return answer;
        },
        close: () => Promise.resolve(),
      },
      slots,
    );
    const answers = await Promise.all([submitter.submit("k1", "{}"), submitter.submit("k2", "{}")]);
    expect(answers).toEqual([answer, answer]);
    expect(events).toEqual(["send k1", "answer k1", "send k2", "answer k2"]);
  });
});
