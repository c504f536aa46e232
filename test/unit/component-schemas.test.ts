import { describe, expect, it } from 'vitest';
import { ComponentSchemas } from '../../src/serve/component-schemas.js';

describe("an OpenAPI document's component schemas", () => {
  it("moves a schema's $defs there and points its references at them", () => {
    const components = new ComponentSchemas({ Error: { type: 'object' } });
    const adopted = components.adopt({
      type: 'object',
      properties: { boxes: { type: 'array', items: { $ref: '#/$defs/Box' } } },
      $defs: { Box: { type: 'object', properties: { colour: { $ref: '#/$defs/Colour' } } }, Colour: { enum: ['red'] } },
    });
    expect(adopted).toEqual({ type: 'object', properties: { boxes: { type: 'array', items: { $ref: '#/components/schemas/Box' } } } });
    expect(components.schemas).toEqual({
      Error: { type: 'object' },
      Box: { type: 'object', properties: { colour: { $ref: '#/components/schemas/Colour' } } },
      Colour: { enum: ['red'] },
    });
  });

  it('keeps one entry for a definition seen twice, and renames a different one of the same name', () => {
    const components = new ComponentSchemas({});
    const first = components.adopt({ $ref: '#/$defs/Item', $defs: { Item: { type: 'string' } } });
    const again = components.adopt({ $ref: '#/$defs/Item', $defs: { Item: { type: 'string' } } });
    const other = components.adopt({ $ref: '#/$defs/Item', $defs: { Item: { type: 'integer' } } });
    expect([first, again, other]).toEqual([
      { $ref: '#/components/schemas/Item' },
      { $ref: '#/components/schemas/Item' },
      { $ref: '#/components/schemas/Item2' },
    ]);
    expect(components.schemas).toEqual({ Item: { type: 'string' }, Item2: { type: 'integer' } });
  });

  it('leaves a schema without definitions as it is', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } } };
    expect(new ComponentSchemas({}).adopt(schema)).toBe(schema);
  });
});
