import { describe, expect, it } from 'vitest';
import { evaluateMarker, linuxImageEnvironment } from '../../src/scan/markers.js';

const image = linuxImageEnvironment('3.10');

function holds(marker: string, extras: string[] = []): boolean {
  const result = evaluateMarker(marker, image, extras);
  if ('error' in result) throw new Error(result.error);
  return result.value;
}

describe('PEP 508 markers on the linux x86_64 image', () => {
  it('compares Python versions as versions, not strings', () => {
    expect(holds('python_version >= "3.9"')).toBe(true);
    expect(holds('python_version < "3.9"')).toBe(false);
    expect(holds('python_full_version >= "3.10.0"')).toBe(true);
  });

  it('knows the platform of the image, whatever the host is', () => {
    expect(holds('sys_platform == "linux" and platform_machine == "x86_64"')).toBe(true);
    expect(holds("platform_system == 'Windows' or sys_platform == 'darwin'")).toBe(false);
    expect(holds('os_name == "posix" and (sys_platform == "win32" or implementation_name == "cpython")')).toBe(true);
  });

  it('accepts the legacy dotted names pip still accepts', () => {
    expect(holds('sys.platform == "linux"')).toBe(true);
  });

  it('evaluates extra against the extras asked for', () => {
    expect(holds('extra == "gpu"')).toBe(false);
    expect(holds('extra == "gpu"', ['gpu'])).toBe(true);
  });

  it('supports in and not in', () => {
    expect(holds('"linux" in sys_platform')).toBe(true);
    expect(holds('platform_machine not in "arm64 aarch64"')).toBe(true);
  });

  it('reports an unknown variable instead of guessing', () => {
    expect(evaluateMarker('gpu_count > "0"', image)).toEqual({ error: expect.stringContaining('gpu_count') });
  });
});
