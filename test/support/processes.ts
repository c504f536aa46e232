import { readFileSync } from 'node:fs';

/** Alive and not a zombie: a process whose parent died may never be reaped by its adopter. */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
