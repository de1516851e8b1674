/**
 * Never twice, on the real servers (issue 15, point 3): a `passerelle worker` process SIGKILLed between the
 * steps of a provider A payout — after provider A created it and before its start reached the provider — and a
 * fresh worker settles it from the provider: exactly one payout at the provider for the one request, and ours
 * `sent` once. (The other cases are worker-killed-*.test.ts here; the rig and this test's steps are
 * test/support/worker-killed-rig.ts.)
 */
import { describe, it } from "bun:test";
import { onServers, providerAKilledMidPayout, SKIP_NOTE, workerKilledRig } from "../../support/worker-killed-rig.ts";

const rig = workerKilledRig();

describe("a worker killed between the steps of a payout", () => {
  it.skipIf(!onServers)(
    `provider A: killed after the create, before the start reached the provider; one payout, sent once${SKIP_NOTE}`,
    () => providerAKilledMidPayout(rig, "before"),
    // The payout is left to its sync chain's later steps (a minute and more on a loaded machine).
    180_000,
  );
});
