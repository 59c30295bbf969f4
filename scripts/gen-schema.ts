// Writes schema/campaign.schema.json from the zod spec (lib/protocol/spec.ts), so that editors and
// `temporal workflow start --input-file` users see the same contract the rig validates.
// `npm run schema` regenerates it; a test fails when the checked-in copy is stale.
import fs from 'node:fs';
import path from 'node:path';
import { campaignJsonSchema } from '../lib/protocol/spec-schema';

const out = path.resolve(__dirname, '..', 'schema', 'campaign.schema.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, campaignJsonSchema());
console.log(`wrote ${path.relative(process.cwd(), out)}`);
