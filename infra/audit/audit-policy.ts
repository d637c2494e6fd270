import { z } from 'zod';

/**
 * The supply-chain policy `npm run audit` applies to `npm audit --omit=dev --json` (SECURITY.md,
 * "Supply chain"): advisories of a failing severity fail the run unless an exception names them,
 * and an exception past its expiry fails the run whether or not it still matches anything.
 */
export const SEVERITIES = ['info', 'low', 'moderate', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const AuditPolicySchema = z.strictObject({
  /** Severities that fail the run. */
  failOn: z.array(z.enum(SEVERITIES)).min(1),
  exceptions: z.array(
    z.strictObject({
      /** The advisory's id: its GHSA id (`GHSA-xxxx-xxxx-xxxx`) or the npm advisory number as text. */
      advisory: z.string().min(1).max(64),
      package: z.string().min(1).max(214),
      /** Why it is accepted for now: not reachable, no fix yet, what would be needed. */
      reason: z.string().min(10).max(1000),
      /** The last day (UTC, YYYY-MM-DD) the exception holds; after it the run fails until it is renewed or removed. */
      expires: z.iso.date(),
    }),
  ),
});
export type AuditPolicy = z.infer<typeof AuditPolicySchema>;

/** One advisory behind a vulnerable package, as npm audit's JSON (report version 2) lists it under `via`. */
const AdvisorySchema = z.looseObject({
  source: z.union([z.number(), z.string()]),
  name: z.string(),
  title: z.string().optional(),
  url: z.string().optional(),
  severity: z.enum(SEVERITIES),
});

/** The part of `npm audit --json` this reads. A report without `vulnerabilities` is not a report. */
export const AuditReportSchema = z.looseObject({
  auditReportVersion: z.literal(2),
  vulnerabilities: z.record(
    z.string(),
    z.looseObject({
      name: z.string(),
      severity: z.enum(SEVERITIES),
      // Entries that are strings name another vulnerable package the advisory reaches through.
      via: z.array(z.union([z.string(), AdvisorySchema])),
    }),
  ),
});
export type AuditReport = z.infer<typeof AuditReportSchema>;

export interface AuditVerdict {
  /** Each reason the run fails; empty when it passes. */
  failures: string[];
  /** What passed but should be known: accepted advisories, exceptions nothing matched. */
  notes: string[];
}

/** The id an exception names an advisory by: its GHSA id when the URL has one, the npm number otherwise. */
export function advisoryId(advisory: z.infer<typeof AdvisorySchema>): string {
  return /GHSA-[\w-]+/i.exec(advisory.url ?? '')?.[0] ?? String(advisory.source);
}

/** Applies the policy to a report on `today` (YYYY-MM-DD, UTC). Pure, so it is unit-tested. */
export function evaluateAudit(report: AuditReport, policy: AuditPolicy, today: string): AuditVerdict {
  const failures: string[] = [];
  const notes: string[] = [];
  const used = new Set<number>();
  for (const exception of policy.exceptions) {
    if (exception.expires < today) {
      failures.push(
        `exception for ${exception.advisory} (${exception.package}) expired on ${exception.expires}: renew it with a reason or remove it`,
      );
    }
  }
  const seen = new Set<string>();
  for (const vulnerability of Object.values(report.vulnerabilities)) {
    for (const via of vulnerability.via) {
      if (typeof via === 'string') continue;
      const id = advisoryId(via);
      const key = `${id} ${vulnerability.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const what = `${via.severity} ${id} in ${vulnerability.name}${via.title ? `: ${via.title}` : ''}`;
      if (!policy.failOn.includes(via.severity)) {
        notes.push(`below the failing severities: ${what}`);
        continue;
      }
      const index = policy.exceptions.findIndex(
        (e) => e.advisory.toLowerCase() === id.toLowerCase() && e.package === vulnerability.name,
      );
      const exception = policy.exceptions[index];
      if (exception === undefined) {
        failures.push(`${what} (${via.url ?? 'no url'}): fix it (npm audit fix, an override) or record an exception`);
        continue;
      }
      used.add(index);
      if (exception.expires >= today) notes.push(`accepted until ${exception.expires}: ${what}: ${exception.reason}`);
    }
  }
  for (const [i, exception] of policy.exceptions.entries()) {
    if (!used.has(i)) notes.push(`exception for ${exception.advisory} (${exception.package}) matches nothing now`);
  }
  return { failures, notes };
}
