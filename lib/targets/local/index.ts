// The local target: a rig on this machine (a PostgreSQL cluster the rig makes + the reference service).
import type { Target } from '../target';
import { cleanCheckLocal } from './clean-check';
import { connectionLocal } from './connection';
import { provisionLocal } from './provision';
import { teardownLocal } from './teardown';

export const localTarget: Target = {
  name: 'local',
  provision: provisionLocal,
  teardown: teardownLocal,
  cleanCheck: cleanCheckLocal,
  connection: connectionLocal,
};

export { cleanCheckLocal, connectionLocal, provisionLocal, teardownLocal };
export { restartServiceLocal } from './provision';
export { rigDbUrls } from './connection';
export { storeApiKey, readSecrets } from './secrets';
