// The planes compare shows, in column order: the three it builds, then `yours`, a running cluster
// it only reads (compare --plane yours=HOSTS, planes/yours.ts). A leaf module, so that types.ts
// and the node section's types (node-types.ts) can both name a plane without importing each other.
export const BUILT_PLANES = ['hardwire', 'kubeadm', 'k0s'] as const;
export const PLANES = [...BUILT_PLANES, 'yours'] as const;
export type PlaneName = (typeof PLANES)[number];

/** The `yours` plane when compare was not given --plane yours=HOSTS. */
export const NOT_ASKED = 'not asked: compare --plane yours=HOSTS reads a cluster of yours';
