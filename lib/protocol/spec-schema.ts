// The JSON Schema of the campaign spec, derived from the zod definition (one source of truth for the
// fields and their limits), with a description on every field (spec-docs.ts) and the rules across
// fields that JSON Schema can say: exactly one of sustained or ladder, each target's own block,
// variants and the local block on the local target only, a service built from exactly one of a
// command or an image, fresh variants in blocks. What it cannot say (sums and comparisons across
// fields, the machine's disk, names unique across items, passwords inside URLs) only the CLI refuses:
// test/protocol/spec-schema.test.ts lists those beside the refusals the schema shares.
import { z } from 'zod';
import { CampaignSpec } from './spec';
import { docKey, FIELD_DOCS } from './spec-docs';

type Node = { [k: string]: unknown; properties?: Record<string, Node>; items?: Node; additionalProperties?: Node | boolean; anyOf?: Node[]; oneOf?: Node[]; allOf?: Node[]; description?: string };

/** Calls `visit` on every property of the schema with its path (a.b, a[].b, a.* for a record's values). */
export function eachField(schema: Node, visit: (path: string, node: Node) => void, at = ''): void {
  const join = (k: string) => (at ? `${at}.${k}` : k);
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    visit(join(k), v);
    eachField(v, visit, join(k));
  }
  if (schema.items) eachField(schema.items, visit, `${at}[]`);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    visit(`${at}.*`, schema.additionalProperties);
    eachField(schema.additionalProperties, visit, `${at}.*`);
  }
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) for (const x of schema[k] ?? []) eachField(x, visit, at);
}

const targetIs = (t: string) => ({ properties: { target: { const: t } }, required: ['target'] });

/** The rules across fields that JSON Schema expresses; each says in words what the CLI says. */
const CROSS_FIELD_RULES: Node[] = [
  {
    description: 'Exactly one of "sustained" (gated repeats) or "ladder" (a quick rate sweep).',
    oneOf: [
      { required: ['sustained'], not: { required: ['ladder'] } },
      { required: ['ladder'], not: { required: ['sustained'] } },
    ],
  },
  { description: 'Target "aws" needs an "aws" block; any other target has none.', if: targetIs('aws'), then: { required: ['aws'] }, else: { not: { required: ['aws'] } } },
  { description: 'Target "existing" needs an "existing" block; any other target has none.', if: targetIs('existing'), then: { required: ['existing'] }, else: { not: { required: ['existing'] } } },
  { description: 'The "local" block and "variants" are read with target "local" only.', if: targetIs('local'), else: { not: { anyOf: [{ required: ['local'] }, { required: ['variants'] }] } } },
];

/** service.run: exactly one of command (local) or image (aws); cwd goes with command. */
const RUN_RULES: Node = {
  oneOf: [
    { required: ['command'], not: { required: ['image'] } },
    { required: ['image'], not: { anyOf: [{ required: ['command'] }, { required: ['cwd'] }] } },
  ],
};

/** variants: fresh re-seeds before each variant's block, so it needs order "blocks". */
const FRESH_RULE: Node = { if: { properties: { fresh: { const: true } }, required: ['fresh'] }, then: { properties: { order: { const: 'blocks' } }, required: ['order'] } };

export function campaignJsonSchemaObject(): Node {
  const schema = z.toJSONSchema(CampaignSpec, { io: 'input', unrepresentable: 'any' }) as Node;
  eachField(schema, (p, node) => {
    const doc = FIELD_DOCS[docKey(p)];
    if (doc) node.description = doc;
    if (/(^|\.)run$/.test(p) && node.properties?.command) Object.assign(node, RUN_RULES);
    if (p === 'variants') Object.assign(node, FRESH_RULE);
    // Each rung is named by its rate (rung-<rate>: its folder, its run tags): each rate once.
    if (p === 'ladder.rates') node.uniqueItems = true;
  });
  return {
    $schema: schema.$schema,
    $id: 'https://rig.invalid/schema/campaign.schema.json',
    title: 'rig campaign spec',
    description:
      'Input of the benchCampaign workflow (rig campaign start SPEC.json). Exactly one of "sustained" or "ladder"; each target its own block. No secrets belong here. The CLI also refuses what a schema cannot say: see docs/campaign-spec.md.',
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$schema')),
    allOf: CROSS_FIELD_RULES,
  };
}

export function campaignJsonSchema(): string {
  return JSON.stringify(campaignJsonSchemaObject(), null, 2) + '\n';
}

/** Fields of the schema with no description (the test holds this to []). */
export function undocumentedFields(schema: Node = campaignJsonSchemaObject()): string[] {
  const out: string[] = [];
  eachField(schema, (p, node) => {
    if (!node.description) out.push(p);
  });
  return out;
}
