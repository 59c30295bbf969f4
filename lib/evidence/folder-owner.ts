// Evidence belongs to one run (issue 47, item 3). A campaign's folder is named by its workflow id
// (lib/protocol/campaign-id.ts), and a workflow id can be started again once its run has closed
// (`temporal workflow start --workflow-id nightly-2` twice), or two ids can map to one folder name
// ("a:b" and "a-b"). Such a run must never read the earlier run's files as its own: a repeat's
// attempt folder with a verdict.json would be taken as its own judgement. So the run that makes the
// folder writes run.json first (its workflow id and run id), and every open compares: the same run
// (an activity retried, a worker restarted) goes on; another run is refused, naming the folder's run
// and the fix, before anything is written. A folder that has a spec.json but no run.json was opened by
// a build before run ids were recorded: whose it is cannot be told, so it is refused too. One with
// neither was never opened by a campaign (files put there beforehand): it is taken.
// The run is the activity's own (Temporal's run id, not firstExecutionRunId): a workflow retried by a
// retry policy starts over as a new run and would repeat attempt keys (rK-a1) the folder already has,
// so it is refused like a second start. benchCampaign never continues as new; one that did would
// have to hand its folder's run on.
import fs from 'node:fs';
import { EvidenceExistsError } from './atomic';
import { RUN_FILE, SPEC_FILE } from './layout';
import type { EvidenceStore } from './store';

/** run.json: the Temporal run that made the folder. */
export interface FolderRun {
  workflow_id: string;
  run_id: string;
}

/** The folder belongs to another run (or to one that cannot be told): nothing was written. */
export class EvidenceOwnerError extends Error {
  constructor(
    message: string,
    readonly folder: string,
    readonly owner: FolderRun | null,
  ) {
    super(message);
    this.name = 'EvidenceOwnerError';
  }
}

/** Reads run.json, or null when there is none. */
export function folderRun(store: EvidenceStore): FolderRun | null {
  if (!store.exists(RUN_FILE)) return null;
  const text = fs.readFileSync(store.path(RUN_FILE), 'utf8');
  try {
    const v = JSON.parse(text) as Partial<FolderRun>;
    if (typeof v.workflow_id === 'string' && typeof v.run_id === 'string') return { workflow_id: v.workflow_id, run_id: v.run_id };
  } catch {
    /* named below */
  }
  throw new EvidenceOwnerError(`${store.path(RUN_FILE)} is not a run record ({"workflow_id", "run_id"}): whose folder ${store.dir} is cannot be told; move it away or start the campaign under another id`, store.dir, null);
}

const FIX = 'a workflow id names one campaign and its evidence: start this one under another id (rig campaign start --id NEW, or temporal workflow start --workflow-id NEW), or move the earlier folder out of the results folder first';

/**
 * Makes `run` the folder's run, or checks that it is: returns 'made' when this call wrote run.json,
 * 'own' when it was there already for this run. Throws EvidenceOwnerError, having written nothing, when
 * the folder is another run's. Two runs racing for a new folder: run.json is written once (link(2)),
 * so one wins and the other is refused.
 */
export function claimFolder(store: EvidenceStore, run: FolderRun): 'made' | 'own' {
  const mine = { workflow_id: run.workflow_id, run_id: run.run_id };
  let owner = folderRun(store);
  if (!owner) {
    if (store.exists(SPEC_FILE)) {
      throw new EvidenceOwnerError(
        `the evidence folder ${store.dir} holds a campaign opened without a run record (a build before run ids were recorded, or a copy): run ${run.run_id} of workflow ${run.workflow_id} does not take another run's evidence as its own; ${FIX}`,
        store.dir,
        null,
      );
    }
    try {
      store.writeJson(RUN_FILE, mine);
      return 'made';
    } catch (err) {
      if (!(err instanceof EvidenceExistsError)) throw err;
      owner = folderRun(store); // another run wrote it between the look and the write
    }
  }
  if (owner && owner.workflow_id === run.workflow_id && owner.run_id === run.run_id) return 'own';
  throw new EvidenceOwnerError(
    `the evidence folder ${store.dir} belongs to run ${owner?.run_id} of workflow ${owner?.workflow_id}; this is run ${run.run_id} of workflow ${run.workflow_id}, which never takes another run's evidence as its own: ${FIX}`,
    store.dir,
    owner,
  );
}
