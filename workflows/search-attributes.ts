// The rig's search attributes: how campaigns are found in the Web UI and by `rig campaign list`
// (e.g. `RigStatus = "running" AND RigTarget = "local"`). All keywords. `rig dev up` registers them on
// its own server; on another cluster, `rig` prints the `temporal operator search-attribute create`
// commands that register them.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// The names are listed once more, without Temporal imports, in lib/temporal/search-attributes.ts.
export const RigCampaign = defineSearchAttributeKey('RigCampaign', SearchAttributeType.KEYWORD);
export const RigTarget = defineSearchAttributeKey('RigTarget', SearchAttributeType.KEYWORD);
export const RigStep = defineSearchAttributeKey('RigStep', SearchAttributeType.KEYWORD);
export const RigStatus = defineSearchAttributeKey('RigStatus', SearchAttributeType.KEYWORD);
/** 'yes' or 'no' once the page compared the campaign with a baseline (a scheduled run's, or a pinned one). */
export const RigRegressed = defineSearchAttributeKey('RigRegressed', SearchAttributeType.KEYWORD);

export const RIG_SEARCH_ATTRIBUTES = [RigCampaign, RigTarget, RigStep, RigStatus, RigRegressed];
