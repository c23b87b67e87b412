// CONTRACT: pure, no I/O (attachments are referenced, not read). Expands an Email task for one request.
import type { EmailSettings, EmailTask } from '../compiler/ast.js';
import type { ExpansionScope } from '../template/expand.js';
import type { Upload } from '../runtime/upload.js';
import type { PreparedEmail } from './prepared.js';

export function prepareEmails(
  _task: EmailTask,
  _scope: ExpansionScope,
  _uploads: readonly Upload[],
  _settings: EmailSettings | null,
): PreparedEmail[] {
  throw new Error('not implemented yet');
}
