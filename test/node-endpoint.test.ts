// How a node reaches the API (compare's row, planes/node-endpoint.ts): a kubeconfig's server, and
// what answers at its address, given the plane's control-plane hosts. The live reads are in
// compare.test (three planes, one control-plane host each) and lose-host.test (the VIP).
import { describe, expect, it } from 'vitest';
import { classify, hostPort, serverOf } from '../harness/planes/node-endpoint.ts';

const CPS = [
  { name: 'node1', address: '10.90.0.2' },
  { name: 'node2', address: '10.90.0.3' },
  { name: 'node3', address: '10.90.0.4' },
];

describe('node endpoint', () => {
  it("a kubeconfig's server is its current context's cluster's, not the first cluster's", () => {
    const kc = [
      'apiVersion: v1',
      'clusters:',
      '- name: other',
      '  cluster: {server: "https://10.90.0.9:6443"}',
      '- name: lab',
      '  cluster: {server: "https://10.90.0.10:6443"}',
      'contexts:',
      '- name: c',
      '  context: {cluster: lab, user: u}',
      'current-context: c',
    ].join('\n');
    expect(serverOf(kc)).toBe('https://10.90.0.10:6443');
    expect(serverOf('clusters:\n- cluster: {server: "https://localhost:7443"}\n')).toBe(
      'https://localhost:7443',
    );
    expect(hostPort('https://[::1]:7445')).toEqual({ host: '::1', port: '7445' });
  });

  it("a control-plane host's own address is lost with that host when there are others", () => {
    const c = classify('https://10.90.0.2:6443', CPS);
    expect(c.kind).toBe('control-plane host');
    expect(c.target).toMatch(/^node1's own address/);
    expect(c.consequence).toMatch(/lost with node1.*other 2 apiserver/);
    expect(classify('https://10.90.0.2:6443', CPS.slice(0, 1)).consequence).toMatch(
      /only control-plane host/,
    );
  });

  it('an address no control-plane host has is a VIP; a loopback one is a balancer on the node, named by its listener', () => {
    expect(classify('https://10.90.0.10:6443', CPS)).toMatchObject({
      kind: 'shared address',
      target: expect.stringMatching(/^10\.90\.0\.10:6443, no control-plane host's own address/),
    });
    expect(classify('https://localhost:7443', CPS, 'envoy (pid 7)')).toMatchObject({
      kind: 'node-local',
      target: "envoy (pid 7) on the node's localhost:7443",
    });
    expect(classify('https://127.0.0.1:7445', CPS).target).toMatch(/^no listener found/);
  });
});
