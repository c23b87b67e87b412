// A job records its endpoint's fingerprint; a worker of a newer version must compute the same
// one for an unchanged endpoint, or it treats every queued job as enqueued under another
// configuration.
import { describe, expect, it } from 'vitest';
import { endpointFingerprint } from '../../src/queue/fingerprint.js';
import { compileOk } from '../compiler/helpers.js';

describe('endpoint fingerprints', () => {
  it('stay as they were before outputs carried a compiled JSONPath', () => {
    const app = compileOk(
      `<endpoint-folder>
  <endpoint name="e">
    <parameter name="repo" jsonpath="$.repository.full_name"/>
    <task class="HttpRequest" id="look-up">
      <url>https://api.example/items/\${repo}</url>
      <output-intermediate-value name="item-id" jsonpath="$.data.id"/>
      <output-intermediate-value name="title" xpath="/r/title"/>
    </task>
  </endpoint>
</endpoint-folder>
`,
      {},
      { mode: 'serve' },
    );
    // Computed by the version whose outputs were evaluated by jsonpath-plus.
    expect(endpointFingerprint(app, app.endpoints[0]!)).toBe('e162359cca649129828c157c01a4db77');
  });
});
