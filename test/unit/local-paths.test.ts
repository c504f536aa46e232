import { describe, expect, it } from 'vitest';
import { leavesProject, localPathOf } from '../../src/scan/local-paths.js';

describe('paths in requirement locations', () => {
  it('reads the path of a file URL or a plain path, and none from a remote or VCS URL', () => {
    expect(localPathOf('./libs/pkg')).toBe('./libs/pkg');
    expect(localPathOf('file:///home/me/my%20lib')).toBe('/home/me/my lib');
    expect(localPathOf('file:./wheels')).toBe('./wheels');
    expect(localPathOf('file:///bad%zzpath')).toBe('/bad%zzpath');
    expect(localPathOf('https://example.org/x.whl')).toBeNull();
    expect(localPathOf('git+file:///srv/repo')).toBeNull();
  });

  it('tells a path up from the project, or absolute, from one inside it that merely starts with dots', () => {
    for (const outside of ['..', '../x', './a/../../x', '/srv/x']) expect(leavesProject(outside), outside).toBe(true);
    for (const inside of ['.', './..libs', '..libs/pkg', 'a/../b']) expect(leavesProject(inside), inside).toBe(false);
  });
});
