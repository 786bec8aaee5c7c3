import { describe, expect, it } from "vitest";
import { compileFieldPaths, pickFieldsByPaths } from "../../src/invoice/field-paths.js";
import { applyFieldRules, compileFieldRules } from "../../src/invoice/field-rules.js";
import { normaliseFields, pickFields, type PickedFields } from "../../src/invoice/normalise.js";

const rules = compileFieldRules(
  { archive_policy: "eu-10y", document_type: "invoice" },
  new Map([
    [
      "destination_country",
      new Map([
        ["Deutschland", "DE"],
        ["276", "DE"],
      ]),
    ],
  ]),
);

describe("defaults and values applied to picked fields", () => {
  it("when a record needs no change, then it is returned as it is", () => {
    if (rules === undefined) throw new Error("rules expected");
    const picked = pickFields({
      destination_country: "FR",
      archive_policy: "us-7y",
      document_type: "invoice",
    });
    expect(applyFieldRules(picked, rules)).toBe(picked);
  });

  it("when words are mapped and defaults fill gaps, then a copy changes and the record picked is left as it was", () => {
    if (rules === undefined) throw new Error("rules expected");
    const picked = pickFields({ destination_country: " Deutschland ", archive_policy: "  " });
    const before = structuredClone(picked);
    const applied = applyFieldRules(picked, rules);
    expect(applied.fields).toEqual({
      destination_country: "DE",
      archive_policy: "eu-10y",
      document_type: "invoice",
    });
    expect(picked).toEqual(before);
  });

  it("when a JSON number is one of the vendor's words, then it is mapped too", () => {
    if (rules === undefined) throw new Error("rules expected");
    expect(applyFieldRules(pickFields({ destination_country: 276 }), rules).fields.destination_country).toBe(
      "DE",
    );
  });

  it("when a profile has neither defaults nor values, then there are no rules", () => {
    expect(compileFieldRules({}, new Map([["currency", new Map()]]))).toBeUndefined();
  });
});

describe("fields picked by dotted paths", () => {
  const paths = compileFieldPaths(new Map([["a.b.Id", "external_id"]]));

  it("when the same field also comes by its own name with another value, then the record is rejected for it", () => {
    const picked: PickedFields = pickFieldsByPaths({ a: { b: { id: "X" } }, external_id: "Y" }, paths);
    const result = normaliseFields(picked);
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors.map((e) => e.reason)).toContainEqual(
      'is given twice with different values (again as "external_id"); give it once',
    );
  });

  it("when the field comes by its own name only, then its errors do not name the path", () => {
    const picked = pickFieldsByPaths({ external_id: "" }, paths);
    expect(picked.columns).toEqual({});
  });

  it("when a flat key spells the whole path, then it fills the field", () => {
    expect(pickFieldsByPaths({ "A.B.ID": "X" }, paths).fields).toEqual({ external_id: "X" });
  });
});
