import { describe, expect, it } from 'vitest';
import { acceptsEventStream, chooseResultForm } from '../../src/serve/accept-header.js';

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

describe('chooseResultForm', () => {
  it('sends a media result as bytes when its type or kind is asked for above JSON', () => {
    expect(chooseResultForm('image/png', 'image/png')).toBe('media');
    expect(chooseResultForm('image/*', 'image/png')).toBe('media');
    expect(chooseResultForm('image/*, application/json;q=0.5', 'image/png')).toBe('media');
    expect(chooseResultForm('image/*;q=0.5, application/json', 'image/png')).toBe('json');
    expect(chooseResultForm('image/png;q=0, image/*, application/json;q=0.1', 'image/png')).toBe('json');
  });

  it('keeps JSON the default: no Accept, a wildcard, or JSON named as high', () => {
    expect(chooseResultForm(undefined, 'image/png')).toBe('json');
    expect(chooseResultForm('*/*', 'image/png')).toBe('json');
    expect(chooseResultForm('application/json, image/png', 'image/png')).toBe('json');
    expect(chooseResultForm('image/png, */*;q=0.1', null)).toBe('json');
  });

  it('has nothing to give when neither JSON nor the media type is acceptable', () => {
    expect(chooseResultForm('audio/*', 'image/png')).toBe('none');
    expect(chooseResultForm('image/png', null)).toBe('none');
  });
});
