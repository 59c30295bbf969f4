// test-mode: unit
// The results store: atomic, write-once evidence; the append-only campaign.log, readable (and
// followable) while it is written; the manifest and its verification.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { EvidenceExistsError, EvidenceStore, followLog, readLogLines, parseLogLine, verifyManifest, assertManifest, EvidenceIntegrityError, readManifest } from '../../lib/evidence';
import { campaignDir, repeatDir, stepFile } from '../../lib/evidence/layout';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-store-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function freshStore(name: string): EvidenceStore {
  return EvidenceStore.forCampaign(name, root);
}

test('files are written atomically and once: same bytes again is a no-op, other bytes are refused', () => {
  const s = freshStore('write-once');
  const file = s.writeJson('spec.json', { name: 'x', n: 1 });
  assert.equal(file, path.join(s.dir, 'spec.json'));
  assert.equal(fs.readFileSync(file, 'utf8'), '{\n  "name": "x",\n  "n": 1\n}\n');
  s.writeJson('spec.json', { name: 'x', n: 1 }); // a retried activity
  assert.throws(() => s.writeJson('spec.json', { name: 'x', n: 2 }), (err: unknown) => err instanceof EvidenceExistsError && /spec\.json already exists/.test(err.message));
  assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).n, 1, 'the first content stays');
  s.writeBytes('repeats/a/r1-a1/blob.bin', Buffer.from([1, 2, 3]));
  assert.deepEqual([...fs.readFileSync(path.join(s.dir, 'repeats/a/r1-a1/blob.bin'))], [1, 2, 3]);
  // no temporary file is left behind
  assert.deepEqual(fs.readdirSync(s.dir).sort(), ['repeats', 'spec.json']);
});

test('a streamed file is committed from its temporary name, and refused over different content', () => {
  const s = freshStore('streamed');
  const rel = `${repeatDir('batched', 1, 1)}/samples.csv.gz`;
  const tmp = s.tempPath(rel);
  assert.equal(path.dirname(tmp), path.dirname(s.path(rel)));
  fs.writeFileSync(tmp, 'partial stream, then complete');
  assert.equal(fs.existsSync(s.path(rel)), false, 'nothing under the final name while it is written');
  s.commit(rel, tmp);
  assert.equal(fs.readFileSync(s.path(rel), 'utf8'), 'partial stream, then complete');
  assert.equal(fs.existsSync(tmp), false);
  const tmp2 = s.tempPath(rel);
  fs.writeFileSync(tmp2, 'another run');
  assert.throws(() => s.commit(rel, tmp2), EvidenceExistsError);
  fs.rmSync(tmp2);
});

test('paths must stay inside the campaign folder; the log and manifest have their own writers', () => {
  const s = freshStore('guards');
  assert.throws(() => s.writeText('../escape.txt', 'x'), /plain relative path/);
  assert.throws(() => s.writeText('/etc/passwd', 'x'), /must be relative/);
  assert.throws(() => s.writeText('a/./b.txt', 'x'), /plain relative path/);
  assert.throws(() => s.writeText('campaign.log', 'x'), /append-only/);
  assert.throws(() => s.writeText('manifest.json', 'x'), /buildManifest/);
  assert.throws(() => campaignDir('../x', root), /cannot name a folder/);
  assert.equal(stepFile(3, 'bring-up'), 'steps/03-bring-up.json');
  assert.throws(() => repeatDir('Bad Name', 1, 1), /cannot name a folder/);
});

test('campaign.log: one parseable line per step start/end, verdict and warning', () => {
  const s = freshStore('log');
  s.logStepStart('provision', '2026-08-16T09:00:00.000Z');
  s.logStepEnd({ step: 'provision', status: 'ok', summary: 'local cluster\nand service' }, '2026-08-16T09:01:00.000Z');
  s.logVerdict(
    {
      configuration: 'batched', index: 2, attempt: 1, runTag: 't', kind: 'sustained', passed: false, reasons: ['dropped: 3 of 100 requests dropped', 'drift: x2'],
      samples: 100, dropped: 3, failed: 0, p50Ms: 3.1, p99Ms: 8.2, worst10sP99Ms: 9, drift: 2, deliveredRate: 999.7, freezeSeconds: 0, windows: 0, reconciled: true, dir: 'repeats/batched/r2-a1', cutShort: false,
    },
    '2026-08-16T09:02:00.000Z',
  );
  s.logWarning('seed settle took 110 s of 120', '2026-08-16T09:03:00.000Z');
  const lines = readLogLines(s.dir);
  assert.equal(lines.length, 4);
  const parsed = lines.map((l) => parseLogLine(l));
  assert.deepEqual(parsed.map((p) => p?.kind), ['step-start', 'step-end', 'verdict', 'warning']);
  assert.equal(parsed[1]?.text, 'provision ok: local cluster / and service', 'a message stays on its line');
  assert.match(parsed[2]!.text, /^sustained batched r2-a1 FAIL p50 3\.1 ms, p99 8\.2 ms, 1000 ev\/s: dropped: 3 of 100/);
});

