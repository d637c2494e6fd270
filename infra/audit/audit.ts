import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AuditPolicySchema, AuditReportSchema, evaluateAudit } from './audit-policy.ts';

/**
 * `npm run audit`: runs `npm audit --omit=dev --json` and applies infra/audit/audit-policy.json
 * (SECURITY.md, "Supply chain"). Exit 0: no advisory of a failing severity outside an exception,
 * and no exception past its expiry. Exit 1: the policy fails. Exit 2: no audit could be made (the
 * registry or its audit endpoint did not answer with a report, or the policy file is invalid); it
 * says so and never passes silently.
 */
const POLICY_URL = new URL('./audit-policy.json', import.meta.url);

function unavailable(why: string): never {
  process.stderr.write(`npm run audit: NO AUDIT WAS MADE: ${why}\n`);
  process.exit(2);
}

const policy = AuditPolicySchema.safeParse(JSON.parse(readFileSync(POLICY_URL, 'utf8')));
if (!policy.success) unavailable(`infra/audit/audit-policy.json is invalid: ${policy.error.message}`);

const run = spawnSync('npm', ['audit', '--omit=dev', '--json'], { encoding: 'utf8', timeout: 180_000 });
if (run.error) unavailable(`npm audit did not run: ${run.error.message}`);
let parsed: unknown;
try {
  parsed = JSON.parse(run.stdout);
} catch {
  unavailable(`npm audit printed no JSON report (exit ${run.status}): ${run.stderr.trim().slice(0, 500)}`);
}
const report = AuditReportSchema.safeParse(parsed);
if (!report.success) {
  // npm exits non-zero with an { error } or { message, statusCode } object when the endpoint fails.
  const body = parsed as { message?: string; error?: { summary?: string } } | null;
  const detail = body?.message ?? body?.error?.summary ?? run.stderr.trim().slice(0, 500);
  unavailable(`the registry's audit endpoint gave no report: ${detail || 'unrecognised output'}`);
}

const verdict = evaluateAudit(report.data, policy.data, new Date().toISOString().slice(0, 10));
const counted = Object.keys(report.data.vulnerabilities).length;
for (const note of verdict.notes) process.stdout.write(`note: ${note}\n`);
for (const failure of verdict.failures) process.stderr.write(`FAIL: ${failure}\n`);
process.stdout.write(
  `npm run audit: ${counted} vulnerable production packages, failing on ${policy.data.failOn.join('/')}: ` +
    `${verdict.failures.length === 0 ? 'passed' : `${verdict.failures.length} failure(s)`}\n`,
);
process.exit(verdict.failures.length === 0 ? 0 : 1);
