import { describe, expect, it } from 'vitest';
import { TenantQuotas } from './tenant-quotas.ts';

describe('TenantQuotas', () => {
  it('caps concurrent sessions per tenant, counting reservations, and frees slots on close', () => {
    const quotas = new TenantQuotas({ limits: { default: { maxConcurrentSessions: 2 } } });
    const first = quotas.reserveSession('a');
    const second = quotas.reserveSession('a');
    expect(first.ok && second.ok).toBe(true);
    expect(quotas.reserveSession('a')).toMatchObject({ ok: false, message: expect.stringMatching(/2 concurrent/) });
    expect(quotas.reserveSession('b').ok).toBe(true);
    if (!first.ok || !second.ok) throw new Error('unreachable');
    expect(quotas.openSession('a', 's1', first.ticket).ok).toBe(true);
    expect(quotas.openSession('a', 's2', second.ticket).ok).toBe(true);
    // Without a reservation the slot is still checked.
    expect(quotas.openSession('a', 's3').ok).toBe(false);
    expect(quotas.ownerOf('s1')).toBe('a');
    quotas.closeSession('s1');
    expect(quotas.ownerOf('s1')).toBeUndefined();
    expect(quotas.liveSessions('a')).toBe(1);
    expect(quotas.reserveSession('a').ok).toBe(true);
  });

  it('lets a reservation whose socket never opened lapse', () => {
    let now = 0;
    const quotas = new TenantQuotas({
      limits: { default: { maxConcurrentSessions: 1 } },
      now: () => now,
      reservationMs: 1000,
    });
    expect(quotas.reserveSession('a').ok).toBe(true);
    expect(quotas.reserveSession('a').ok).toBe(false);
    now = 1000;
    expect(quotas.reserveSession('a').ok).toBe(true);
  });

  it('applies per-tenant overrides over the default and leaves absent limits open', () => {
    let now = 0;
    const quotas = new TenantQuotas({
      limits: {
        default: { requests: { perMinute: 60, burst: 1 } },
        tenants: { big: { requests: { perMinute: 60, burst: 5 } } },
      },
      now: () => now,
    });
    expect(quotas.admitRequest('small').ok).toBe(true);
    expect(quotas.admitRequest('small')).toMatchObject({ ok: false, retryAfterMs: 1000 });
    for (let i = 0; i < 5; i++) expect(quotas.admitRequest('big').ok).toBe(true);
    expect(quotas.admitAudioIn('small', 60_000).ok).toBe(true);
    now = 1000;
    expect(quotas.admitRequest('small').ok).toBe(true);
  });
});
