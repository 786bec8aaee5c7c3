import { describe, expect, it } from "vitest";
import { InFlight, mapInFlight } from "../../src/ingest/files-in-flight.js";
import { RegistrationOrder } from "../../src/ingest/registration-order.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("files in flight", () => {
  it("when work is given, then no more than the limit is under way at once and the results keep the items' order", async () => {
    let underWay = 0;
    let most = 0;
    const results = await mapInFlight(
      Array.from({ length: 40 }, (_, i) => i),
      async (i) => {
        underWay++;
        most = Math.max(most, underWay);
        for (let t = 0; t < (i * 7) % 5; t++) await tick();
        underWay--;
        return i * 2;
      },
      4,
    );
    expect(most).toBe(4);
    expect(results).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
  });

  it("when one piece of work fails, then the others under way are waited for before the failure is raised", async () => {
    const window = new InFlight(3);
    let finished = 0;
    await window.start(() => Promise.reject(new Error("file 1 failed")));
    for (let i = 0; i < 2; i++)
      await window.start(async () => {
        for (let t = 0; t < 5; t++) await tick();
        finished++;
      });
    expect(window.failed).toBe(true);
    await expect(window.settle()).rejects.toThrow("file 1 failed");
    expect(finished).toBe(2);
  });
});

describe("registration order", () => {
  it("when files registered side by side finish out of order, then each registers only after every file claimed before it is done", async () => {
    const order = new RegistrationOrder();
    const registered: number[] = [];
    const turns = [0, 1, 2, 3].map(() => order.next());
    // File 3 is ready first, file 0 last: they still register 0, 1, 2, 3.
    const files = [3, 2, 1, 0].map(async (file) => {
      const turn = turns[file];
      if (turn === undefined) throw new Error("no turn");
      for (let t = 0; t < 4 - file; t++) await tick();
      await turn.before;
      registered.push(file);
      turn.done();
    });
    await Promise.all(files);
    expect(registered).toEqual([0, 1, 2, 3]);
  });

  it("when a file ends without registering and says so twice, then the next file's turn comes once", async () => {
    const order = new RegistrationOrder();
    const first = order.next();
    const second = order.next();
    first.done();
    first.done();
    await second.before;
    second.done();
    await expect(order.next().before).resolves.toBeUndefined();
  });
});
