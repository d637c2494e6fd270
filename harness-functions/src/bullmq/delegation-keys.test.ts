import { describe, expect, it } from 'vitest';
import { delegationKeys, jobIdFor } from './delegation-keys.ts';

describe('delegationKeys', () => {
  it('puts the BullMQ queue at <prefix>delegations and everything else under the prefix', () => {
    const keys = delegationKeys('venus:');
    expect(keys.bullPrefix).toBe('venus');
    expect(keys.queueName).toBe('delegations');
    expect(keys.work('w1')).toBe('venus:work:w1');
    expect(keys.events('host-a')).toBe('venus:work-events:host-a');
    expect(keys.sessionSlots('s1')).toBe('venus:inflight:session:s1');
    expect(keys.tenantSlots('acme')).toBe('venus:inflight:tenant:acme');
    expect(keys.cancelChannel).toBe('venus:delegation-cancel');
    expect(delegationKeys('').bullPrefix).toBe('bull');
  });
});

describe('jobIdFor', () => {
  it('keeps ordinary work ids as they are', () => {
    expect(jobIdFor('work_ab12cd34_0_7')).toBe('work_ab12cd34_0_7');
    expect(jobIdFor('007x')).toBe('007x');
  });

  it('encodes ids BullMQ refuses (integers, colons), without collisions between them', () => {
    const ids = ['42', '-3', 'a:b', 'a:b:c', '42:'].map(jobIdFor);
    for (const id of ids) {
      expect(id).toMatch(/^wid_[A-Za-z0-9_-]+$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
