// The HttpRequest task kind: calls any HTTP API; its answer can feed intermediate values to
// later tasks, and never reaches the client.

import http from 'node:http';
import https from 'node:https';
import { describeError } from '../../errors.js';
import { TaskError } from '../errors.js';
import type { TaskKind, TaskServices, TextLine } from '../kind.js';
import { HTTP_REQUEST_CHILDREN, compileHttpRequest } from './compile.js';
import { extractOutputs } from './outputs.js';
import { prepareHttpRequest, secretParameters } from './prepare.js';
import { createHttpClient, sendHttpRequest, type HttpClient } from './send.js';
import type { HttpRequestTask, PreparedHttpRequest } from './types.js';
import type { RawBody } from '../../upload.js';
import { SIGNED_HEADERS_SHOWN, webhookId } from './sign.js';
import { outboundPolicy } from './settings.js';

/** What dry-run shows of a forwarded body: its size and type, never its bytes; without --body, only that it is forwarded. */
interface ShownForwardedBody {
  readonly forwarded: 'request-body';
  readonly size?: number;
  readonly contentType?: string;
}

function forwardedBody(received: RawBody | null): ShownForwardedBody {
  return received === null ? { forwarded: 'request-body' } : { forwarded: 'request-body', size: received.size, contentType: received.contentType };
}

export const SECRET_MASK = '***';

interface HttpServices extends TaskServices {
  readonly client: HttpClient;
}

export const httpRequestKind: TaskKind<HttpRequestTask, PreparedHttpRequest, HttpServices> = {
  kind: 'http-request',
  classNames: ['HttpRequest', 'endpoints.task.HttpRequestTask'],
  children: HTTP_REQUEST_CHILDREN,
  hasOutputs: true,
  sendsMail: false,
  deliversLast: false,
  readsUploads: () => false,
  readsRequestBody: (task) => task.body?.kind === 'forward',
  secretParameters,
  compile: compileHttpRequest,
  prepare: (task, scope, request, settings) => prepareHttpRequest(task, scope, settings['http-request'], request.body),

  createServices(options) {
    // Own agents so close() can drop idle keep-alive sockets; the settings are those of Node's
    // global agent, whose idle timeout stays below common server keep-alive timeouts.
    const agentOptions = { keepAlive: true, timeout: 5_000 };
    const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
    return {
      client: createHttpClient({ agent: agents, policy: outboundPolicy(options.settings['http-request']) }),
      async close() {
        agents.http.destroy();
        agents.https.destroy();
      },
    };
  },

  async execute(task, prepared, services, control) {
    const answer = await sendHttpRequest(services.client, prepared, { timeoutMs: task.timeoutMs, retries: task.retries, span: control.span });
    try {
      return { attempts: answer.attempts, outputs: extractOutputs(task.outputs, answer) };
    } catch (error) {
      throw new TaskError(describeError(error), { code: 'output', attempts: answer.attempts, cause: error });
    }
  },

  describe(task, input) {
    const prepared = prepareHttpRequest(task, input.shown, input.settings['http-request'], input.request.body);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(prepared.headers)) headers[name] = prepared.secretHeaders.includes(name) ? SECRET_MASK : value;
    // <sign>: the id as sent; the time and signature are each attempt's own.
    if (task.sign !== null) Object.assign(headers, { 'webhook-id': webhookId(input.shown, task.id), ...SIGNED_HEADERS_SHOWN });
    const body = task.body?.kind === 'forward' ? forwardedBody(input.request.body) : prepared.body;
    const request = { method: prepared.method, url: prepared.url, headers, body };
    const text: TextLine[] = [{ indent: 6, head: request.method, headStyle: 'bold', text: request.url }];
    for (const [name, value] of Object.entries(headers)) text.push({ indent: 6, text: `${name}: ${value}` });
    if (typeof body === 'string') {
      text.push({ indent: 0, text: '' });
      for (const line of body.split(/\r?\n/)) text.push({ indent: 6, text: line });
    } else if (body !== null) {
      text.push({ indent: 0, text: '' });
      text.push({
        indent: 6,
        headStyle: 'dim',
        head: 'the request body, forwarded as received:',
        text: body.size === undefined ? 'its bytes and Content-Type' : `${body.size} bytes, ${body.contentType || 'no Content-Type'}`,
      });
    }
    return { member: 'request', json: request, text };
  },
};
