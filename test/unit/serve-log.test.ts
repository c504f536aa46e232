import { describe, expect, it } from 'vitest';
import { relayedLine } from '../../src/cli/serve-log.js';

describe("svc start's log of the service's own output", () => {
  it('escapes what would retitle the terminal, move its cursor or write its clipboard', () => {
    expect(relayedLine('\u001b]0;owned\u0007loading', true)).toBe('\\x1b]0;owned\\x07loading');
    expect(relayedLine('\u001b]52;c;ZXZpbA==\u0007', true)).toBe('\\x1b]52;c;ZXZpbA==\\x07');
    expect(relayedLine('50%\u001b[2K\u001b[1A', true)).toBe('50%\\x1b[2K\\x1b[1A');
    expect(relayedLine('a\rb', false)).toBe('a\\x0db');
  });

  it("keeps a library's colours on a colour terminal and drops them elsewhere, the text as it is", () => {
    const line = '\u001b[32mINFO\u001b[0m model loaded\tin 2 s';
    expect(relayedLine(line, true)).toBe(line);
    expect(relayedLine(line, false)).toBe('INFO model loaded\tin 2 s');
  });
});
