import { describe, expect, it } from 'vitest';
import { acceptsEventStream } from '../../src/serve/accept-header.js';

describe('acceptsEventStream', () => {
  it('streams when text/event-stream is asked for and not ranked below JSON', () => {
    expect(acceptsEventStream('text/event-stream')).toBe(true);
    expect(acceptsEventStream('Text/Event-Stream; charset=utf-8')).toBe(true);
    expect(acceptsEventStream('application/json;q=0.5, text/event-stream')).toBe(true);
  });

  it('answers JSON for wildcards, JSON, a quality of 0, or JSON preferred', () => {
    expect(acceptsEventStream(undefined)).toBe(false);
    expect(acceptsEventStream('*/*')).toBe(false);
    expect(acceptsEventStream('application/json')).toBe(false);
    expect(acceptsEventStream('text/event-stream;q=0, application/json')).toBe(false);
    expect(acceptsEventStream('application/json;q=0.9, text/event-stream;q=0.1')).toBe(false);
  });
});
