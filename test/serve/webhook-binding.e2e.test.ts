/* eslint-disable no-loss-of-precision -- Shopify's ids beyond 2^53, as JSON carries them: the test shows the digits they lose */
// Webhook deliveries as real senders post them, through the built binary: values bound from
// nested JSON with JSONPath and from headers, passed on by tasks to a real peer on loopback.
import http from 'node:http';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fileURLToPath } from 'node:url';
import { fixture, runServeToExit, startServe, type RunningService } from '../helpers/serve.js';

interface GitHubExample {
  readonly action: string;
  readonly issue: {
    readonly title: string;
    readonly number: number;
    readonly labels: readonly { readonly name: string }[];
    readonly milestone: { readonly title: string };
    readonly closed_at: unknown;
  };
  readonly repository: { readonly full_name: string };
}
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: Record<string, unknown>[] }[];
/** GitHub's own `issues` `opened` delivery, as its example payloads document it. */
const issuesOpened = examples.find((e) => e.name === 'issues')!.examples.find((e) => e.action === 'opened') as unknown as GitHubExample;

let service: RunningService;
let peer: HttpPeer;
beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const path of ['/chat', '/sendgrid', '/ledger', '/fulfil']) peer.route(path, { status: 200, body: 'ok' });
  service = await startServe(fixture('webhooks'), [], { PEER: peer.origin });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
});

const post = (endpoint: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${service.url}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

async function problem(response: Response): Promise<{ detail: string; errors?: { parameter: string; detail: string }[] }> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as { detail: string };
}