test('followLog hands over existing lines, then lines appended while it follows, until aborted', async () => {
  const s = freshStore('follow');
  s.appendLog('info', 'before the follower', '2026-08-16T09:00:00.000Z');
  const seen: string[] = [];
  const ac = new AbortController();
  const following = followLog(s.dir, (l) => seen.push(l), ac.signal, { pollMs: 50 });
  const waitFor = async (n: number) => {
    for (let i = 0; i < 100 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 20));
  };
  await waitFor(1);
  s.logStepStart('seed', '2026-08-16T09:00:01.000Z');
  // A line written in two pieces is handed over only once complete.
  fs.appendFileSync(path.join(s.dir, 'campaign.log'), '2026-08-16T09:00:02.000Z info       half');
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(seen.length, 2, 'the half line is held back');
  fs.appendFileSync(path.join(s.dir, 'campaign.log'), ' and the rest\n');
  await waitFor(3);
  ac.abort();
  await following;
  assert.equal(seen.length, 3);
  assert.match(seen[0], /before the follower$/);
  assert.match(seen[1], /step-start seed$/);
  assert.match(seen[2], /half and the rest$/);
  // Without --follow: what is there, then return.
  const once: string[] = [];
  await followLog(s.dir, (l) => once.push(l), undefined, { follow: false });
  assert.equal(once.length, 3);
  await assert.rejects(followLog(path.join(root, 'nope'), () => undefined, undefined, { follow: false }), /does not exist/);
});

test('followLog waits for a log that does not exist yet', async () => {
  const dir = path.join(root, 'not-yet');
  const seen: string[] = [];
  const ac = new AbortController();
  const following = followLog(dir, (l) => seen.push(l), ac.signal, { pollMs: 30 });
  await new Promise((r) => setTimeout(r, 100));
  new EvidenceStore(dir).logStepStart('calibrate', '2026-08-16T09:00:00.000Z');
  for (let i = 0; i < 100 && !seen.length; i++) await new Promise((r) => setTimeout(r, 20));
  ac.abort();
  await following;
  assert.equal(seen.length, 1);
});

test('the manifest lists every evidence file with size and sha256, and names any that changed', async () => {
  const s = freshStore('manifest');
  s.writeJson('spec.json', { a: 1 });
  s.writeText('repeats/x/r1-a1/verdict.json', '{}\n');
  s.writeBytes('repeats/x/r1-a1/samples.csv.gz', Buffer.from('abc'));
  s.logStepStart('report', '2026-08-16T09:00:00.000Z');
  fs.writeFileSync(path.join(s.dir, '.left.tmp-1-dead'), 'crashed writer'); // never listed
  fs.writeFileSync(path.join(s.dir, 'report.md'), '# derived'); // derived, never listed
  const m = await s.buildManifest();
  assert.deepEqual(
    m.files.map((f) => f.path),
    ['campaign.log', 'repeats/x/r1-a1/samples.csv.gz', 'repeats/x/r1-a1/verdict.json', 'spec.json'],
  );
  const abc = m.files.find((f) => f.path.endsWith('samples.csv.gz'))!;
  assert.equal(abc.size, 3);
  assert.equal(abc.sha256, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(m.files[0].append_only, true);
  assert.deepEqual(readManifest(s.dir), m);
  assert.equal((await verifyManifest(s.dir)).ok, true);

  // The log may grow after sealing (a follower, the report step's last line): still verified.
  s.logStepEnd({ step: 'report', status: 'ok', summary: 'written' }, '2026-08-16T09:00:05.000Z');
  assert.equal((await verifyManifest(s.dir)).ok, true);

  // One byte changed in an evidence file: named.
  const f = s.path('repeats/x/r1-a1/samples.csv.gz');
  fs.writeFileSync(f, 'abd');
  let check = await verifyManifest(s.dir);
  assert.equal(check.ok, false);
  assert.deepEqual(check.mismatched, ['repeats/x/r1-a1/samples.csv.gz']);
  await assert.rejects(assertManifest(s.dir), (err: unknown) => err instanceof EvidenceIntegrityError && err.message.includes('repeats/x/r1-a1/samples.csv.gz: sha256'));
  fs.writeFileSync(f, 'abc');

  // Rewriting an early byte of the append-only log is caught too; a removed file is named.
  const log = s.path('campaign.log');
  const text = fs.readFileSync(log, 'utf8');
  fs.writeFileSync(log, text.replace('report', 'rep0rt'));
  fs.rmSync(s.path('spec.json'));
  fs.writeFileSync(path.join(s.dir, 'extra.json'), '{}');
  check = await verifyManifest(s.dir);
  assert.deepEqual(check.mismatched, ['campaign.log']);
  assert.deepEqual(check.missing, ['spec.json']);
  assert.deepEqual(check.unlisted, ['extra.json']);
});

test('a folder without a manifest is refused as unsealed', async () => {
  const s = freshStore('unsealed');
  s.writeJson('spec.json', {});
  await assert.rejects(verifyManifest(s.dir), /manifest\.json is missing: the evidence was never sealed/);
});
