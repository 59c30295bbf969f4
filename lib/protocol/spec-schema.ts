// The JSON Schema of the campaign spec, derived from the zod definition (one source of truth).
import { z } from 'zod';
import { CampaignSpec } from './spec';

export function campaignJsonSchema(): string {
  const schema = z.toJSONSchema(CampaignSpec, { io: 'input', unrepresentable: 'any' });
  return (
    JSON.stringify(
      {
        ...schema,
        $id: 'https://rig.invalid/schema/campaign.schema.json',
        title: 'rig campaign spec',
        description: 'Input of the benchCampaign workflow. Exactly one of "sustained" or "ladder". No secrets belong here.',
      },
      null,
      2,
    ) + '\n'
  );
}
