/** Which command reads the application: a few checks have another severity for serve. */
export type CompileMode = 'validate' | 'serve' | 'dry-run';
