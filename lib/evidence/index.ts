// The evidence library: the results store (what activities write), the manifest (what seals it), the
// log follower (`rig campaign logs`), and the report (what is published from it).
export { EvidenceStore } from './store';
export { EvidenceExistsError, writeAtomic, writeOnce, commitOnce, tempNameFor } from './atomic';
export { buildManifest, verifyManifest, assertManifest, readManifest, listEvidenceFiles, EvidenceIntegrityError, type Manifest, type ManifestEntry, type ManifestCheck } from './manifest';
export { followLog, readLogLines, type FollowOptions } from './follow';
export { formatLogLine, parseLogLine, verdictText, type LogKind, type LogLine } from './campaign-log';
export * as layout from './layout';
export * from './records';
export {
  buildReport,
  publishReport,
  renderReport,
  renderJson,
  renderMarkdown,
  renderHtml,
  renderAtAGlanceText,
  resolveCampaignDir,
  compareWithBaseline,
  type ReportModel,
  type ReportFormat,
  type PublishedReport,
  type BaselineComparison,
} from './report';