describe('GitHub', () => {
  it('binds the issues.opened example by JSONPath and header, and the task sends the values', async () => {
    const response = await post('github', JSON.stringify(issuesOpened, null, 2), {
      'X-GitHub-Event': 'issues',
      'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    });
    expect(response.status).toBe(200);
    const sent = peer.requestsTo('/chat');
    expect(sent).toHaveLength(1);
    const { issue, repository } = issuesOpened;
    expect(issue.closed_at).toBeNull();
    expect(JSON.parse(sent[0]!.body)).toEqual({
      text: `issues opened: #${issue.number} ${issue.title} in ${repository.full_name}`,
      labels: issue.labels.map((l) => l.name).join(','),
      milestone: issue.milestone.title,
      // null in the body: not sent, so the default.
      closed: 'open',
    });
    expect(JSON.parse(sent[0]!.body).text).toBe('issues opened: #1 Spelling error in the README file in Codertocat/Hello-World');
  });

  it('refuses the delivery without its event header: the header is the only source', async () => {
    const before = peer.requestsTo('/chat').length;
    const response = await post('github?event=issues', JSON.stringify(issuesOpened));
    expect(response.status).toBe(400);
    expect((await problem(response)).errors).toEqual([{ parameter: 'event', detail: 'missing required parameter "event"' }]);
    expect(peer.requestsTo('/chat')).toHaveLength(before);
  });

  it('applies the rules to values read by JSONPath', async () => {
    const body = { ...issuesOpened, issue: { ...issuesOpened.issue, number: 'one' } };
    const response = await post('github', JSON.stringify(body), { 'X-GitHub-Event': 'issues' });
    expect(response.status).toBe(400);
    expect((await problem(response)).errors).toEqual([{ parameter: 'number', detail: 'parameter "number" is not a whole number' }]);
  });
});

describe('a body too deep to read', () => {
  it('is a 400 for the parameter that reads it, and the service goes on', async () => {
    const deep = `{"action":"opened","repository":{"full_name":"a/b"},"issue":{"number":1,"milestone":{"title":"m"},"title":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    const response = await post('github', deep, { 'X-GitHub-Event': 'issues' });
    // Up to Node.js 24 writing the value as JSON text overflows V8's stack and the parameter is
    // refused; Node.js 26 writes it whole. Either way the service answers, and goes on.
    if (response.status !== 200) {
      expect(response.status).toBe(400);
      expect((await problem(response)).errors).toEqual([
        { parameter: 'title', detail: 'parameter "title" cannot be read with $.issue.title: the JSON body is nested too deeply' },
      ]);
    } else expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(26);
    expect((await post('flat', '{"a":"still"}')).status).toBe(200);
  });
});

describe('SendGrid', () => {
  // As SendGrid's Event Webhook posts them: one array of events.
  const events = [
    {
      email: 'example@test.com',
      timestamp: 1513299569,
      'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
      event: 'processed',
      category: 'cat facts',
      sg_event_id: 'rbtnWrG1DVDGGGFHFyun0A==',
      sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.000000000000000000000',
    },
    {
      email: 'example@test.com',
      timestamp: 1513299569,
      'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
      event: 'delivered',
      category: 'cat facts',
      sg_event_id: 'rWVYmVk90MjZJ9iohOBa3w==',
      sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.000000000000000000000',
      response: '250 OK',
    },
    {
      email: 'bounce@test.com',
      timestamp: 1513299569,
      'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
      event: 'bounce',
      category: 'cat facts',
      sg_event_id: '6g4ZI7SA-xmRDv57GoPIPw==',
      sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.000000000000000000000',
      reason: '500 unknown recipient',
      status: '5.0.0',
      type: 'bounce',
    },
  ];

  it('binds $[*].event of an array body as several values, a filter, and an object as its compact JSON', async () => {
    const response = await post('sendgrid', JSON.stringify(events, null, 2));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(`events=processed,delivered,bounce;bounced=bounce@test.com;first=${JSON.stringify(events[0])}`);
    const sent = peer.requestsTo('/sendgrid');
    expect(sent).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(sent[0]!.body))).toEqual({ events: 'processed,delivered,bounce', bounced: 'bounce@test.com' });
  });
});

describe('Stripe', () => {
  // A payment_intent.succeeded event as Stripe's API reference shows it.
  const event = {
    id: 'evt_3MtwBwLkdIwHu7ix0Xt0RVlY',
    object: 'event',
    api_version: '2022-11-15',
    created: 1680064028,
    data: {
      object: {
        id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
        object: 'payment_intent',
        amount: 2000,
        amount_capturable: 0,
        amount_received: 2000,
        automatic_payment_methods: { enabled: true },
        capture_method: 'automatic',
        currency: 'usd',
        customer: null,
        description: null,
        latest_charge: 'ch_3MtwBwLkdIwHu7ix28a3tqPa',
        livemode: false,
        metadata: {},
        payment_method: 'pm_1MtwBwLkdIwHu7ixEy1t2Thn',
        payment_method_types: ['card'],
        status: 'succeeded',
      },
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: 'req_nBaxqBFmKBhOXk', idempotency_key: '2d3b7bce-8e4b-4ba1-a9b3-3a7a5cd62ae7' },
    type: 'payment_intent.succeeded',
  };

  it('binds the nested payment intent; the top-level type still binds by name', async () => {
    const response = await post('stripe', JSON.stringify(event));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('paid');
    const sent = peer.requestsTo('/ledger');
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]!.body)).toEqual({ intent: 'pi_3MtwBwLkdIwHu7ix28a3tqPa', amount: '2000', currency: 'usd', customer: 'guest' });
  });

  it('chooses by the event type and runs no task for another one', async () => {
    const before = peer.requestsTo('/ledger').length;
    const response = await post('stripe', JSON.stringify({ ...event, type: 'payment_intent.created' }));
    expect(await response.text()).toBe('ignored payment_intent.created');
    expect(peer.requestsTo('/ledger')).toHaveLength(before);
  });
});

describe('Shopify', () => {
  // An orders/create delivery as Shopify's webhook reference shows it, shortened.
  const order = {
    id: 820982911946154508,
    admin_graphql_api_id: 'gid://shopify/Order/820982911946154508',
    email: 'jon@example.com',
    created_at: '2021-12-31T19:00:00-05:00',
    currency: 'USD',
    financial_status: 'voided',
    name: '#9999',
    total_price: '254.98',
    test: true,
    line_items: [
      {
        id: 866550311766439020,
        admin_graphql_api_id: 'gid://shopify/LineItem/866550311766439020',
        title: 'Aviator sunglasses',
        quantity: 1,
        price: '89.99',
        sku: 'SKU2006-001',
      },
      {
        id: 141249953214522974,
        admin_graphql_api_id: 'gid://shopify/LineItem/141249953214522974',
        title: 'Mid-century lounger',
        quantity: 1,
        price: '159.99',
        sku: 'SKU2006-020',
      },
    ],
    shipping_address: {
      first_name: 'Steve',
      address1: '123 Shipping Street',
      city: 'Shippington',
      zip: '40003',
      country: 'United States',
      name: 'Steve Shipper',
    },
    customer: { id: 115310627314723954, email: 'john@example.com', first_name: 'John', last_name: 'Smith' },
  };

  it('binds the topic and shop from headers and the order from the body', async () => {
    const response = await post('shopify', JSON.stringify(order), {
      'X-Shopify-Topic': 'orders/create',
      'X-Shopify-Shop-Domain': 'example.myshopify.com',
      'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
    });
    expect(response.status).toBe(200);
    const sent = peer.requestsTo('/fulfil');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers['x-topic']).toBe('orders/create');
    expect(JSON.parse(sent[0]!.body)).toEqual({
      shop: 'example.myshopify.com',
      order: 'gid://shopify/Order/820982911946154508',
      email: 'jon@example.com',
      total: '254.98',
      items: 'Aviator sunglasses,Mid-century lounger',
      address: JSON.stringify(order.shipping_address),
    });
  });
});

describe('any JSON body', () => {
  it('binds the top-level scalars of a nested body posted to an endpoint without JSONPath parameters', async () => {
    const response = await post('flat', JSON.stringify({ a: 'x', b: [1, true, 'z'], nested: { c: 1 }, list: [{ d: 1 }], none: null }));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('a=x;b=1,true,z;nested=not bound');
  });

  it('accepts an array or a scalar as the body: nothing binds by name', async () => {
    const response = await post('flat?a=q', '[{"a":"x"}]');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('a=q;b=-;nested=not bound');
    expect(await (await post('flat?a=q', '"text"')).text()).toBe('a=q;b=-;nested=not bound');
  });

  it('refuses malformed JSON with a 400 that says where: line and column', async () => {
    const response = await post('flat', '{\n  "a": "x",\n  "b": }\n');
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toBe("malformed JSON body at line 3, column 8: expected a value, found '}'");
  });

  it('locates an unclosed body at its end', async () => {
    const response = await post('flat', '{"a": "x",\n "b": [1, 2');
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toBe("malformed JSON body at line 2, column 12: expected ',' or ']', found the end of the body");
  });
});

describe('headers', () => {
  /** fetch joins a repeated header into one; node:http sends raw header lines as given. */
  function requestWithHeaders(path: string, rawHeaders: string[]): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      // Raw header lines: node adds no Host of its own then.
      const request = http.request(`${service.url}${path}`, { method: 'GET', headers: ['Host', new URL(service.url).host, ...rawHeaders] }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
      request.on('error', reject);
      request.end();
    });
  }

  it('gives a header sent several times several values, in order', async () => {
    const answer = await requestWithHeaders('/tags', ['X-Tag', 'alpha', 'x-tag', 'beta', 'X-TAG', 'gamma']);
    expect(answer).toEqual({ status: 200, body: 'tags=alpha,beta,gamma;source=none' });
  });

  it('reads a header value as UTF-8: café sent as UTF-8 bytes binds as café, not cafÃ©', async () => {
    // A string of byte-sized characters goes out as those bytes: C3 A9 is é in UTF-8.
    const utf8Bytes = Buffer.from('café ☕', 'utf8').toString('latin1');
    const answer = await requestWithHeaders('/tags', ['X-Tag', utf8Bytes, 'X-Source', 'plain']);
    expect(answer).toEqual({ status: 200, body: 'tags=café ☕;source=plain' });
  });

  it('refuses a header value a parameter reads that is not UTF-8 (a Latin-1 é) with a 400 naming the header', async () => {
    const answer = await requestWithHeaders('/tags', ['X-Tag', 'caf\u00e9']);
    expect(answer.status).toBe(400);
    expect((JSON.parse(answer.body) as { detail: string }).detail).toBe('the x-tag header is not valid UTF-8');
    // A header no parameter reads is not looked at.
    expect((await requestWithHeaders('/tags', ['X-Tag', 'ok', 'X-Other', 'caf\u00e9'])).status).toBe(200);
  });

  it('reads a header on a GET, in any case, and not a query parameter of the same name', async () => {
    const response = await fetch(`${service.url}/tags?tags=query&source=query`, { headers: { 'x-TAG': 'one', 'X-Source': 'crm' } });
    expect(await response.text()).toBe('tags=one;source=crm');
  });
});

describe('a parameter source that does not compile', () => {
  it.each(['invalid-jsonpath--parameter', 'conflicting-parameter-source', 'invalid-header-name'])(
    'keeps serve from starting, located at the attribute: %s',
    async (name) => {
      const file = fileURLToPath(new URL(`../../fixtures/invalid/${name}/endpoints.xml`, import.meta.url));
      const exit = await runServeToExit(file, ['--port', '0']);
      expect(exit.code).toBe(1);
      expect(exit.stdout).not.toContain('listening');
      expect(exit.stderr).toMatch(new RegExp(`endpoints\\.xml:\\d+:\\d+\\s+error\\s+${name.replace(/--.*$/, '')}`));
    },
  );
});
