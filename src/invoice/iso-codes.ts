/**
 * ISO 4217 currencies and ISO 3166-1 alpha-2 countries, taken from the runtime's ICU data (`Intl`), less
 * the codes ICU knows that ISO does not assign today.
 */

// ICU still lists these; ISO 4217 has withdrawn them (replaced by XCG, CUP, EUR, SLE and ZWG).
const WITHDRAWN_CURRENCIES = new Set(["ANG", "CUC", "HRK", "SLL", "ZWL"]);

// ICU names these regions, but ISO 3166-1 does not assign them: user-assigned (QO, XA, XB, XK, ZZ),
// exceptionally reserved (AC, CP, CQ, DG, EA, EU, EZ, IC, TA, UK, UN) and withdrawn codes that ICU
// keeps as aliases (AN, BU, CS, DD, DY, FX, HV, NH, RH, SU, TP, VD, YD, YU, ZR).
const UNASSIGNED_REGIONS = new Set([
  "QO", "XA", "XB", "XK", "ZZ",
  "AC", "CP", "CQ", "DG", "EA", "EU", "EZ", "IC", "TA", "UK", "UN",
  "AN", "BU", "CS", "DD", "DY", "FX", "HV", "NH", "RH", "SU", "TP", "VD", "YD", "YU", "ZR",
]); // prettier-ignore

function buildCurrencies(): ReadonlySet<string> {
  return new Set(Intl.supportedValuesOf("currency").filter((code) => !WITHDRAWN_CURRENCIES.has(code)));
}

function buildCountries(): ReadonlySet<string> {
  const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });
  const codes = new Set<string>();
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      if (!UNASSIGNED_REGIONS.has(code) && names.of(code) !== undefined) codes.add(code);
    }
  }
  return codes;
}

export const CURRENCY_CODES: ReadonlySet<string> = buildCurrencies();
export const COUNTRY_CODES: ReadonlySet<string> = buildCountries();

export function isCurrencyCode(value: string): boolean {
  return CURRENCY_CODES.has(value);
}

export function isCountryCode(value: string): boolean {
  return COUNTRY_CODES.has(value);
}
