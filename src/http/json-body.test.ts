import { describe, expect, it } from 'vitest';
import { BodyError, parseJsonBody } from './json-body.js';

describe('parseJsonBody', () => {
  it('keeps top-level numbers as the text the client wrote, and remembers them', () => {
    const { fields, numberFields } = parseJsonBody(
      '{"amount": 120.00, "a": 120.0, "b": 120, "c": 0.01, "d": -1.50, "e": 1e2, "f": 1.5E-3}',
    );
    expect(fields).toEqual({ amount: '120.00', a: '120.0', b: '120', c: '0.01', d: '-1.50', e: '1e2', f: '1.5E-3' });
    expect([...numberFields].sort()).toEqual(['a', 'amount', 'b', 'c', 'd', 'e', 'f']);
  });

  it('keeps strings as strings, including ones that look like numbers or contain quotes', () => {
    const body = String.raw`{"amount":"120.00","p":"Pinot \"Noir\" 2019, 12.5%","q":"a\\\"1.0","r":"\u0031\u0032","s":"say \"1\": 2"}`;
    const { fields, numberFields } = parseJsonBody(body);
    expect(fields).toEqual({ amount: '120.00', p: 'Pinot "Noir" 2019, 12.5%', q: 'a\\"1.0', r: '12', s: 'say "1": 2' });
    expect(numberFields.size).toBe(0);
  });

  it('gives nested numbers back as numbers and keeps other nested values', () => {
    const { fields, numberFields } = parseJsonBody(
      '{"o":{"x":1.50,"y":[1,"2",{"z":-3}],"t":true,"n":null},"arr":[0.1,2]}',
    );
    expect(fields).toEqual({ o: { x: 1.5, y: [1, '2', { z: -3 }], t: true, n: null }, arr: [0.1, 2] });
    expect(numberFields.size).toBe(0);
  });

  it('treats top-level null as not sent, and keeps booleans as booleans', () => {
    const { fields } = parseJsonBody('{"a":null,"b":true,"c":false,"d":""}');
    expect(fields).toEqual({ b: true, c: false, d: '' });
  });

  it('keeps unicode and whitespace around tokens', () => {
    const { fields } = parseJsonBody(' \n{ "name" : "葡萄酒 ✓" ,\t"amount" :\r\n 5 } \n');
    expect(fields).toEqual({ name: '葡萄酒 ✓', amount: '5' });
  });

  it.each([
    ['an array', '[{"amount":1}]'],
    ['a string', '"x"'],
    ['a number', '120.00'],
    ['null', 'null'],
    ['true', 'true'],
  ])('refuses %s at the top', (_what, text) => {
    expect(() => parseJsonBody(text)).toThrow(BodyError);
    expect(() => parseJsonBody(text)).toThrow('the body must be a JSON object');
  });

  it.each([
    ['empty', ''],
    ['whitespace', '   '],
    ['truncated', '{"amount":1'],
    ['an unterminated string', '{"a":"abc'],
    ['a trailing comma', '{"a":1,}'],
    ['single quotes', "{'a':'1'}"],
    ['a leading zero', '{"a":01}'],
    ['a bare minus', '{"a":-}'],
    ['a trailing dot', '{"a":1.}'],
    ['a plus sign', '{"a":+1}'],
    ['NaN', '{"a":NaN}'],
    ['a form body', 'a=1&b=2'],
    ['two objects', '{"a":1}{"b":2}'],
  ])('refuses invalid JSON: %s', (_what, text) => {
    expect(() => parseJsonBody(text)).toThrow(BodyError);
  });

  it('refuses a NUL character, raw or escaped, in a value or a field name at any depth', () => {
    expect(() => parseJsonBody('{"a":"x\u0000y"}')).toThrow('NUL');
    expect(() => parseJsonBody(String.raw`{"a":"x\u0000y"}`)).toThrow('NUL');
    expect(() => parseJsonBody('{"a\u0000b":"x"}')).toThrow('NUL');
    expect(() => parseJsonBody(String.raw`{"a\u0000b":"x"}`)).toThrow('NUL');
    expect(() => parseJsonBody(String.raw`{"o":{"\u0000":"x"}}`)).toThrow('NUL');
    expect(() => parseJsonBody(String.raw`{"a\u0000b":1}`)).toThrow('NUL');
  });

  it('cannot be tricked into calling a string a number', () => {
    // The marker used for numbers starts with NUL; a client string must never look like it.
    const { fields, numberFields } = parseJsonBody(String.raw`{"a":"\\u0000#5","b":"#5"}`);
    expect(fields).toEqual({ a: '\\u0000#5', b: '#5' });
    expect(numberFields.size).toBe(0);
    expect(() => parseJsonBody(String.raw`{"product_name":"\u0000#5"}`)).toThrow(BodyError);
  });

  it('refuses a __proto__ field rather than letting it change the parsed object', () => {
    expect(() => parseJsonBody('{"__proto__":{"user_id":"U1"},"amount":"1.00"}')).toThrow(BodyError);
    expect(() => parseJsonBody('{"__proto__":"x"}')).toThrow(BodyError);
    // Nested, it is an ordinary own property.
    const { fields } = parseJsonBody('{"o":{"__proto__":{"polluted":1}}}');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(fields.o as object)).toEqual(['__proto__']);
  });

  it('keeps the last of duplicate names, with its own type', () => {
    expect(parseJsonBody('{"amount":1,"amount":"2.00"}')).toEqual({
      fields: { amount: '2.00' },
      numberFields: new Set(),
    });
    expect(parseJsonBody('{"amount":"2.00","amount":3}')).toEqual({
      fields: { amount: '3' },
      numberFields: new Set(['amount']),
    });
  });

  it('refuses values nested too deeply with its own error, with or without numbers', () => {
    const deep = (inner: string) => `{"a":${'['.repeat(30_000)}${inner}${']'.repeat(30_000)}}`;
    expect(() => parseJsonBody(deep(''))).toThrow(new BodyError('the body is nested more than 32 levels deep'));
    expect(() => parseJsonBody(deep('1'))).toThrow(new BodyError('the body is nested more than 32 levels deep'));
    expect(() => parseJsonBody(`{"a":${'{"b":'.repeat(40)}"x"${'}'.repeat(40)}}`)).toThrow(BodyError);
    expect(parseJsonBody(`{"a":${'['.repeat(20)}"x"${']'.repeat(20)}}`).fields.a).toEqual(
      JSON.parse(`${'['.repeat(20)}"x"${']'.repeat(20)}`),
    );
  });

  it('a body of strings only is parsed once, as JSON.parse reads it', () => {
    const text = '{"user_id":"U1","amount":"120.00","nested":{"list":["a","b"]},"empty":"","gone":null}';
    const { fields, numberFields } = parseJsonBody(text);
    const plain = JSON.parse(text) as Record<string, unknown>;
    delete plain.gone;
    expect(fields).toEqual(plain);
    expect(numberFields.size).toBe(0);
  });

  it('handles a large body of many fields', () => {
    const entries = Array.from({ length: 2000 }, (_, i) => `"f${i}":${i}.5`);
    const { fields, numberFields } = parseJsonBody(`{${entries.join(',')}}`);
    expect(fields.f1999).toBe('1999.5');
    expect(numberFields.size).toBe(2000);
  });
});
