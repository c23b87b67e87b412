// Every fast-check property of a test process runs from the run's seed (fuzz-seed.ts): a
// counterexample found with FUZZ_SEED=<n> is found again with it. setupFiles in vitest.config.ts.
import fc from 'fast-check';
import { fuzzSeed } from '../helpers/fuzz-seed.js';

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: fuzzSeed() });
