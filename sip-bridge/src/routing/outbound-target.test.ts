import { describe, expect, it } from 'vitest';
import { OutboundSchema } from './outbound-config.ts';
import { resolveOutboundTarget } from './outbound-target.ts';

describe('resolveOutboundTarget', () => {
  const outbound = OutboundSchema.parse({ gateway: 'sip:10.0.0.5:5080', username: 'u', password: 'p' });

  it('sends a number through the gateway, with the gateway credentials', async () => {
    const target = await resolveOutboundTarget(outbound, '+1 (555) 010-0');
    expect(target).toEqual({
      uri: 'sip:+15550100@10.0.0.5:5080',
      peer: { protocol: 'udp', address: '10.0.0.5', port: 5080 },
      credentials: { username: 'u', password: 'p' },
    });
  });

  it('refuses what the allow list does not name (by default any sip: URI), and unconfigured outbound', async () => {
    await expect(resolveOutboundTarget(outbound, 'sip:alice@10.0.0.9')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(resolveOutboundTarget(undefined, '+15550100')).rejects.toMatchObject({ code: 'forbidden' });
    const open = OutboundSchema.parse({ allow: ['.*'] });
    await expect(resolveOutboundTarget(open, '+15550100')).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(resolveOutboundTarget(open, 'sip:a@10.0.0.9;transport=tcp')).rejects.toMatchObject({
      code: 'unsupported_feature',
    });
  });
});
