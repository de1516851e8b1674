import { describe, expect, it } from "bun:test";
import { detectOperator, NUMBERING_PLAN, type PlanCountry } from "../../src/services/numbering-plan.ts";

/** A number of `length` digits opening with `prefix`, the rest filled with a digit pattern. */
function numberWith(prefix: string, length: number): string {
  return `${prefix}12345678901234`.slice(0, length);
}

describe("the numbering plan's wallet detection", () => {
  for (const [country, plan] of Object.entries(NUMBERING_PLAN) as [PlanCountry, (typeof NUMBERING_PLAN)[PlanCountry]][]) {
    for (const [operator, prefixes] of Object.entries(plan.operators)) {
      it(`detects ${operator} in ${country} for each of its prefixes (${prefixes.join(", ")})`, () => {
        for (const prefix of prefixes) {
          const national = numberWith(prefix, plan.length);
          expect(detectOperator(`+${plan.callingCode}${national}`)).toEqual({
            country,
            national,
            international: `+${plan.callingCode}${national}`,
            operator,
          });
          expect(detectOperator(national, country)?.operator).toBe(operator);
        }
      });
    }
  }

  it("gives no prefix to two operators of one country", () => {
    for (const plan of Object.values(NUMBERING_PLAN)) {
      const all = Object.values(plan.operators).flat() as string[];
      for (const prefix of all) expect(all.filter((other) => other.startsWith(prefix) || prefix.startsWith(other))).toEqual([prefix]);
    }
  });

  it("reads Benin's ten-digit numbers (01 and the eight digits) and spaces, dots and 00", () => {
    expect(detectOperator("+229 01 97 00 00 00")).toMatchObject({ country: "bj", operator: "mtn", international: "+2290197000000" });
    expect(detectOperator("01 95 12 34 56", "bj")?.operator).toBe("moov");
    expect(detectOperator("00221.77.123.45.67")).toMatchObject({ country: "sn", operator: "orange" });
    expect(detectOperator("221771234567", "sn")).toMatchObject({ national: "771234567", operator: "orange" });
  });

  it("answers no operator for a block of no operator, and nothing for a wrong length or an unknown country", () => {
    expect(detectOperator("+221331234567")).toMatchObject({ country: "sn", operator: null });
    expect(detectOperator("+2299700000")).toBeUndefined();
    expect(detectOperator("+33612345678")).toBeUndefined();
    expect(detectOperator("97000000")).toBeUndefined();
  });
});
