// The real targets, for callers that run activity functions in-process rather than through a worker
// (`rig step`, tests that call one activity): each activity file binds its functions to these once.
import { targetFor } from '../lib/targets/registry';
import type { ActivityDeps } from './deps';

export const defaultDeps: ActivityDeps = { targetFor };
