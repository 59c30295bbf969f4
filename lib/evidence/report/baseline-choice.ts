// The line the page gives the baseline the report step chose (baseline.json): which campaign and how
// it was found, or why nothing is compared. A scheduled run with no earlier held run says so rather
// than showing no comparison at all.
import type { ReportModel } from './model-types';
export function baselineChoiceText(m: ReportModel): string | null {
  const c = m.baseline_choice;
  if (!c) return null;
  if (!c.baseline_id) return `Baseline: none. ${capital(c.why)}.`;
  const which = `Baseline: ${c.baseline_id}, ${c.why}`;
  return c.compared ? `${which}.` : `${which}; ${c.problem ?? 'not compared'}.`;
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
