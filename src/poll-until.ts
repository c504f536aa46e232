/**
 * Resolves once `check` passes, trying every `intervalMs`; stops trying, and never
 * resolves, once `stopped` settles (a process that exited), so race it against that.
 */
export async function pollUntil(check: () => Promise<boolean>, stopped: Promise<unknown>, intervalMs: number): Promise<true> {
  let isStopped = false;
  void stopped.finally(() => (isStopped = true));
  while (!isStopped) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return new Promise(() => undefined);
}
