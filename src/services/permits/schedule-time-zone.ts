/**
 * Which calendar a renewal schedule follows: an IANA time zone, given with the schedule (`timeZone`) or, by
 * default, the one of the payer's country — known from the permit customer's phone number (tenants carry
 * no country; the payer is whose calendar "monthly" means). A number of another country, or none, falls
 * back to `Africa/Abidjan` (UTC+0, no daylight saving: the UTC calendar of the schedules made before time
 * zones existed). Migration 0009_schedule_time_zone applies the same rule to the schedules it finds.
 *
 * @example
 * ```ts
 * defaultScheduleTimeZone({ phone: "+22997000000" }); // "Africa/Porto-Novo"
 * canonicalTimeZone("africa/porto-novo"); // "Africa/Porto-Novo"
 * canonicalTimeZone("+01:00"); // undefined: an offset is not a zone
 * ```
 *
 * @module
 */
import { Temporal } from "temporal-polyfill";
import type { PaymentCustomer } from "../../db/schema.ts";
import { countryOfNumber } from "../countries.ts";

/** The time zone of each country the gateway serves, by lower-case ISO 3166 code. */
export const COUNTRY_TIME_ZONES = {
  bj: "Africa/Porto-Novo",
  ne: "Africa/Niamey",
  tg: "Africa/Lome",
  ci: "Africa/Abidjan",
  sn: "Africa/Dakar",
  ml: "Africa/Bamako",
  gn: "Africa/Conakry",
} as const;

type ServedCountry = keyof typeof COUNTRY_TIME_ZONES;

/** A schedule's zone when the payer's country is not one of {@link COUNTRY_TIME_ZONES}. */
export const FALLBACK_TIME_ZONE = "Africa/Abidjan";

/** The payer's country, from its `country` (provider A customers) or its phone's calling code. */
function payerCountry(customer: PaymentCustomer): ServedCountry | undefined {
  const country = customer.country?.toLowerCase();
  if (country && country in COUNTRY_TIME_ZONES) return country as ServedCountry;
  const byNumber = countryOfNumber(customer.phone ?? "");
  return byNumber !== undefined && byNumber in COUNTRY_TIME_ZONES ? (byNumber as ServedCountry) : undefined;
}

/** The time zone a schedule follows unless told otherwise: the payer's country's, else {@link FALLBACK_TIME_ZONE}. */
export function defaultScheduleTimeZone(customer: PaymentCustomer): string {
  const country = payerCountry(customer);
  return country ? COUNTRY_TIME_ZONES[country] : FALLBACK_TIME_ZONE;
}

// A zone name (Area/Location, `UTC`, `Etc/GMT+1`…); Temporal also takes bare offsets like `+01:00`, which
// follow no country's calendar and are refused.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/**
 * The IANA time zone `name` names, spelled as the zone database spells it (`africa/lome` → `Africa/Lome`),
 * or undefined when it is not one the runtime's zone data knows.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (name.length > 64 || !ZONE_NAME.test(name)) return undefined;
  try {
    return Temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(name).timeZoneId;
  } catch {
    return undefined;
  }
}
