// test-mode: unit
// Evidence belongs to one run (issue 47 item 3; lib/evidence/folder-owner.ts): the run that makes a
// campaign's folder records itself in run.json; the same run opening it again (an activity retried)
// goes on, any other run is refused with nothing written, naming the folder's run and the fix.
// test/campaign/evidence-one-run.test.ts starts one workflow id twice on a real Temporal server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { claimFolder, EvidenceOwnerError, folderRun } from '../../lib/evidence/folder-owner';
import { RUN_FILE, SPEC_FILE } from '../../lib/evidence/layout';
import { EvidenceStore } from '../../lib/evidence/store';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-folder-owner-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const first = { workflow_id: 'nightly-2', run_id: '0193-first' };
const second = { workflow_id: 'nightly-2', run_id: '0193-second' };

/** Every file under the folder with its bytes: what a refused open must leave as it was. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (f.isFile()) out[path.relative(dir, path.join(f.parentPath, f.name))] = fs.readFileSync(path.join(f.parentPath, f.name), 'utf8');
  }
  return out;
}

test('the run that makes the folder owns it; the same run opens it again, another run of the same workflow id is refused', () => {
  const store = EvidenceStore.forCampaign('nightly-2', root);
  assert.equal(claimFolder(store, first), 'made');
  assert.deepEqual(folderRun(store), first);
  store.writeJson(SPEC_FILE, { name: 'x' });
  store.writeJson('repeats/single/r1-a1/verdict.json', { verdict: { passed: true } });
  assert.equal(claimFolder(store, first), 'own', 'an activity retried in the same run finds its own folder');
  const before = snapshot(store.dir);
  assert.throws(
    () => claimFolder(store, second),
    (err: unknown) =>
      err instanceof EvidenceOwnerError &&
      err.message.includes(`belongs to run ${first.run_id} of workflow nightly-2; this is run ${second.run_id} of workflow nightly-2`) &&
      /start this one under another id \(rig campaign start --id NEW, or temporal workflow start --workflow-id NEW\)/.test(err.message),
  );
  assert.deepEqual(snapshot(store.dir), before, 'nothing written by the refused run');
  // Another workflow id that maps to the same folder ("nightly:2" -> "nightly-2") is another run too.
  assert.throws(() => claimFolder(store, { workflow_id: 'nightly:2', run_id: first.run_id }), EvidenceOwnerError);
});

test('a folder opened before run ids were recorded is refused; files put there before any campaign opened it are taken', () => {
  const old = EvidenceStore.forCampaign('opened-by-an-older-build', root);
  old.writeJson(SPEC_FILE, { name: 'x' });
  assert.throws(() => claimFolder(old, first), /holds a campaign opened without a run record .*does not take another run's evidence as its own/);
  assert.equal(old.exists(RUN_FILE), false);

  const prepared = EvidenceStore.forCampaign('prepared', root);
  prepared.writeJson('calibration/calibration.json', { calibrated: true });
  assert.equal(claimFolder(prepared, first), 'made');
});

test('a run record that is not one is refused, naming the file', () => {
  const store = EvidenceStore.forCampaign('garbled', root);
  store.writeText(RUN_FILE, 'not json\n');
  assert.throws(() => claimFolder(store, first), /run\.json is not a run record/);
});
