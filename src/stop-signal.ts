/**
 * The first SIGTERM or SIGINT, which starts a graceful stop. A second one of either does not
 * wait for it: `onSecond` runs, by default ending the process at once with 130 (the exit code
 * of a process stopped by Ctrl-C), as `svc start` documents for every orchestrator.
 */
export function waitForStopSignal(onSecond: () => void = () => process.exit(130)): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.removeListener('SIGTERM', stop);
      process.removeListener('SIGINT', stop);
      process.once('SIGTERM', onSecond);
      process.once('SIGINT', onSecond);
      resolve(signal);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
