import fc from "fast-check";

/**
 * URLs with a generated secret in every position a driver reads a credential from: the userinfo
 * password, and the query parameters pg (pg-connection-string copies every parameter into the
 * connection's settings) and ioredis read as one. Each secret is written raw, percent-encoded where
 * needed, or percent-encoded entirely, and a parameter may be repeated (the driver takes one of them).
 */
export interface SecretUrl {
  readonly url: string;
  /** The secrets as the driver reads them, and as written in the URL. */
  readonly secrets: readonly string[];
}

export type Scheme = "postgres" | "redis";

const ALNUM = Array.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
/** Characters a URL must percent-encode in a credential, or that change its meaning raw. */
const SPECIAL = Array.from("@:/?#&=%+ ;,'\"!$*()[]\\é€");

/** A distinctive secret: a marker, a random alphanumeric core and maybe some special characters. */
export const secretArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 12, maxLength: 20 }),
    fc.string({ unit: fc.constantFrom(...SPECIAL), maxLength: 4 }),
    fc.nat(20),
  )
  .map(([core, special, at]) => {
    const cut = Math.min(at, core.length);
    return `Zq${core.slice(0, cut)}${special}${core.slice(cut)}`;
  });

type Encoding = "raw" | "component" | "all";

/** `secret` as written in a URL: raw only when it holds nothing a URL would read otherwise. */
function written(secret: string, encoding: Encoding): string {
  if (encoding === "all")
    return Array.from(
      new TextEncoder().encode(secret),
      (b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
    ).join("");
  if (encoding === "raw" && /^[A-Za-z0-9]+$/.test(secret)) return secret;
  return encodeURIComponent(secret);
}

const encodingArb = fc.constantFrom<Encoding>("raw", "component", "all");

const PARAMS: Readonly<Record<Scheme, readonly string[]>> = {
  postgres: ["password", "sslpassword"],
  redis: ["password", "sentinelPassword"],
};

interface Placement {
  readonly where: "userinfo" | "query";
  readonly param: string;
  readonly secret: string;
  readonly encoding: Encoding;
  /** The parameter's name percent-encoded (a driver decodes names too). */
  readonly encodedName: boolean;
}

function placementArb(scheme: Scheme): fc.Arbitrary<Placement> {
  return fc.record({
    where: fc.constantFrom<"userinfo" | "query">("userinfo", "query"),
    param: fc.constantFrom(...PARAMS[scheme]),
    secret: secretArb,
    encoding: encodingArb,
    encodedName: fc.boolean(),
  });
}

/** `password` as `%70assword`: the same parameter to a driver, another text to a naive search. */
const encodeName = (name: string) => `%${name.charCodeAt(0).toString(16)}${name.slice(1)}`;

/**
 * A URL of `scheme` for `user` (may be empty) to `host:port` (path `path`) with one to three secrets placed by the generator,
 * at most one in the userinfo; a query placement may repeat a parameter an earlier one used.
 */
export function secretUrlArb(
  scheme: Scheme,
  user: string,
  hostPort: string,
  path: string,
): fc.Arbitrary<SecretUrl> {
  return fc
    .tuple(fc.array(placementArb(scheme), { minLength: 1, maxLength: 3 }), fc.boolean())
    .map(([placements, sslMode]) => {
      let password: string | undefined;
      const query: string[] = [];
      const secrets: string[] = [];
      for (const p of placements) {
        const shown = written(p.secret, p.encoding);
        secrets.push(p.secret, shown);
        if (p.where === "userinfo" && password === undefined) password = shown;
        else query.push(`${p.encodedName ? encodeName(p.param) : p.param}=${shown}`);
      }
      if (sslMode && scheme === "postgres") query.push("sslmode=disable");
      const userinfo = password !== undefined ? `${user}:${password}@` : user === "" ? "" : `${user}@`;
      const search = query.length === 0 ? "" : `?${query.join("&")}`;
      return { url: `${scheme}://${userinfo}${hostPort}${path}${search}`, secrets: [...new Set(secrets)] };
    });
}

/** The secrets (and their alphanumeric cores) that `output` holds. */
export function leakedSecrets(output: string, secrets: readonly string[]): string[] {
  const needles = secrets.flatMap((s) => [s, ...(s.match(/[A-Za-z0-9]{10,}/g) ?? [])]);
  return [...new Set(needles.filter((n) => output.includes(n)))];
}
