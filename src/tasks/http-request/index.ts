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
  secretParameters,
  compile: compileHttpRequest,
  prepare: (task, scope, request) => prepareHttpRequest(task, scope, request),

  createServices(options) {
    // Own agents so close() can drop idle keep-alive sockets; the settings are those of Node's
    // global agent, whose idle timeout stays below common server keep-alive timeouts.
    const agentOptions = { keepAlive: true, timeout: 5_000 };
    const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
    return {
      client: createHttpClient({ agent: agents, allowedHosts: options.allowedHosts, denyPrivateAddresses: options.denyPrivateAddresses ?? false }),
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
    const prepared = prepareHttpRequest(task, input.shown, input.request);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(prepared.headers)) headers[name] = prepared.secretHeaders.includes(name) ? SECRET_MASK : value;
    const request = { method: prepared.method, url: prepared.url, headers, body: prepared.body };
    const text: TextLine[] = [{ indent: 6, head: request.method, headStyle: 'bold', text: request.url }];
    for (const [name, value] of Object.entries(headers)) text.push({ indent: 6, text: `${name}: ${value}` });
    if (request.body !== null) {
      text.push({ indent: 0, text: '' });
      for (const line of request.body.split(/\r?\n/)) text.push({ indent: 6, text: line });
    }
    return { member: 'request', json: request, text };
  },
};
