// CONTRACT: pure, no I/O. Expands an HttpRequest task for one request.
import type { HttpRequestTask } from '../compiler/ast.js';
import type { ExpansionScope } from '../template/expand.js';
import type { PreparedHttpRequest } from './prepared.js';

export function prepareHttpRequest(_task: HttpRequestTask, _scope: ExpansionScope): PreparedHttpRequest {
  throw new Error('not implemented yet');
}
