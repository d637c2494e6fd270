import { z } from 'zod';

/**
 * What a credential may do. `realtime` opens sessions and mints client tokens; `admin` manages the
 * keys of its own tenant (the deployment operator's key manages every tenant).
 */
export const SCOPES = ['realtime', 'functions:deploy', 'functions:invoke', 'usage:read', 'admin'] as const;

export const ScopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof ScopeSchema>;

/** Everything a tenant's own service key may do, short of managing keys. */
export const SERVICE_SCOPES: readonly Scope[] = ['realtime', 'functions:deploy', 'functions:invoke', 'usage:read'];

/** Scopes in a stable order without duplicates, so stored records and tokens compare equal. */
export function normalizeScopes(scopes: readonly Scope[]): Scope[] {
  const wanted = new Set(scopes);
  return SCOPES.filter((scope) => wanted.has(scope));
}
