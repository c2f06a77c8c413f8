/**
 * The answers' serializer (src/http/serialize.ts) against fastify-type-provider-zod's own, which
 * it replaced: for every schema the server answers with, and for schemas holding what checks
 * differently forward and backward, both give the same text for the same value, or both refuse
 * it with a ResponseSerializationError.
 */
import fc from 'fast-check';
import { isResponseSerializationError, serializerCompiler as libraryCompiler } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { $ZodType } from 'zod/v4/core';
import { checksAlikeBothWays, responseSerializerCompiler } from '../src/http/serialize.js';
import * as schemas from '../src/schemas.js';

type Route = Parameters<typeof libraryCompiler>[0];
const route = (schema: z.ZodType): Route => ({ schema, method: 'GET', url: '/t', httpStatus: '200' }) as Route;

/** What a serializer makes of `value`: its text, that it refused it, or what else it threw (a transform met backward). */
function outcome(serialize: (data: unknown) => string, value: unknown): string {
  try {
    return `text ${serialize(value)}`;
  } catch (e) {
    return isResponseSerializationError(e) ? 'refused' : `threw ${(e as Error).name}`;
  }
}

/** Values shaped like what `schema` accepts, wrong somewhere often enough to test refusals. */
function valuesFor(schema: $ZodType, depth = 0): fc.Arbitrary<unknown> {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  const noise = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant({}), fc.constant([]));
  const inner = (s: unknown) => valuesFor(s as $ZodType, depth + 1);
  let shaped: fc.Arbitrary<unknown>;
  switch (def.type) {
    case 'string': {
      const pattern = (def.checks as { _zod: { def: { pattern?: RegExp } } }[] | undefined)?.map((c) => c._zod.def.pattern).find(Boolean);
      shaped = pattern ? fc.oneof(fc.stringMatching(pattern), fc.string()) : fc.string();
      break;
    }
    case 'number':
      shaped = fc.oneof(fc.integer(), fc.double({ noNaN: false }), fc.constant(2 ** 60));
      break;
    case 'boolean':
      shaped = fc.boolean();
      break;
    case 'literal':
      shaped = fc.constantFrom(...(def.values as unknown[]));
      break;
    case 'enum':
      shaped = fc.constantFrom(...Object.values(def.entries as object));
      break;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'catch':
      shaped = fc.oneof(fc.constant(undefined), fc.constant(null), inner(def.innerType));
      break;
    case 'pipe':
      shaped = fc.oneof(inner(def.in), inner(def.out));
      break;
    case 'array':
      shaped = depth > 3 ? fc.constant([]) : fc.array(inner(def.element), { maxLength: 3 });
      break;
    case 'record':
      shaped = depth > 3 ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 4 }), inner(def.valueType), { maxKeys: 3 });
      break;
    case 'union':
      shaped = fc.oneof(...(def.options as $ZodType[]).map(inner));
      break;
    case 'object': {
      const shape = def.shape as Record<string, $ZodType>;
      const fields = Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, depth > 3 ? noise : inner(s)]));
      shaped = fc
        .tuple(fc.record(fields, { requiredKeys: [] }), fc.dictionary(fc.constantFrom('extra', 'secret', '__proto__x'), fc.string(), { maxKeys: 2 }))
        .map(([known, extra]) => ({ ...extra, ...known }));
      break;
    }
    default:
      shaped = noise;
  }
  return fc.oneof({ weight: 9, arbitrary: shaped }, { weight: 1, arbitrary: noise });
}

/** The same text or the same refusal from both serializers, for values generated from `schema`. */
function agrees(schema: z.ZodType, numRuns = 300): void {
  const ours = responseSerializerCompiler(route(schema) as never);
  const theirs = libraryCompiler(route(schema));
  fc.assert(
    fc.property(valuesFor(schema as unknown as $ZodType), (value) => {
      expect(outcome(ours, value)).toBe(outcome(theirs, value));
    }),
    { numRuns },
  );
}

const answered = Object.entries(schemas).filter((e): e is [string, z.ZodType] => e[1] instanceof $ZodType);

describe('the answers serializer', () => {
  it('checks forward every schema the server answers with (the fast path is the one taken)', () => {
    expect(answered.length).toBeGreaterThan(10);
    for (const [name, schema] of answered) expect([name, checksAlikeBothWays(schema as unknown as $ZodType)]).toEqual([name, true]);
  });

  it.each(answered)('serializes %s as fastify-type-provider-zod does', (_name, schema) => {
    agrees(schema);
  });

  it('encodes, as the library does, schemas that check differently backward', () => {
    const differ: [string, z.ZodType][] = [
      ['a default', z.object({ n: z.number().default(7) })],
      ['a prefault', z.object({ n: z.number().prefault(7) })],
      ['a catch', z.object({ n: z.number().catch(0) })],
      ['a transform', z.object({ s: z.string().transform((s) => s.length) })],
      ['a codec', z.object({ when: z.codec(z.iso.datetime(), z.date(), { decode: (s) => new Date(s), encode: (d) => d.toISOString() }) })],
      ['a discriminated union', z.discriminatedUnion('kind', [z.object({ kind: z.literal('a'), n: z.number() }), z.object({ kind: z.literal('b'), s: z.string() })])],
      ['a kind this file does not know', z.object({ at: z.date() })],
    ];
    for (const [name, schema] of differ) expect([name, checksAlikeBothWays(schema as unknown as $ZodType)]).toEqual([name, false]);
    for (const [, schema] of differ) agrees(schema, 200);
    // A known answer where the directions differ: forward fills a default in; backward (the
    // library's, and so ours) refuses the value that lacks it.
    expect(JSON.stringify(z.parse(differ[0]![1], {}))).toBe('{"n":7}');
    const withDefault = responseSerializerCompiler(route(differ[0]![1]) as never);
    expect(() => withDefault({})).toThrow(/Response doesn't match the schema/);
  });

  it('follows a lazy schema that refers to itself, and strips what no schema names', () => {
    type Tree = { name: string; children: Tree[] };
    const Tree: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(Tree) }));
    expect(checksAlikeBothWays(Tree as unknown as $ZodType)).toBe(true);
    agrees(Tree, 200);
    const serialize = responseSerializerCompiler(route(Tree) as never);
    expect(serialize({ name: 'a', secret: 1, children: [{ name: 'b', children: [], token: 'x' }] })).toBe('{"name":"a","children":[{"name":"b","children":[]}]}');
    expect(() => serialize({ name: 1, children: [] })).toThrow(/Response doesn't match the schema/);
  });
});
