/**
 * One line of doctor's report: ok, warning (works, but something is worth knowing) or problem (something will
 * fail), with the fix.
 */

export type CheckStatus = 'ok' | 'warning' | 'problem';

export interface Check {
  id: string;
  status: CheckStatus;
  summary: string;
  fix?: string;
  facts: Record<string, unknown>;
}

export const ok = (id: string, summary: string, facts: Record<string, unknown> = {}): Check => ({
  id,
  status: 'ok',
  summary,
  facts,
});
export const warning = (id: string, summary: string, fix: string, facts: Record<string, unknown> = {}): Check => ({
  id,
  status: 'warning',
  summary,
  fix,
  facts,
});
export const problem = (id: string, summary: string, fix: string, facts: Record<string, unknown> = {}): Check => ({
  id,
  status: 'problem',
  summary,
  fix,
  facts,
});
