import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type AuditPolicy, AuditPolicySchema, AuditReportSchema, evaluateAudit } from './audit-policy.ts';

/** Reports in the shape `npm audit --json` (report version 2) prints, written out by hand for these cases. */
function report(vulnerabilities: Record<string, { severity: string; via: unknown[] }>) {
  return AuditReportSchema.parse({
    auditReportVersion: 2,
    vulnerabilities: Object.fromEntries(
      Object.entries(vulnerabilities).map(([name, v]) => [name, { name, isDirect: false, ...v }]),
    ),
    metadata: {},
  });
}
const advisory = (ghsa: string, severity: string, name: string) => ({
  source: 1100000,
  name,
  title: `${name} flaw`,
  url: `https://github.com/advisories/${ghsa}`,
  severity,
  range: '<1.0.0',
});
const policy = (exceptions: AuditPolicy['exceptions'] = []): AuditPolicy => ({
  failOn: ['high', 'critical'],
  exceptions,
});
const TODAY = '2026-12-03';

describe('audit policy', () => {
  it('fails on a high advisory without an exception, naming it', () => {
    const verdict = evaluateAudit(
      report({ lib: { severity: 'high', via: [advisory('GHSA-aaaa-bbbb-cccc', 'high', 'lib')] } }),
      policy(),
      TODAY,
    );
    expect(verdict.failures).toHaveLength(1);
    expect(verdict.failures[0]).toMatch(/high GHSA-aaaa-bbbb-cccc in lib/);
  });

  it('passes moderate and low advisories with a note', () => {
    const verdict = evaluateAudit(
      report({ lib: { severity: 'moderate', via: [advisory('GHSA-1111-2222-3333', 'moderate', 'lib')] } }),
      policy(),
      TODAY,
    );
    expect(verdict.failures).toEqual([]);
    expect(verdict.notes.join()).toMatch(/below the failing severities/);
  });

  it('a package reached only through another vulnerable one fails on the advisory, once', () => {
    const verdict = evaluateAudit(
      report({
        lib: { severity: 'critical', via: [advisory('GHSA-cccc-dddd-eeee', 'critical', 'lib')] },
        wrapper: { severity: 'critical', via: ['lib'] },
      }),
      policy(),
      TODAY,
    );
    expect(verdict.failures).toHaveLength(1);
  });

  it('an unexpired exception accepts the advisory; on its last day it still holds; after it the run fails', () => {
    const vulnerable = report({ lib: { severity: 'high', via: [advisory('GHSA-aaaa-bbbb-cccc', 'high', 'lib')] } });
    const accepted = policy([
      {
        advisory: 'GHSA-aaaa-bbbb-cccc',
        package: 'lib',
        reason: 'not reachable: only its CLI is affected',
        expires: TODAY,
      },
    ]);
    expect(evaluateAudit(vulnerable, accepted, TODAY).failures).toEqual([]);
    expect(evaluateAudit(vulnerable, accepted, TODAY).notes.join()).toMatch(/accepted until 2026-12-03/);
    const expired = evaluateAudit(vulnerable, accepted, '2026-12-04').failures;
    expect(expired.join()).toMatch(/expired on 2026-12-03/);
  });

  it('an expired exception fails the run even when nothing matches it any more', () => {
    const stale = policy([
      { advisory: 'GHSA-old0-old0-old0', package: 'gone', reason: 'was waiting for a fix', expires: '2026-01-01' },
    ]);
    const verdict = evaluateAudit(report({}), stale, TODAY);
    expect(verdict.failures.join()).toMatch(/GHSA-old0-old0-old0.*expired/);
  });

  it('an exception for another package does not cover the advisory', () => {
    const other = policy([
      { advisory: 'GHSA-aaaa-bbbb-cccc', package: 'other', reason: 'a different dependency', expires: '2027-01-01' },
    ]);
    const verdict = evaluateAudit(
      report({ lib: { severity: 'high', via: [advisory('GHSA-aaaa-bbbb-cccc', 'high', 'lib')] } }),
      other,
      TODAY,
    );
    expect(verdict.failures).toHaveLength(1);
  });

  it("the endpoint's error answer is not a report", () => {
    expect(AuditReportSchema.safeParse({ message: '405 Method Not Allowed', statusCode: 405 }).success).toBe(false);
  });

  it('the committed policy is valid', () => {
    const committed = JSON.parse(readFileSync(new URL('./audit-policy.json', import.meta.url), 'utf8'));
    expect(AuditPolicySchema.safeParse(committed).success).toBe(true);
  });
});
