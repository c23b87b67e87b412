// Public face of the compiler: one call from a path to an Application plus diagnostics.
export type { Diagnostic } from './diagnostics.js';
export type { Severity } from './diagnostic-codes.js';
export { QUOTES_SECRET } from './diagnostic-codes.js';
export type * from './ast.js';
export type * from './options.js';
export type * from '../template/types.js';
export type { Position } from '../position.js';
export { compileApplication } from './compile.js';
