// Loaded into a service under test with NODE_OPTIONS=--import: SIGUSR2 throws from a signal
// handler, an uncaught exception as a bug in any callback of the service would raise one.
process.on('SIGUSR2', () => {
  throw new Error('injected fault');
});
