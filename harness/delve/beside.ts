// A debug kube-apiserver beside the unit's, never in its place: the unit's own flags but its own
// port, its own audit log and no endpoint reconciler (the lease reconciler would take the host's
// address out of the kubernetes Service at start and put its own port in). trace apply and
// flags prove both run it so.

/** The debug instance's port: not the unit's 6443. */
export const DEBUG_PORT = 16443;
/** Flags the debug instance sets itself; the unit's values would collide with the running unit. */
export const OWN = ['secure-port', 'audit-log-path', 'endpoint-reconciler-type'] as const;

/**
 * The debug instance's argv from the unit's (argv[0] the binary), its scratch files under `dir`.
 * An audit log of its own only where the argv writes one (kubeadm's flags write none).
 */
export function besideArgv(unitArgv: string[], dir: string): string[] {
  const audit = unitArgv.some((a) => a.startsWith('--audit-log-path='));
  return [
    `${dir}/kube-apiserver`,
    ...unitArgv.slice(1).filter((a) => !OWN.some((f) => a.startsWith(`--${f}=`))),
    `--secure-port=${DEBUG_PORT}`,
    ...(audit ? [`--audit-log-path=${dir}/audit.log`] : []),
    '--endpoint-reconciler-type=none',
  ];
}
