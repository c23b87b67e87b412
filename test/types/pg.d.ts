// pg ships no types and @types/pg is not a dependency: the tests use a pool and a query or two.
declare module 'pg';
