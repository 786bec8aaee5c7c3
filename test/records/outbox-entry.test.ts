import { describe, expect, it } from "vitest";
import { readEntry } from "../../src/records/outbox-events.js";

const KEY = "3f9a1c2e-1111-4222-8333-444455556666";
const attempt = JSON.stringify({
  t: "attempt",
  key: KEY,
  n: 1,
  at: 1_795_500_000_000,
  ms: 42,
  http: 201,
  net: null,
  cid: "c1",
  ra: null,
});
const record = JSON.stringify({
  t: "record",
  key: KEY,
  eid: "INV-1",
  status: "succeeded",
  http: 201,
  cid: "c1",
  ruleset: "r1",
  attempts: 1,
  first: 1_795_500_000_000,
  last: 1_795_500_000_000,
  error: null,
  by: null,
  body: "{}",
});

describe("reading an outbox entry", () => {
  it("when an entry carries an answer's attempt and record, then both are read, in order", () => {
    const entry = readEntry("1-0", ["e", attempt, "e", record]);
    expect("events" in entry && entry.events.map((e) => e.t)).toEqual(["attempt", "record"]);
  });

  it("when one event of an entry is not an event, then the whole entry is a problem that names why", () => {
    const entry = readEntry("1-0", ["e", attempt, "e", '{"t":"record"}']);
    expect("problem" in entry && entry.problem).toContain("key");
    expect(readEntry("2-0", ["e", attempt, "e", "{"])).toEqual({ id: "2-0", problem: "field e is not JSON" });
  });

  it("when an entry has no field e, then it is a problem", () => {
    expect(readEntry("3-0", ["x", attempt])).toEqual({ id: "3-0", problem: "no field e" });
  });
});
