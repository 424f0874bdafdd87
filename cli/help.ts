// The parts of help texts that list components, steps or certificates, generated from the component
// registry, wire's phase list and the certificate table, so that a new component or cert shows up
// in --help without anyone editing it.
import { parseInventory } from '../core/inventory/load.ts';
import { allLeaves } from '../core/pki/table.ts';
import { renewableNames } from '../core/certs/catalog.ts';
import { COMPONENT_NAMES } from '../core/components/registry/index.ts';

/** One host of every role: every certificate any inventory can have is in its tables. */
function everyRole() {
  return parseInventory(
    [
      'apiVersion: hardwire/v1',
      'kind: Inventory',
      'cluster: { name: help, serviceCIDR: 10.96.0.0/12, podCIDR: 10.244.0.0/16 }',
      'hosts: [{ name: h, address: 192.0.2.10, roles: [etcd, control-plane, worker] }]',
    ].join('\n'),
    '<help>',
  );
}

/** "a, b, c" wrapped at width, each further line indented. */
export function wrapList(items: readonly string[], indent: string, width = 100): string {
  const lines: string[] = [];
  let line = '';
  for (const [i, item] of items.entries()) {
    const word = `${item}${i < items.length - 1 ? ',' : ''}`;
    if (line && line.length + 1 + word.length > width - indent.length) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join(`\n${indent}`);
}

/** The operator-side leaf ids `hardwire pki <cert-id>` takes (pki/table.ts), kubelet's and kube-proxy's included. */
export function certIds(): string[] {
  return [...new Set(allLeaves(everyRole()).map((l) => l.id))];
}

/** The names `certs renew` takes, in kubeadm's spelling (certs/catalog.ts). */
export function certNames(): string[] {
  return [...renewableNames(everyRole()).keys()];
}

/** The components in the order teardown stops them: the reverse of the registry's start order. */
export function stopOrder(): string[] {
  return [...COMPONENT_NAMES].reverse();
}
