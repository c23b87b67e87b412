// One seed for everything random in a test run: fast-check's properties, the fuzzing of the
// compiler and of requests, the soak's request mix. With CI=true it is fixed, so a failure in CI
// happens again on the next run and on a laptop; elsewhere it is random, so local runs explore
// more. Either way it is printed once at the start, and FUZZ_SEED=<n> replays a run.
// globalSetup in vitest.config.ts: it runs once, before the test processes are started, and
// hands the seed to them in FUZZ_SEED.

/** The seed of every run in CI. Change it to explore other cases there. */
export const CI_FUZZ_SEED = 20_261_126;

/** Set once the seed is chosen: each vitest project runs this set-up, in the same process. */
const CHOSEN = Symbol.for('endpoint-service.test.fuzz-seed-chosen');

export default function chooseFuzzSeed(): void {
  const run = globalThis as { [CHOSEN]?: true };
  if (run[CHOSEN]) return;
  run[CHOSEN] = true;
  const given = process.env.FUZZ_SEED;
  if (given !== undefined && given !== '') {
    if (!/^\d+$/.test(given) || Number(given) >= 2 ** 31) throw new Error(`FUZZ_SEED must be a whole number below 2^31, not "${given}"`);
    console.log(`fuzz seed ${given} (from FUZZ_SEED)`);
    return;
  }
  const ci = process.env.CI === 'true';
  const seed = ci ? CI_FUZZ_SEED : Math.floor(Math.random() * 2 ** 31);
  process.env.FUZZ_SEED = String(seed);
  console.log(`fuzz seed ${seed} (${ci ? 'fixed with CI=true' : 'random'}; replay this run with FUZZ_SEED=${seed})`);
}
