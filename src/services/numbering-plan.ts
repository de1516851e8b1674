/**
 * Which operator a mobile number belongs to, by each country's numbering plan: the one table of mobile
 * prefixes per operator for the eight countries the gateway reaches (issue 31 point 2). The pay page reads it
 * (bundled into its script, so detection costs no round trip) to propose the customer's wallet; the customer
 * can always change it — a number ported to another network, or a wallet that is not a network (Wave), is
 * the customer's to pick.
 *
 * Numbers are read in their national form, after the calling code. Benin's ten-digit numbers (since
 * 30 November 2024) are its eight-digit ones behind `01`; the old form is read too.
 *
 * Sources (national numbering plans as notified to the ITU — ITU-T Operational Bulletin, "National numbering
 * plan" notifications — and the regulators' published allocations):
 * - bj: ARCEP Bénin, plan national de numérotation (passage à 10 chiffres, décision 2024); ITU notification for +229.
 * - tg: ARCEP Togo, attributions de ressources de numérotation; ITU notification for +228.
 * - gn: ARPT Guinée, plan de numérotation à 9 chiffres; ITU notification for +224.
 * - ci: ARTCI, plan de numérotation à 10 chiffres (31 janvier 2021): 01 Moov, 05 MTN, 07 Orange; ITU notification for +225.
 * - ne: ARCEP Niger, plan national de numérotation; ITU notification for +227.
 * - sn: ARTP Sénégal, plan national de numérotation; ITU notification for +221.
 * - ml: AMRTP Mali, plan national de numérotation; ITU notification for +223.
 * - bf: ARCEP Burkina Faso, plan national de numérotation; ITU notification for +226.
 * Allocations change: a new block is one line here, and the test (test/services/numbering-plan.test.ts)
 * checks every prefix of the table.
 *
 * @example
 * ```ts
 * detectOperator("+22997000000");            // { country: "bj", operator: "mtn" }
 * detectOperator("0701020304", "ci");        // { country: "ci", operator: "orange" }
 * ```
 *
 * @module
 */

/** A country's mobile numbers: their national length and each operator's leading digits. */
export interface CountryPlan {
  callingCode: string;
  /** Digits of a national mobile number. */
  length: number;
  /** Operator (the routing vocabulary: mtn, moov, orange…) → the prefixes of its numbers. */
  operators: Record<string, readonly string[]>;
}

/** The table: for each country, each operator's mobile prefixes (national form). */
export const NUMBERING_PLAN = {
  bj: {
    callingCode: "229",
    length: 8,
    operators: {
      mtn: ["42", "46", "50", "51", "52", "53", "54", "56", "57", "59", "61", "62", "66", "67", "69", "90", "91", "96", "97"],
      moov: ["55", "58", "60", "63", "64", "65", "68", "94", "95", "98", "99"],
      celtiis: ["40", "41", "43", "44", "45", "47", "48", "49"],
    },
  },
  tg: {
    callingCode: "228",
    length: 8,
    operators: {
      togocel: ["70", "71", "72", "73", "90", "91", "92", "93"],
      moov: ["78", "79", "96", "97", "98", "99"],
    },
  },
  gn: {
    callingCode: "224",
    length: 9,
    operators: {
      orange: ["610", "611", "620", "621", "622", "623", "624", "625", "626", "627", "628", "629"],
      mtn: ["660", "661", "662", "663", "664", "665", "666", "667", "668", "669"],
      cellcom: ["655", "656", "657"],
    },
  },
  ci: {
    callingCode: "225",
    length: 10,
    operators: {
      moov: ["01"],
      mtn: ["05"],
      orange: ["07"],
    },
  },
  ne: {
    callingCode: "227",
    length: 8,
    operators: {
      airtel: ["80", "96", "97", "98", "99"],
      moov: ["94", "95"],
      zamani: ["90", "91", "92", "93"],
      "niger-telecoms": ["88", "89"],
    },
  },
  sn: {
    callingCode: "221",
    length: 9,
    operators: {
      orange: ["77", "78"],
      free: ["76"],
      expresso: ["70"],
      promobile: ["75"],
    },
  },
  ml: {
    callingCode: "223",
    length: 8,
    operators: {
      orange: ["70", "71", "72", "73", "74", "75", "76", "77", "78", "79", "82", "83", "84", "85", "90", "91", "92", "93", "94"],
      moov: ["60", "61", "62", "63", "64", "65", "66", "67", "68", "69", "95", "96", "97", "98", "99"],
      telecel: ["50", "51", "52"],
    },
  },
  bf: {
    callingCode: "226",
    length: 8,
    operators: {
      orange: ["04", "05", "06", "07", "54", "55", "56", "57", "64", "65", "66", "67", "74", "75", "76", "77"],
      moov: ["01", "02", "03", "50", "51", "52", "53", "60", "61", "62", "63", "70", "71", "72", "73"],
      telecel: ["58", "68", "69", "78", "79"],
    },
  },
} as const satisfies Record<string, CountryPlan>;

export type PlanCountry = keyof typeof NUMBERING_PLAN;

/** What a number says about itself: its country, national digits and operator (null when no block matches). */
export interface DetectedNumber {
  country: PlanCountry;
  national: string;
  /** International form, `+` and digits. */
  international: string;
  operator: string | null;
}

const COUNTRIES = Object.keys(NUMBERING_PLAN) as PlanCountry[];

/** Digits only; a leading `+` or `00` marks an international number. */
function digitsOf(number: string): { digits: string; international: boolean } {
  const trimmed = number.trim();
  const digits = trimmed.replace(/\D/g, "");
  if (trimmed.startsWith("+")) return { digits, international: true };
  if (trimmed.startsWith("00")) return { digits: digits.slice(2), international: true };
  return { digits, international: false };
}

/** Benin's ten-digit mobile numbers are `01` and the eight-digit number. */
function nationalFor(country: PlanCountry, national: string): string {
  if (country === "bj" && national.length === 10 && national.startsWith("01")) return national.slice(2);
  return national;
}

/**
 * The country and operator of a number, international (`+229…`, `00229…`) or national in `country`; undefined
 * when it is no mobile number of a country of the table (wrong length, unknown calling code).
 */
export function detectOperator(number: string, country?: string): DetectedNumber | undefined {
  const { digits, international } = digitsOf(number);
  let found: PlanCountry | undefined;
  let national = digits;
  if (international) {
    found = COUNTRIES.find((c) => digits.startsWith(NUMBERING_PLAN[c].callingCode));
    if (found) national = digits.slice(3);
  } else if (country !== undefined && Object.hasOwn(NUMBERING_PLAN, country)) {
    found = country as PlanCountry;
    const code = NUMBERING_PLAN[found].callingCode;
    // "22997000000" typed without its +: the calling code is read as one when the rest has the country's length.
    if (digits.startsWith(code) && [NUMBERING_PLAN[found].length, 10].includes(digits.length - 3)) national = digits.slice(3);
  }
  if (!found) return undefined;
  const plan: CountryPlan = NUMBERING_PLAN[found];
  const local = nationalFor(found, national);
  if (local.length !== plan.length) return undefined;
  const operator = Object.entries(plan.operators).find(([, prefixes]) => prefixes.some((prefix) => local.startsWith(prefix)))?.[0] ?? null;
  return { country: found, national, international: `+${plan.callingCode}${national}`, operator };
}
