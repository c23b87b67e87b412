// Three tiers (docs/architecture.md, "Habits"), all run by `npm test`:
//   unit  in-process only: no built binary spawned, no Redis or PostgreSQL (`npm run test:unit`),
//         in worker threads (they start faster than forks: 25–27 s against 29–33 s measured),
//         its files one after another in the same worker, which imports each module once: a
//         new worker per file spent two thirds of the tier's CPU time starting and importing the
//         same modules again (43 s of CPU against 15 s, 43 s to run against 19.5 s, medians on
//         one machine). Its files share no state but caches, and pass in any order
//         (--sequence.shuffle). `npm run test:unit` gives it two workers (the task tests mostly
//         wait on their peers' delays, which a second worker fills: 11–13 s against 18.5–19.5 s
//         on a quiet 2-core machine); within `npm test` it keeps vitest's count, beside e2e;
//   e2e   files named *.e2e.test.ts: they start the built binary or talk to a store;
//   slow  load, soak, fuzzing, the XML conformance suite, xmllint on every fixture and the bench
//         scripts' usage (many processes): named here, whatever their names.
import { defineConfig } from 'vitest/config';

export const SLOW = [
  'test/queue/load.e2e.test.ts',
  'test/reliability/soak.e2e.test.ts',
  'test/reliability/fuzz-compiler.e2e.test.ts',
  'test/cli/xml-conformance.e2e.test.ts',
  'test/language/schemas-on-fixtures.test.ts',
  'test/language/schemas-xmllint.test.ts',
  'test/bench/help.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/setup/fuzz-seed.ts', 'test/setup/state-dir.ts'],
    setupFiles: ['test/setup/fast-check.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', pool: 'threads', isolate: false, include: ['test/**/*.test.ts'], exclude: ['test/**/*.e2e.test.ts', ...SLOW] },
      },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.e2e.test.ts'], exclude: SLOW } },
      { extends: true, test: { name: 'slow', include: SLOW } },
    ],
  },
});
