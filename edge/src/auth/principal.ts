import type { SessionUpdateSchema } from '@venus/protocol';
import type { z } from 'zod';
import type { Scope } from './scopes.ts';

/** Settings of a `session.update`, as a client token carries them. */
export type SessionSettings = z.infer<typeof SessionUpdateSchema>['session'];

/**
 * Who a request acts for, once its credential checked out. Every tenant-scoped lookup (keys,
 * sessions, usage) compares against `tenant`; `operator` marks the deployment's bootstrap admin,
 * the one credential that may act on other tenants.
 */
export interface Principal {
  tenant: string;
  scopes: readonly Scope[];
  /** The API key behind the request: its own id, or the one that minted the client token. */
  keyId: string;
  kind: 'api_key' | 'client_token' | 'open';
  operator: boolean;
  /** Session settings a client token carries, applied before the client's first event. */
  session?: SessionSettings;
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes(scope);
}

/** Whether `principal` may act on resources of `tenant`. */
export function mayActOn(principal: Principal, tenant: string): boolean {
  return principal.operator || principal.tenant === tenant;
}
