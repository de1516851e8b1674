/**
 * Provider B's form body reader (`parseBracketForm`): the same nested object as `qs.parse` with the options
 * the IPN route has always used, for provider B's bodies (read by the fast reader) and for anything hostile
 * or unusual (handed to `qs`) — checked field by field, prototype by prototype, against `qs` itself.
 */
import { describe, expect, it } from "bun:test";
import qs from "qs";
import { ipnHashOf, ipnSubject, parseBracketForm, parseIpnBody, readPlainBracketForm } from "../../../src/providers/providerB/ipn.ts";
import { encodePhpForm } from "../../../src/providers/providerB/simulator/php-form.ts";

const QS_OPTIONS = { depth: 6, parameterLimit: 500, arrayLimit: 50, allowPrototypes: false, plainObjects: true } as const;

/** A value's shape with its prototypes spelled out, so that two readings compare exactly (key order included). */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return ["array", value.length, value.map(shape)];
  if (typeof value === "object" && value !== null) {
    const proto = Object.getPrototypeOf(value) === null ? "null-proto" : Object.getPrototypeOf(value) === Object.prototype ? "object" : "other";
    return [proto, Object.keys(value).map((key) => [key, shape((value as Record<string, unknown>)[key])])];
  }
  return [typeof value, value];
}

const expectSameAsQs = (body: string) => expect(shape(parseBracketForm(body))).toEqual(shape(qs.parse(body, QS_OPTIONS)));

const ipn = {
  response_code: "00",
  response_text: "Transaction Found",
  hash: ipnHashOf("mk_test_1"),
  invoice: {
    token: "test_abc123",
    total_amount: "5000",
    description: "Commande n°42 & co = 100%",
    items: { item_0: { name: "Thiéboudienne", quantity: "1" } },
  },
  status: "completed",
  custom_data: { orderRef: "ORD-1", passerelle_payment_id: "pay_01JABCDEFGHJKMNPQRSTVWXYZ", "a b+c": "x+y z" },
  customer: { name: "Awa Diop", phone: "+221770000000", email: "awa@example.com", payment_method: "wave-senegal" },
  mode: "test",
  receipt_url: "https://example.com/receipt/abc.pdf?x=1&y=2",
};

describe("parseBracketForm on provider B's bodies", () => {
  it("reads an IPN as qs does, without qs", () => {
    const body = encodePhpForm({ data: ipn });
    expect(shape(readPlainBracketForm(body))).toEqual(shape(qs.parse(body, QS_OPTIONS)));
    expect(parseIpnBody("application/x-www-form-urlencoded", body)).toEqual(ipn);
  });
  it("reads raw brackets, lower-case and malformed escapes, `+` and fields without `=` as qs does, without qs", () => {
    for (const body of [
      "data[invoice][token]=t&data[status]=completed",
      "data%5binvoice%5d%5btoken%5d=t&data%5Bstatus%5d=completed",
      "data[invoice][token]=a+b%20c&data[mode]&data[x]=&=lonely&&data[y]=%E2%9C%93",
      "data[a=b]=c&data]x=1&plain=1&0=zero&data[constructor]=c&data[toString]=s&data[hasOwnProperty]=h",
      "data[a][b][c][d][e][f]=six-deep",
      // Malformed escapes are left as they are (qs's decoder).
      "data[invoice][token]=%E2%82&data[%ZZ]=1&data%5[x]=%&data[y]=%%5B",
    ]) {
      expect(readPlainBracketForm(body)).toBeDefined();
      expectSameAsQs(body);
    }
  });
  it("keeps `constructor` and other Object.prototype names as data, in objects without a prototype", () => {
    const parsed = parseBracketForm("data[constructor][prototype][polluted]=1&data[invoice][token]=t") as any;
    expect(Object.getPrototypeOf(parsed.data)).toBeNull();
    expect(parsed.data.constructor).toEqual({ prototype: { polluted: "1" } });
    expect(({} as any).polluted).toBeUndefined();
    expect(ipnSubject(parsed.data)?.token).toBe("t");
  });
});

