import type { CompileOptions, CompileResult } from './index.js';
export function compileApplication(_file: string, _options: CompileOptions): CompileResult {
  throw new Error('compiler not implemented yet');
}
