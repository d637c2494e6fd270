import { describe, expect, it } from 'vitest';
import { clusterLayout, readClusterSettings } from './cluster-settings.ts';

describe('cluster settings', () => {
  it('defaults to two edges, three GPU workers and two harnesses from port 8080', () => {
    const settings = readClusterSettings({});
    expect(settings).toMatchObject({ VENUS_CLUSTER_EDGES: 2, VENUS_CLUSTER_WORKERS: 3, VENUS_CLUSTER_HARNESSES: 2 });
    expect(clusterLayout(settings)).toEqual({
      redisPort: 8110,
      edgePorts: [8080, 8082],
      workerPorts: [8090, 8091, 8092],
      harnessMetricsPorts: [8100, 8101],
    });
  });

  it('puts every process on a free port with base 0, Redis on the one picked for it', () => {
    const settings = readClusterSettings({ VENUS_CLUSTER_PORT: '0', VENUS_CLUSTER_WORKERS: '2' });
    expect(clusterLayout(settings, 6400)).toEqual({
      redisPort: 6400,
      edgePorts: [0, 0],
      workerPorts: [0, 0],
      harnessMetricsPorts: [0, 0],
    });
  });

  it('refuses a bad value with invalid_settings naming the variable', () => {
    expect(() => readClusterSettings({ VENUS_CLUSTER_WORKERS: '0' })).toThrow(/VENUS_CLUSTER_WORKERS/);
    expect(() => readClusterSettings({ VENUS_CLUSTER_PORT: 'eighty' })).toThrow(
      expect.objectContaining({ code: 'invalid_settings' }),
    );
  });
});