describe("parseBracketForm on hostile or unusual bodies (read by qs, as before)", () => {
  const hostile: Array<[string, string]> = [
    ["repeated field", "data[invoice][token]=a&data[invoice][token]=b"],
    ["repeated field, once escaped", "data[hash]=a&data%5Bhash%5D=b"],
    ["a value and an object at one key", "data[invoice]=x&data[invoice][token]=t"],
    ["an object and a value at one key", "data[invoice][token]=t&data[invoice]=x"],
    ["nested brackets", "data[invoice[token]]=t&data[a[b][c]]=d"],
    ["empty brackets", "data[invoice][token][]=t&data[x][]=1&data[x][]=2"],
    ["numeric keys", "data[items][0]=a&data[items][1]=b&data[items][60]=c&data[n][01]=x&data[n][-1]=y"],
    ["unterminated bracket", "data[invoice[token=t&data[a=1"],
    ["text after a bracket", "data[invoice]x[token]=t"],
    ["a key starting with a bracket", "[data][invoice]=t"],
    ["deeper than 6", "data[a][b][c][d][e][f][g][h]=deep"],
    ["__proto__ at the top", "__proto__[polluted]=1&data[invoice][token]=t"],
    ["__proto__ inside", "data[__proto__][polluted]=1&data[invoice][__proto__][x]=y&data[invoice][token]=t"],
    ["__proto__ escaped", "data%5B__proto__%5D%5Bpolluted%5D=1"],
    ["a bracket closed twice", "data[d]]=e&data[f]]]=g"],
    ["a repeated field past the array limit", Array.from({ length: 60 }, (_, i) => `data[hash]=${i}`).join("&")],
    ["more than 500 fields", Array.from({ length: 600 }, (_, i) => `data[f${i}]=${i}`).join("&")],
  ];
  for (const [name, body] of hostile) {
    it(`${name}: the same object as qs, no prototype touched`, () => {
      expect(readPlainBracketForm(body)).toBeUndefined();
      expectSameAsQs(body);
      expect(({} as any).polluted).toBeUndefined();
      expect((Object.prototype as any).x).toBeUndefined();
    });
  }
  it("takes no token from a repeated or conflicting one", () => {
    expect(ipnSubject(parseIpnBody("application/x-www-form-urlencoded", "data[invoice][token]=a&data[invoice][token]=b"))).toBeNull();
    expect(ipnSubject(parseIpnBody("application/x-www-form-urlencoded", "data[invoice][token]=a&data[invoice]=b"))).toBeNull();
  });
  it("reads exactly 500 fields and ignores the 501st, as qs does", () => {
    const body = Array.from({ length: 501 }, (_, i) => `data[f${i}]=${i}`).join("&");
    expectSameAsQs(body);
    expect(Object.keys((parseBracketForm(body) as any).data)).toHaveLength(500);
  });
});

describe("parseBracketForm against qs on random bodies", () => {
  // A seeded generator, so that a failure repeats.
  let seed = 0x2545f491;
  const random = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const pieces = [
    "data",
    "invoice",
    "token",
    "a",
    "b",
    "0",
    "7",
    "01",
    "-1",
    "__proto__",
    "constructor",
    "toString",
    "[",
    "]",
    "%5B",
    "%5d",
    "=",
    "&",
    "+",
    "%20",
    "%2B",
    "%25",
    "%",
    "%E2%9C%93",
    "%E2",
    "é",
    "[]",
    "][",
    " ",
  ];
  const randomBody = () => Array.from({ length: 1 + random(24) }, () => pieces[random(pieces.length)]).join("");
  const randomIpnBody = () => {
    const names = ["data", "invoice", "token", "a", "b", "constructor", "x y", "+", "=", "&", "%", "é"];
    const build = (depth: number): Record<string, unknown> =>
      Object.fromEntries(
        Array.from({ length: 1 + random(4) }, () => [names[random(names.length)]!, depth > 0 && random(3) === 0 ? build(depth - 1) : randomBody()]),
      );
    return encodePhpForm({ data: build(4) });
  };
  it("reads 5,000 random bodies as qs does", () => {
    let fast = 0;
    for (let i = 0; i < 5_000; i++) {
      const body = i % 2 === 0 ? randomBody() : randomIpnBody();
      if (readPlainBracketForm(body)) fast++;
      expectSameAsQs(body);
    }
    expect(({} as any).polluted).toBeUndefined();
    // Most of them take the fast reading; the rest check that the hand-over to qs is exact.
    expect(fast).toBeGreaterThan(1_000);
  });
});
