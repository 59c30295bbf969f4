// test-mode: unit
// The page names the measure of WAL bytes beside the figure (issue 47, item 5): a wal-bracket.json
// that records `bytes_measure` is pg_stat_wal's wal_bytes (no segment-switch padding); one written
// before issue 47 has none, still renders, and keeps the insert-LSN difference it was shown with, said
// so. A folder with both says how many repeats each measure gave.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildManifest } from '../../lib/evidence';
import { LOAD, MANIFEST_FILE, WAL_BRACKET } from '../../lib/evidence/layout';
import { buildReport, renderHtml, renderMarkdown, type ReportModel } from '../../lib/evidence/report';
import type { WalBracketFile } from '../../lib/evidence/wal-bracket';
import { ONE_CONFIG, makeFixtureCampaign, type Fixture } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-report-walm-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let fx: Fixture;
before(async () => {
  fx = await makeFixtureCampaign({ seed: 11, root, campaignId: 'walm', repeats: 2, repeatSeconds: 20, ...ONE_CONFIG });
});

/**
 * A bracket whose records' bytes are 1,000 B an event and whose insert LSN moved 16 MB more (a segment
 * switch inside the load). `measure`: the field as a file of today writes it; undefined: before issue 47.
 */
function bracket(dir: string, events: number, measure: WalBracketFile['bytes_measure']): WalBracketFile {
  const t0 = Date.parse((JSON.parse(fs.readFileSync(path.join(dir, LOAD), 'utf8')) as { started_at: string }).started_at);
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const lsn0 = 0x3000000;
  const lsn1 = lsn0 + events * 1000 + 16 * 1024 * 1024;
  return {
    start: { t: at(0), lsn: `0/${lsn0.toString(16).toUpperCase()}`, lsn_bytes: lsn0, wal_records: 100, wal_fpi: 0, wal_bytes: 50_000 },
    end: { t: at(20), lsn: `0/${lsn1.toString(16).toUpperCase()}`, lsn_bytes: lsn1 },
    end_stats: { t: at(21.5), wal_records: 100 + events * 7, wal_fpi: 0, wal_bytes: 50_000 + events * 1000 },
    stats_waited_ms: 1500,
    problems: [],
    ...(measure ? { bytes_measure: measure } : {}),
  };
}

/** A copy of the fixture with wal-bracket.json in repeat k as `measures[k - 1]` says, resealed. */
async function withBrackets(name: string, measures: Array<WalBracketFile['bytes_measure'] | 'old'>): Promise<ReportModel> {
  const dir = path.join(root, name);
  fs.cpSync(fx.dir, dir, { recursive: true });
  measures.forEach((m, i) => {
    const rep = path.join(dir, 'repeats/only', `r${i + 1}-a1`);
    const events = (JSON.parse(fs.readFileSync(path.join(rep, 'reconcile.json'), 'utf8')) as { rows_written: number }).rows_written;
    fs.writeFileSync(path.join(rep, WAL_BRACKET), JSON.stringify(bracket(rep, events, m === 'old' ? undefined : m)));
  });
  fs.rmSync(path.join(dir, MANIFEST_FILE));
  await buildManifest(dir);
  return buildReport(dir);
}

/** The "What stops it" row of the configuration (the one cell that says what the bytes are). */
const walCell = (m: ReportModel) => renderMarkdown(m).split('\n').find((l) => l.startsWith('| only |') && l.includes('; bytes: ')) ?? 'no WAL cell naming its measure';

test('a bracket of today: 1,000 B an event from wal_bytes, the measure named beside it, the switched segment not counted', async () => {
  const m = await withBrackets('today', ['wal_bytes (pg_stat_wal)', 'wal_bytes (pg_stat_wal)']);
  assert.deepEqual(m.configurations[0].repeats.map((r) => [r.db?.wal?.bytes_per_event, r.db?.wal?.bytes_measure]), [[1000, 'wal_bytes (pg_stat_wal)'], [1000, 'wal_bytes (pg_stat_wal)']]);
  assert.match(walCell(m), /\| 1,000 B, 7\.0 records, 0\.00 FPI; bytes: wal_bytes \(pg_stat_wal\), the records' own bytes, without segment-switch padding \|/);
  assert.match(renderHtml(m), /bytes: wal_bytes \(pg_stat_wal\), the records' own bytes, without segment-switch padding/);
});

test('a folder from before issue 47 still renders, with its insert-LSN figure and that measure named; a mixed folder counts each', async () => {
  const old = await withBrackets('old', ['old', 'old']);
  // The old measure keeps the figure it was shown with: the records' 1,000 B an event and the 16 MB skipped.
  for (const r of old.configurations[0].repeats) {
    const events = r.db!.wal!.events!;
    assert.equal(r.db?.wal?.bytes_per_event, Math.round(((events * 1000 + 16 * 1024 * 1024) / events) * 10) / 10);
  }
  assert.deepEqual(old.configurations[0].repeats.map((r) => r.db?.wal?.bytes_measure), ['insert LSN difference', 'insert LSN difference']);
  assert.match(walCell(old), /; bytes: insert LSN difference, recorded before issue 47: counts page headers and the rest of a segment a WAL switch skipped \|/);
  const mixed = await withBrackets('mixed', ['old', 'wal_bytes (pg_stat_wal)']);
  assert.match(walCell(mixed), /; bytes: 1 of 2 by insert LSN difference \(recorded before issue 47: .*\), 1 of 2 by wal_bytes \(pg_stat_wal\) \(the records' own bytes, without segment-switch padding\) \|/);
});
