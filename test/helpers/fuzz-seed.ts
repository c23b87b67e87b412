// The run's seed (test/setup/fuzz-seed.ts chooses it and prints it; FUZZ_SEED replays it).
export function fuzzSeed(): number {
  const seed = Number(process.env.FUZZ_SEED);
  if (!Number.isInteger(seed)) throw new Error('FUZZ_SEED is not set: run the tests through vitest.config.ts, whose globalSetup sets it');
  return seed;
}
