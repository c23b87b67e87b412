// A short soak inside npm test (issue 7): the same runSoak() as `node bench/scenarios/soak.mjs`
// (whose documented run is 60 s), for 8 s. Good requests must never get a 5xx; every successful
// good request's HTTP call and mail must have arrived exactly once, and no mail for a request
// whose Email task failed. Memory is reported, with only a generous sanity bound: a few seconds
// cannot show a slow leak, the 60 s run of that script is for that.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, without type declarations
import { runSoak } from '../../bench/scenarios/soak.mjs';
import { fuzzSeed } from '../helpers/fuzz-seed.js';

interface SoakResult {
  figures: {
    seed: number;
    requests: number;
    good: { sent: number; ok: number; serverErrors: number };
    bad: { sent: number; asExpected: number };
    tasks: { goodSucceeded: number; http: { receivedForGood: number }; smtp: { receivedForGood: number; forFailingTaskRequests: number } };
    rssMiB: { start: number; end: number; max: number };
    exit: { code: number | null } | null;
  };
  violations: string[];
}

describe('soak', () => {
  it('mixed good and bad load for 8 s: no 5xx for good requests, every task accounted for', async () => {
    const { figures, violations } = (await runSoak({ durationMs: 8_000, concurrency: 8, seed: fuzzSeed() })) as SoakResult;
    console.log(
      `soak (seed ${figures.seed}): ${figures.requests} requests, good ${figures.good.ok}/${figures.good.sent} ok, bad ${figures.bad.asExpected}/${figures.bad.sent} as expected; ` +
        `HTTP ${figures.tasks.http.receivedForGood} and SMTP ${figures.tasks.smtp.receivedForGood} received for ${figures.tasks.goodSucceeded} successful good requests; ` +
        `RSS ${figures.rssMiB.start} -> ${figures.rssMiB.end} MiB (max ${figures.rssMiB.max})`,
    );
    expect(violations).toEqual([]);
    // The load must have happened for the invariants to mean anything.
    expect(figures.good.ok).toBeGreaterThan(50);
    expect(figures.bad.sent).toBeGreaterThan(20);
    expect(figures.good.serverErrors).toBe(0);
    expect(figures.tasks.http.receivedForGood).toBe(figures.tasks.goodSucceeded);
    expect(figures.tasks.smtp.receivedForGood).toBe(figures.tasks.goodSucceeded);
    expect(figures.exit?.code).toBe(0);
    // Sanity only: a process that grew by this much in seconds is leaking badly.
    expect(figures.rssMiB.end - figures.rssMiB.start).toBeLessThan(250);
  }, 40_000);
});
